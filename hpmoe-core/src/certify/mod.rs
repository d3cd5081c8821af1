//! An independent certificate check of a schedule table: does running the table enforce every
//! dependency of the expanded taskflow, and does it run to the end?
//!
//! This is the trusted base of hpmoe. It reads only the instance DAG ([`Expanded`]), the
//! machine profile of the taskflow and the table's entries, and shares no code with the
//! scheduler, the sync reduction or the table builder, so a bug there cannot hide itself here.
//!
//! # Where it runs
//!
//! Before every use of a table: the host executor's constructors (`hpmoe_host::exec::Executor`),
//! `hpmoe_ascendc::Build` (before it writes files), the `#[taskflow]` macro's `Program` (at
//! compile time) and the CPU emulation's launcher (`hpmoe_ascendc::Emulation`, on the blobs it
//! uploads) all refuse a table that fails it. Only the executor and the emulation have an
//! opt-out, named for fault injection, for tests that run tampered tables on purpose. Users run
//! it on any table with [`certify`] (a [`ScheduleTable`](crate::table::ScheduleTable) and its
//! [`FlagPlan`]) or [`certify_blobs`] (the two blobs); [`verify`] is the check itself.
//!
//! # What the table means
//!
//! Every core runs its entries in order. Before an entry's tile, the core waits until counter
//! `c` of its own rank is at least `target`; after the tile it adds 1 to each counter its
//! signals name. Counters start at 0 and only grow. With an optional [`FlagSync`], an AIC also
//! *sets* the hardware flag after some tiles and its own AIVs *wait* on it before some tiles:
//! the AIC's `j`-th set releases each own AIV's `j`-th wait.
//!
//! The table must be for the taskflow: the same machine, and family by family the same name,
//! core kind, grid and instance ids (the device decodes a tile's coordinates from them).
//!
//! # The argument
//!
//! Write `a ⇒ b` ("`a` finishes before `b` starts, in every run") for the edges of the
//! *happens-before graph* `H`:
//!
//! * **core order**: `a` is just before `b` on the same core;
//! * **counter**: `a` signals the counter `b` waits on. This holds for every signaller only if
//!   the target equals the number of signals that can reach the counter (a lower target lets
//!   the wait pass before some signaller finished, a higher one never passes), so
//!   [`verify`] demands exactly that of every wait;
//! * **flag**: `a` does the AIC's `j`-th set and `b` does an own AIV's `j`-th wait.
//!
//! If `H` is acyclic, every entry runs: by induction along a topological order of `H`, each
//! entry's core predecessor finishes and all the signals and sets it waits for are sent. If
//! `H` has a cycle, its entries wait for each other forever. A dependency `u → v` of the DAG is
//! enforced iff `v` is reachable from `u` in `H`.
//!
//! Flags also have a capacity: an AIV's flag holds at most [`FLAG_CAPACITY`] pending sets, so
//! set `j` must happen after each own AIV's wait `j - FLAG_CAPACITY` (that wait's entry must
//! reach the setter in `H`).
//!
//! # How
//!
//! 1. `happens`: read the table into `H`, checking the shape, that every instance is on exactly
//!    one core of its kind, the counter targets and the flag waits on the way.
//! 2. `happens`: a topological order of `H` (Kahn's walk), or the ring that blocks it.
//! 3. `clocks`: a dependency `u → v` that is one edge of `H`, or has `u` before `v` on one core,
//!    is enforced on its face; the others are decided by vector clocks along that order, kept
//!    only for the cores that run their producers, in passes over bands of those cores so that
//!    the clocks fit in [`CLOCK_BUDGET_BYTES`]. The budget changes the number of passes, never
//!    the answer.
//!
//! Cost on the planned DeepSeek-V3 tables (4096 tokens per rank, flags on; `benches/certify_scale.rs`,
//! CPU time on a loaded 2-core machine): EP 8 0.03 s, EP 16 0.1 s, EP 32 0.25–0.3 s (one pass
//! each), EP 64 0.8–1.0 s in 2 passes, peak memory at most ~140 MiB above the resident table;
//! the natural-routing EP 8 table (one 192-row block a slot, 53 824 entries) 0.08 s. (The
//! figures below are the earlier natural table's, three 64-row blocks a slot: at stop 31, reading the table hashed each signal
//! once instead of twice: the natural EP 8 table 0.27–0.38 s before, 0.20–0.32 s after, three
//! alternating pairs on that day's slower machine, each pair 56–64 ms apart. At stop 32, the
//! dependencies the clocks decide are listed once, before the passes, instead of being picked
//! out again in every pass: natural EP 8 0.26 s against 0.28–0.32 s, balanced EP 32 0.32 s against
//! 0.43–0.47 s, alternating pairs.)

mod clocks;
mod entry;
mod error;
mod happens;

pub use entry::{certify, certify_blobs, certify_compiled};
pub use error::{CertDetail, CertError, CertFault, FamilyRecord, Machine, Placed};

use crate::expand::Expanded;
use crate::model::Taskflow;
use crate::schedule::FlagPlan;
use crate::table::TableView;

/// Bytes of vector clocks [`verify`] keeps at a time; it makes as many passes as it needs to
/// stay under it (at least one core's entries per pass, whatever the budget).
pub const CLOCK_BUDGET_BYTES: usize = 128 << 20;

/// Pending sets an AIV's hardware flag holds; one more is a device error.
pub const FLAG_CAPACITY: u32 = 15;

/// The hardware-flag part of a kernel's synchronisation, per global node id (see the
/// [module docs](self)). Both slices have one element per node of the expanded taskflow.
#[derive(Clone, Copy, Debug)]
pub struct FlagSync<'a> {
    /// Per node: an AIC tile that sets its flag (bumping both own AIVs) after it runs.
    pub set_after: &'a [bool],
    /// Per node: the flag waits an AIV does before the tile.
    pub waits_before: &'a [u8],
}

impl<'a> From<&'a FlagPlan> for FlagSync<'a> {
    fn from(plan: &'a FlagPlan) -> Self {
        FlagSync { set_after: plan.set_after.as_slice(), waits_before: plan.waits_before.as_slice() }
    }
}

/// What a certified table was found to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Certificate {
    /// Dependencies of the DAG, all enforced.
    pub dependencies: u64,
    /// Edges of the happens-before graph (core order, counter and flag edges).
    pub happens_before_edges: u64,
    /// Passes the vector clocks took to fit in [`CLOCK_BUDGET_BYTES`].
    pub clock_passes: u32,
}

/// Decides whether `table` enforces every dependency of `exp`, the expansion of `tf`, and runs
/// to the end (see the [module docs](self)); `flags` adds hardware-flag synchronisation.
/// Works on any view, validated or not; never panics on a malformed one. Memory: the table
/// read into `H` (a few tens of bytes per entry and signal), the dependencies the clocks decide
/// (4 bytes each), plus at most about [`CLOCK_BUDGET_BYTES`] of clocks.
///
/// # Errors
/// The first fault found, naming the instances (family, grid coordinates, rank) involved.
pub fn verify(
    tf: &Taskflow,
    exp: &Expanded,
    table: TableView<'_>,
    flags: Option<FlagSync<'_>>,
) -> Result<Certificate, CertError> {
    verify_within(tf, exp, table, flags, CLOCK_BUDGET_BYTES)
}

/// [`verify`] with at most about `clock_budget` bytes of clocks at a time: the same answer
/// whatever the budget (tests use small ones to make many passes).
pub fn verify_within(
    tf: &Taskflow,
    exp: &Expanded,
    table: TableView<'_>,
    flags: Option<FlagSync<'_>>,
    clock_budget: usize,
) -> Result<Certificate, CertError> {
    let graph = happens::Graph::read(tf, exp, table, flags)?;
    let order = graph.order().map_err(|ring| {
        let names = ring.iter().map(|&n| crate::check::node_name(tf, &exp.space, n)).collect();
        CertError::new(ring, CertDetail::Cycle { ring: names })
    })?;
    let swept = clocks::sweep(tf, exp, &graph, &order, clock_budget)?;
    Ok(Certificate {
        dependencies: swept.dependencies,
        happens_before_edges: graph.edges(),
        clock_passes: swept.passes,
    })
}
