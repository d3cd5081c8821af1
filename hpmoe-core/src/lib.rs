//! # hpmoe-core
//!
//! The compiler of hpmoe: a *taskflow* of tile families on AIC (matrix) and AIV (vector and
//! communication) cores is resolved and checked, expanded into tile instances on every rank,
//! checked again, statically scheduled onto the cores, and written out as a *schedule table*
//! that the AscendC backend (`hpmoe-ascendc`) and the host crate (`hpmoe-host`: the simulator,
//! the host executor, the MoE layers) all read. This crate runs nothing: it is what the
//! `#[taskflow]` proc-macro compiles in, and it does not depend on the host crate.
//!
//! Data flows one way:
//! [`model`] → [`resolve`] → [`expand`] → [`check`] → [`schedule`] → [`table`], with
//! [`certify`] checking every table independently; [`cost`] prices tiles for the scheduler,
//! the simulator and the bound alike; [`dsl`] is the vocabulary of `#[taskflow]` functions and
//! the [`dsl::Program`] they compile to, and `syntax` (feature `syntax`) the front-end that
//! reads them, shared by the macro and `hpmoe_ascendc::Build`.
//! [`compile`] runs the whole pipeline and returns every error it found; [`plan`] is the one way
//! hpmoe compiles a taskflow wherever it does (the macro, the build-script API, the main job):
//! one cost model, hardware flags planned before the table is built.
//!
//! One job per module:
//!
//! | module | its job |
//! |---|---|
//! | [`model`] | the IR: profile, tensors, affine expressions, regions, the op registry, tile families, the builder |
//! | [`resolve`] | checks on the taskflow as written (names, arities, shapes, limits, UB/L1 footprint) → a resolved taskflow |
//! | [`expand`] | instance numbering, concrete regions, the dependency DAG and the access hazards |
//! | [`check`] | checks on the expanded DAG and the schedule: ordering of conflicting accesses, cycles, deadlocks, table limits |
//! | [`schedule`] | cost model trait, list scheduling, deadlock proof, sync reduction, counters, hardware-flag plan, lower bound |
//! | [`table`] | the schedule table: build, validate, binary blob, C header, JSON, Rust consts |
//! | [`certify`] | the independent certificate that a table (and its flag plan) enforces every dependency |
//! | [`cost`] | machine cost profiles and tile costs: the [`schedule::CostModel`] the scheduler, the simulator and the bound share |
//! | [`dsl`] | the `#[taskflow]` vocabulary and the [`dsl::Program`] the macro returns |
//! | `syntax` | (feature `syntax`) the front-end: tokens → `model` with spans |
//! | [`ids`] | typed indices: node, core, counter, rank and family ids, [`ids::IdVec`] indexed by one, [`ids::OptId`] for "none" |
//! | [`graph`], [`limits`], [`error`] | compressed adjacency typed by its ids and topological order; the format's and the checks' bounds; [`Diagnostics`] |
//! | `testing` | (feature `testing`) the one generator of random valid taskflows every property test shares |
//!
//! The scheduler's results ([`schedule::Placement`], [`schedule::SyncPlan`]) live in a private
//! module of their own, re-exported by [`schedule`]: [`table`] builds from them without importing
//! the scheduler, whose flag-plan decoder reads a table, so the two modules do not import each
//! other.
//!
//! Only what a user calls is exported: lowering internals, the table blob's offsets and the check
//! helpers the pipeline alone calls are private to the crate.
//!
//! ```
//! use hpmoe_core::model::{CoreKind, DType, MachineProfile, Taskflow};
//!
//! let mut tf = Taskflow::new("scale", MachineProfile::small(2, 2));
//! let x = tf.input("x", DType::Bf16, &[64, 32]);
//! let y = tf.output("y", DType::Bf16, &[64, 32]);
//! tf.tile("copy_rows", CoreKind::Aiv, |t| {
//!     let b = t.grid("b", 4);
//!     t.op("copy", [x.slice(b.clone() * 16, 16), y.slice(b * 16, 16)]);
//! });
//! let compiled = hpmoe_core::compile(&tf, &hpmoe_core::schedule::SimpleCost::default()).unwrap();
//! assert_eq!(compiled.expanded.nodes(), 4 * 2);
//! assert_eq!(compiled.table.entries().len(), 4 * 2);
//! ```

#![warn(missing_docs)]

pub mod certify;
pub mod check;
pub mod cost;
pub mod dsl;
pub mod error;
pub mod expand;
pub mod graph;
pub mod ids;
pub mod limits;
pub mod model;
pub mod resolve;
pub mod schedule;
#[cfg(feature = "syntax")]
pub mod syntax;
pub mod table;
#[cfg(feature = "testing")]
pub mod testing;

pub use error::{Diagnostic, Diagnostics, ErrorKind};

mod pipeline;
mod placement;
mod plan;
mod side_by_side;

/// The README's code blocks run as doctests, so the README cannot go stale.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct ReadmeDoctests;

pub use pipeline::{CompileOptions, Compiled, StageTimes, analyse, compile, compile_with};
pub use plan::{PlanOptions, plan, plan_cost_profile, plan_with};
