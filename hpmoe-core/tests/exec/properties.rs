//! Random valid taskflows through the scheduler and the executor give bitwise the same
//! tensors as the sequential runner, whatever the tile timing — with `run_if_above` guards
//! on some families, whose counts arrive by put from other ranks.

use super::common;
use hpmoe_core::exec::HostTensor;
use hpmoe_core::exec::{Arg, ArgDesc, Executor, Inputs, OpImpls, RefOp, RunOptions, SequentialRunner, SplitMix};
use hpmoe_core::model::{Affine, CoreKind, DType, Guard, Loc, OpSpec, Param, Region, Taskflow, WorkModel};
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

/// A family's guard: `run_if_above(counts.at((a·i0 + RANK) % R), b·i0 + c)` (`i0` is 0
/// for a family without grid).
type GuardSpec = Option<(i64, i64, i64)>;

/// Prepends an `announce` family putting each rank's `count_src[dst]` into `counts[RANK]` on
/// rank `dst`, and guards family `i` with `guards[i]` reading `counts`.
fn with_guards(mut tf: Taskflow, guards: &[GuardSpec]) -> Taskflow {
    let ranks = tf.profile.ranks;
    let count_src = tf.input("count_src", DType::I32, &[u64::from(ranks)]);
    let counts = tf.symmetric("counts", DType::I32, &[u64::from(ranks)]);
    tf.tile("announce", CoreKind::Aiv, |t| {
        let dst = t.grid("dst", u64::from(ranks));
        t.put(count_src.at(dst.clone()), counts.on(dst).at(Affine::rank()));
    });
    tf.families.rotate_right(1); // before every family that reads `counts`
    for (f, g) in tf.families[1..].iter_mut().zip(guards) {
        let Some((a, b, c)) = *g else { continue };
        let i0 = if f.grid.is_empty() { Affine::constant(0) } else { Affine::index(0) };
        let sel = (i0.clone() * a + Affine::rank()).modulo(u64::from(ranks));
        f.guard = Some(Guard { count: counts.at(sel), above: i0 * b + c, loc: Loc::NONE });
    }
    tf
}

/// `count_src` of every rank: values in `0..5`.
fn count_data(tf: &Taskflow, seed: u64) -> Vec<Vec<i32>> {
    let mut rng = SplitMix::new(seed ^ 0xC0);
    (0..tf.profile.ranks).map(|_| (0..tf.profile.ranks).map(|_| (rng.next_u64() % 5) as i32).collect()).collect()
}

/// Instances whose guard fails, from the guards' definition: on rank `r`, `counts[s]` is
/// rank `s`'s `count_src[r]`.
fn expected_skips(tf: &Taskflow, counts: &[Vec<i32>]) -> u64 {
    let mut skipped = 0;
    for rank in 0..tf.profile.ranks {
        for f in &tf.families {
            let Some(g) = &f.guard else { continue };
            let sel = &g.count.dims[0].start;
            let extents: Vec<u64> = f.grid.iter().map(|d| d.extent).collect();
            for i in 0..extents.iter().product::<u64>() {
                let mut coords = vec![0u64; extents.len()];
                let mut rest = i;
                for (c, &e) in coords.iter_mut().zip(&extents).rev() {
                    *c = rest % e;
                    rest /= e;
                }
                let src = sel.eval(&coords, u64::from(rank)).unwrap() as usize;
                let count = i64::from(counts[src][rank as usize]);
                skipped += u64::from(count <= g.above.eval(&coords, u64::from(rank)).unwrap());
            }
        }
    }
    skipped
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
        guards in prop::collection::vec(prop::option::weighted(0.4, (0i64..3, 0i64..3, -1i64..4)), 8),
        seed in any::<u64>(),
        delays in any::<bool>(),
    ) {
        let tf = with_guards(with_folds(spec.build()), &guards);
        let impls = impls();
        let compiled = hpmoe_core::compile(&tf, &SimpleCost::default())
            .map_err(|d| TestCaseError::fail(d.render(&tf.sources)))?;
        let mut inputs = Inputs::random(&tf, seed);
        let counts = count_data(&tf, seed);
        for (rank, c) in (0..).zip(&counts) {
            let bits = c.iter().map(|&v| v as u32).collect();
            inputs.set_rank("count_src", rank, HostTensor::from_bits(DType::I32, &[c.len() as u64], bits));
        }
        let skipped = expected_skips(&tf, &counts);
        let sequential = SequentialRunner::new(&tf, &impls).unwrap().run(&inputs).unwrap();
        prop_assert_eq!(sequential.stats.skipped, skipped);
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
        prop_assert_eq!(run.stats.skipped, skipped);
    }
}
