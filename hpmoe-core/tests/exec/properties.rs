//! Random valid taskflows through the scheduler and the executor give bitwise the same
//! tensors as the sequential runner, whatever the tile timing.

use super::common;
use hpmoe_core::exec::{Arg, ArgDesc, Executor, Inputs, OpImpls, RefOp, RunOptions, SequentialRunner, SplitMix};
use hpmoe_core::model::{CoreKind, OpSpec, Param, Region, Taskflow, WorkModel};
use hpmoe_core::schedule::SimpleCost;
use proptest::prelude::*;
use std::time::Duration;

/// A shape-agnostic stand-in for an op whose arguments do not fit its real shape rules
/// (the generator's "read a whole tensor" pattern): every written element is a fixed
/// linear mix of every element read, summed in argument and element order.
struct Fold;

impl RefOp for Fold {
    fn check(&self, _: &[ArgDesc]) -> Result<(), String> {
        Ok(())
    }

    fn run(&self, args: &[Arg<'_>]) -> Result<(), String> {
        let reads: Vec<Vec<f32>> = args.iter().filter(|a| a.desc().access.reads()).map(Arg::load).collect();
        let total: usize = reads.iter().map(Vec::len).sum();
        for w in args.iter().filter(|a| a.desc().access.writes()) {
            let mut out = vec![0.0f32; w.desc().elements()];
            for (q, o) in out.iter_mut().enumerate() {
                for (i, x) in reads.iter().flatten().enumerate() {
                    *o += x * (((i * 31 + q * 17) % 13) as f32 / 8.0 - 0.75);
                }
                *o /= total.max(1) as f32;
            }
            w.store(&out)?;
        }
        Ok(())
    }
}

fn elements(tf: &Taskflow, r: &Region) -> u64 {
    let shape = &tf.tensor(&r.tensor).expect("generated tensors exist").shape;
    shape.iter().enumerate().map(|(k, &e)| r.dims.get(k).map_or(e, |d| d.len)).product()
}

/// Replaces each op call whose read and write differ in size by its `fold_*` stand-in.
fn with_folds(mut tf: Taskflow) -> Taskflow {
    let folds = [
        ("fold_aic", CoreKind::Aic, vec![Param::read("a"), Param::read("b"), Param::write("c")], WorkModel::Matmul),
        ("fold_aiv", CoreKind::Aiv, vec![Param::read("src"), Param::write("dst")], WorkModel::Copy),
        ("fold_put", CoreKind::Aiv, vec![Param::read("src"), Param::remote_write("dst")], WorkModel::Copy),
    ];
    for (name, core, params, work) in folds {
        tf.ops.register(OpSpec::new(name, core, params, work, "test stand-in")).unwrap();
    }
    let sizes: Vec<Vec<(u64, u64)>> = tf
        .families
        .iter()
        .map(|f| f.body.iter().map(|c| (elements(&tf, &c.args[0]), elements(&tf, c.args.last().unwrap()))).collect())
        .collect();
    for (f, sizes) in tf.families.iter_mut().zip(sizes) {
        for (call, (read, written)) in f.body.iter_mut().zip(sizes) {
            if read != written {
                call.op = match call.op.as_str() {
                    "matmul" => "fold_aic",
                    "put" => "fold_put",
                    _ => "fold_aiv",
                }
                .into();
            }
        }
    }
    tf
}

fn impls() -> OpImpls {
    let mut impls = OpImpls::builtin();
    for name in ["fold_aic", "fold_aiv", "fold_put"] {
        impls.register(name, Fold).unwrap();
    }
    impls
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn random_taskflows_on_the_executor_equal_the_sequential_run(
        spec in common::taskflow_spec(8),
        seed in any::<u64>(),
        delays in any::<bool>(),
    ) {
        let tf = with_folds(spec.build());
        let impls = impls();
        let compiled = hpmoe_core::compile(&tf, &SimpleCost::default())
            .map_err(|d| TestCaseError::fail(d.render(&tf.sources)))?;
        let inputs = Inputs::random(&tf, seed);
        let sequential = SequentialRunner::new(&tf, &impls).unwrap().run(&inputs).unwrap();
        let exec = Executor::new(&tf, &compiled.table, &impls).unwrap();
        let mut options = RunOptions::default();
        if delays {
            options = options.with_tile_hook(move |tile| {
                let r = SplitMix::new(seed ^ u64::from(tile.node)).next_u64();
                if r.is_multiple_of(4) {
                    std::thread::sleep(Duration::from_micros(r % 100));
                }
            });
        }
        let run = exec.run(&inputs, &options).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(run.snapshot.first_difference(&sequential.snapshot), None);
    }
}
