//! The host executor: runs a schedule table on CPU threads with real data, so a schedule
//! can be checked without an NPU.
//!
//! - [`Executor`] runs the table: one worker thread per core (cores with empty lists get
//!   none), every rank in this process with its own tensors ([`memory`]), the table's
//!   counters as atomics ([`counters`]). A worker walks its core's entries in order: wait
//!   until its counter reaches the target (spin briefly, then park), run the tile's ops,
//!   signal. A tile with a `run_if_above` guard ([`Guard`](hpmoe_core::model::Guard)) reads its
//!   count after the wait and runs no op unless the count is above the threshold, but
//!   signals all the same ([`RunStats::skipped`] counts those). A put is a copy into the destination rank's symmetric tensor followed by the
//!   signal, published with `Release` after the data.
//! - Op bodies are Rust reference implementations looked up by op name in an [`OpImpls`]
//!   registry ([`ops`]); users register bodies for their own ops.
//! - Every wait and every tile is bounded by [`RunOptions::timeout`]. A timeout stops every
//!   worker and returns an [`ExecError`] naming the core, tile, counter, expected and seen
//!   values, and the producers that never signalled ([`diagnostics`]). A panicking tile
//!   ends the run with an error naming it; the process and later runs are unaffected.
//!   A run that cannot start says why as data ([`SetupError`]: the checks' diagnostics, every
//!   op without a body or refusing its arguments, what differs between table and taskflow,
//!   the inputs and memory).
//! - [`SequentialRunner`] runs the same tiles in a topological order of the instance DAG on
//!   one thread: the reference a schedule must match bitwise.
//! - [`moe_reference`] computes the MoE taskflow's result with plain loops over tokens and
//!   experts, independently of the taskflow; [`moe_backward_reference`] its gradients. Both
//!   refuse a shape or inputs with a [`ReferenceError`].
//!
//! Results are bitwise reproducible: every op body fixes its summation order, and the
//! MoE combine sums each token's top-k rows in the order the taskflow's regions fix.

pub mod counters;
pub mod diagnostics;
mod executor;
mod flags;
pub mod memory;
pub mod moe_backward_reference;
pub mod moe_reference;
pub mod ops;
mod options;
mod program;
mod reference_error;
mod sequential;
mod setup;
pub mod tensor;
mod workers;

pub use diagnostics::{
    ExecError, FailureCause, MissingSignal, ProducerState, RunFailure, StuckWait, TileError, TileFailure,
    TimeoutReport, WorkerFailure,
};
pub use executor::{Executor, RunOutput, RunStats};
pub use memory::{Inputs, Snapshot};
pub use ops::{Arg, ArgDesc, IndexAt, Item, OpError, OpImpls, OutOfRange, Per, RefOp, ShapeMismatch, UserOpProblem};
pub use options::{RunOptions, TileHook, TileInfo};
pub use reference_error::{ReferenceError, SlotProblem};
pub use sequential::SequentialRunner;
pub use setup::{FamilyShape, FlagPlanMismatch, MemoryError, OpProblem, SetupError, TableDifference, TableMismatch};
pub use tensor::HostTensor;
