//! Test support (feature `testing`): the host side of the random taskflows of
//! [`hpmoe_core::testing`] — the reference body of the fold ops, the input data with the guards'
//! counts, and how many guarded instances that data skips. Not for production use.
//!
//! ```
//! use hpmoe_core::testing::taskflow_spec;
//! use hpmoe_host::exec::{Executor, RunOptions, SequentialRunner};
//! use hpmoe_host::testing;
//! use proptest::strategy::{Strategy, ValueTree};
//! use proptest::test_runner::TestRunner;
//!
//! let spec = taskflow_spec(6).new_tree(&mut TestRunner::deterministic()).unwrap().current();
//! let tf = spec.taskflow();
//! let compiled = hpmoe_core::plan(&tf).unwrap();
//! let inputs = testing::inputs(&tf, 7);
//! let reference = SequentialRunner::new(&tf, &testing::op_impls()).unwrap().run(&inputs).unwrap();
//! let exec = Executor::for_compiled(&tf, &compiled, &testing::op_impls()).unwrap();
//! let run = exec.run(&inputs, &RunOptions::default()).unwrap();
//! assert_eq!(run.snapshot.first_difference(&reference.snapshot), None);
//! assert_eq!(run.stats.skipped, testing::expected_skips(&tf, 7));
//! ```

use crate::exec::{Arg, ArgDesc, HostTensor, Inputs, OpError, OpImpls, RefOp};
use crate::rng::SplitMix;
use hpmoe_core::model::{DType, Taskflow};
use hpmoe_core::testing::{COUNT_SRC, FOLD_OPS};

/// The reference implementation of every fold op: each written element is a fixed linear mix of
/// every element read, summed in argument and element order, divided by the number of elements
/// read.
#[derive(Clone, Copy, Debug, Default)]
pub struct Fold;

impl RefOp for Fold {
    fn check(&self, _: &[ArgDesc]) -> Result<(), OpError> {
        Ok(())
    }

    fn run(&self, args: &[Arg<'_>]) -> Result<(), OpError> {
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

/// The built-in reference ops and [`Fold`] under every fold op's name.
pub fn op_impls() -> OpImpls {
    let mut impls = OpImpls::builtin();
    for name in FOLD_OPS {
        impls.register(name, Fold).expect("fold names are free");
    }
    impls
}

/// `count_src` of every rank for data seed `seed`: values in `0..5`.
pub fn count_data(tf: &Taskflow, seed: u64) -> Vec<Vec<i32>> {
    let mut rng = SplitMix::new(seed ^ 0xC0);
    (0..tf.profile.ranks).map(|_| (0..tf.profile.ranks).map(|_| (rng.next_u64() % 5) as i32).collect()).collect()
}

/// Random data for every input of `tf` ([`Inputs::random`]) with `count_src` from [`count_data`].
pub fn inputs(tf: &Taskflow, seed: u64) -> Inputs {
    let mut inputs = Inputs::random(tf, seed);
    for (rank, c) in (0..).zip(count_data(tf, seed)) {
        let bits = c.iter().map(|&v| v as u32).collect();
        inputs.set_rank(COUNT_SRC, rank, HostTensor::from_bits(DType::I32, &[c.len() as u64], bits));
    }
    inputs
}

/// The instances whose guard fails on data seed `seed`, from the guards' definition alone: on
/// rank `r`, `counts[s]` is rank `s`'s `count_src[r]`.
pub fn expected_skips(tf: &Taskflow, seed: u64) -> u64 {
    let counts = count_data(tf, seed);
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
                let src = sel.eval(&coords, u64::from(rank)).expect("guards of generated taskflows evaluate") as usize;
                let count = i64::from(counts[src][rank as usize]);
                let above = g.above.eval(&coords, u64::from(rank)).expect("guards of generated taskflows evaluate");
                skipped += u64::from(count <= above);
            }
        }
    }
    skipped
}
