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
//! use hpmoe_core::testing::taskflow_spec;
//! use proptest::strategy::{Strategy, ValueTree};
//! use proptest::test_runner::TestRunner;
//!
//! let spec = taskflow_spec(6).new_tree(&mut TestRunner::deterministic()).unwrap().current();
//! let tf = spec.taskflow();
//! let compiled = hpmoe_core::plan(&tf).unwrap();
//! assert_eq!(compiled.table.entries().len(), compiled.expanded.nodes());
//! ```
//!
//! The data and op bodies that run these taskflows on the host — input data with the guards'
//! counts, the fold ops' reference body, the number of instances the guards skip — are the host
//! crate's: `hpmoe_host::testing` (its feature `testing`, which turns this one on).

pub mod folds;
pub mod guards;
pub mod profile;
pub mod spec;

pub use folds::{FOLD_OPS, has_folds, with_folds};
pub use guards::{COUNT_SRC, GuardSpec, with_guards};
pub use profile::round_profile;
pub use spec::{ChainSpec, FamilySpec, PutPattern, ReadPattern, TaskflowSpec, family_spec, taskflow_spec};
