//! Test support (feature `testing`): the one generator of random valid taskflows that hpmoe's
//! property tests share — the scheduler's, the simulator's, the host executor's, the end-to-end
//! test's and the AscendC backend's. Not for production use.
//!
//! A [`TaskflowSpec`] (drawn from [`taskflow_spec`]) is a recipe: 1–4 ranks, families on AICs
//! (matmuls) and AIVs (copies, accumulations, weighted sums, puts across ranks into symmetric
//! tensors, to a shifted rank or to every rank), grids of 0–2 dimensions, reads of earlier
//! families' rows by random affine maps or of whole tensors (weighted sums, or folds where no
//! built-in op fits), explicit `after`s, chains of a family's instances (`after(f(i - 1))`), and
//! `run_if_above` guards
//! whose counts arrive by put. Every taskflow it builds passes hpmoe's checks; a failing check is
//! a bug in hpmoe or in the generator, never an expected outcome.
//!
//! ```
//! use hpmoe_core::exec::{Executor, RunOptions, SequentialRunner};
//! use hpmoe_core::testing::{self, taskflow_spec};
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

pub mod folds;
pub mod guards;
pub mod spec;

pub use folds::{Fold, has_folds, op_impls, with_folds};
pub use guards::{count_data, expected_skips, inputs, with_guards};
pub use spec::{ChainSpec, FamilySpec, GuardSpec, PutPattern, ReadPattern, TaskflowSpec, family_spec, taskflow_spec};
