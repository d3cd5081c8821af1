//! The whole pipeline: check → expand → check → schedule → prove → synchronise → table.

use crate::check;
use crate::error::Diagnostics;
use crate::expand::{self, Expanded};
use crate::ids::{IdVec, NodeId};
use crate::model::Taskflow;
use crate::resolve;
use crate::schedule::flags::{self, FlagPlan, FlagPolicy};
use crate::schedule::{self, CostModel, Placement, SyncPlan};
use crate::side_by_side::{WORTH_A_THREAD_FROM, both};
use std::time::{Duration, Instant};

/// Wall-clock time of each stage, for benchmarks.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StageTimes {
    /// Structural checks of the families ([`crate::resolve::check_structure`]) and the buffer
    /// footprint check.
    pub structure: Duration,
    /// Expanding the families into instances and their dependency DAG ([`crate::expand`]).
    pub expand: Duration,
    /// The DAG's cycle check and the write-after-read / write-after-write ordering checks.
    pub order_checks: Duration,
    /// List scheduling ([`crate::schedule::list_schedule`]), until the placement is known. On
    /// a large taskflow the stages after it start alongside its improvement rounds (on a second
    /// thread, on the first pass's placement), so this and their times may overlap.
    pub list_schedule: Duration,
    /// The deadlock proof of the per-core orders, and before it finding the pacing
    /// dependencies and adding them to a copy of the DAG ([`Compiled::pacing`]).
    pub deadlock_proof: Duration,
    /// Sync planning: the reduction of implied edges, then one counter per waiting node. On a
    /// large taskflow the counters are built while flags are planned (on a second thread), so
    /// this and `table` may overlap.
    pub sync: Duration,
    /// Flag planning, building the table and encoding the flag plan.
    pub table: Duration,
}

impl StageTimes {
    /// The sum of all stages (more than the wall-clock time when stages overlapped).
    pub fn total(&self) -> Duration {
        self.structure
            + self.expand
            + self.order_checks
            + self.list_schedule
            + self.deadlock_proof
            + self.sync
            + self.table
    }
}

/// A checked, scheduled taskflow: its one schedule table and its one flag plan.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// The instance DAG and everything the later stages read of the expansion.
    pub expanded: Expanded,
    /// Where and in which order every instance runs, and its estimated times.
    pub placement: Placement,
    /// The counter plan of every kept cross-core dependency, before flag planning (the table holds
    /// it without the dependencies `flags` carries).
    pub sync: SyncPlan,
    /// Which dependencies the AIC → own-AIV hardware flag carries instead of a counter.
    pub flags: FlagPlan,
    /// The schedule table every consumer runs: the kernel, the host executor (with `flags`).
    pub table: crate::table::ScheduleTable,
    /// The flag plan's binary form (`NAME_flags.bin`), naming `table`'s checksum.
    pub flags_bin: Vec<u8>,
    /// The dependencies `(u, v)` the schedule added to the taskflow's own (`expanded.dag`), which
    /// `sync` and `table` enforce as well: between puts of different ranks into one receiver, in
    /// the order the plan has them land, when the layer's link lanes go by send round (receiver
    /// pacing: the README's "Receivers paced"). Each holds in
    /// `placement` already (`u` finishes before `v` starts), so they never move the plan, only
    /// the run. Empty for most taskflows.
    pub pacing: Vec<(NodeId, NodeId)>,
    /// How long each stage took (wall clock on this host: for benchmarks, not for results).
    pub times: StageTimes,
}

/// What [`compile_with`] does beyond the cost model.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CompileOptions {
    /// Whether (and with which id) dependencies from an AIC to its own AIVs use the hardware flag.
    pub flags: FlagPolicy,
}

impl CompileOptions {
    /// Every dependency on a counter: no hardware flag.
    pub fn without_flags() -> Self {
        CompileOptions { flags: FlagPolicy { enabled: false, ..FlagPolicy::default() } }
    }
}

/// Runs the whole pipeline without hardware flags (every dependency on a counter): checks,
/// expansion, scheduling under `cost`, the deadlock-freedom proof, synchronisation and the
/// schedule table. Returns every error found. See [`compile_with`] for the flag plan, and
/// [`crate::plan`] for the one plan a taskflow gets wherever hpmoe compiles it.
pub fn compile(tf: &Taskflow, cost: &dyn CostModel) -> Result<Compiled, Diagnostics> {
    compile_with(tf, cost, &CompileOptions::without_flags())
}

/// [`compile`] with `options`: with flags enabled, flag planning runs after synchronisation and
/// before the table is built, so the table and the flag plan belong together.
pub fn compile_with(tf: &Taskflow, cost: &dyn CostModel, options: &CompileOptions) -> Result<Compiled, Diagnostics> {
    compile_checked(tf, Checked::new(tf), cost, options)
}

/// The structural checks of a taskflow ([`resolve::check_structure`]) and how long they took:
/// run once, by whoever needs them first ([`crate::plan_with`] picks the cost model by them).
pub(crate) struct Checked<'a> {
    /// The taskflow with its names resolved, or the structural errors.
    pub(crate) structure: Result<resolve::Resolved<'a>, Diagnostics>,
    time: Duration,
}

impl<'a> Checked<'a> {
    /// Runs the structural checks of `tf`.
    pub(crate) fn new(tf: &'a Taskflow) -> Self {
        let t = Instant::now();
        let structure = resolve::check_structure(tf);
        Checked { structure, time: t.elapsed() }
    }
}

/// [`compile_with`] of a taskflow whose structural checks have run (`checked`, of `tf`).
pub(crate) fn compile_checked(
    tf: &Taskflow,
    checked: Checked<'_>,
    cost: &dyn CostModel,
    options: &CompileOptions,
) -> Result<Compiled, Diagnostics> {
    let (expanded, order, mut times) = analyse_checked(tf, checked)?;

    // The ordering checks' topological order serves the scheduler's priorities and lower
    // bound too (one order per plan, not three).
    let scheduled = schedule::list::list_schedule_then(
        &expanded,
        &order,
        &tf.profile,
        cost,
        OVERLAP_FROM,
        |placement, receivers| after_scheduling(tf, &expanded, placement, receivers, options),
    );
    drop(order);
    let schedule::list::Scheduled { placement, then, schedule_time } = scheduled;
    let after = then?;
    // Wall clock until the placement was known; the later stages' own times (which overlap
    // it when they ran alongside improvement).
    times.list_schedule = schedule_time;
    times.deadlock_proof = after.times.deadlock_proof;
    times.sync = after.times.sync;
    times.table = after.times.table;
    let AfterScheduling { sync, flags: plan, table, flags_bin, pacing, .. } = after;
    Ok(Compiled { expanded, placement, sync, flags: plan, table, flags_bin, pacing, times })
}

/// From this many instances on, the stages after scheduling run on a second thread on the
/// first pass's placement while forward-backward improvement runs (see
/// [`schedule::list::list_schedule_then`]): the same plan, sooner on two cores, at the cost of
/// CPU time thrown away when a round does win. Below it the stages are short, and the largest
/// flagship taskflows the `#[taskflow]` macro plans (the natural-routing one: 53 824 instances)
/// stay below it, so a user's build spends no CPU on it.
const OVERLAP_FROM: usize = 1 << 19;

/// What the stages after scheduling make of a placement.
struct AfterScheduling {
    sync: SyncPlan,
    flags: FlagPlan,
    table: crate::table::ScheduleTable,
    flags_bin: Vec<u8>,
    /// The pacing dependencies the stages enforced besides the DAG's ([`Compiled::pacing`]).
    pacing: Vec<(NodeId, NodeId)>,
    /// The deadlock proof's, sync planning's and the table's times; the others are zero.
    times: StageTimes,
}

/// The deadlock proof, synchronisation, flag planning and the table of `placement`: a
/// function of the placement alone (for [`schedule::list::list_schedule_then`]). With
/// `receivers`, the stages work on the DAG with the pacing dependencies of `placement` added
/// (`schedule::pacing`): the table enforces them as well as the taskflow's own.
fn after_scheduling(
    tf: &Taskflow,
    expanded: &Expanded,
    placement: &Placement,
    receivers: Option<&schedule::pacing::Receivers>,
    options: &CompileOptions,
) -> Result<AfterScheduling, Diagnostics> {
    let mut times = StageTimes::default();
    let t = Instant::now();
    let pacing = receivers.map_or_else(Vec::new, |r| r.edges(expanded, placement));
    let paced = (!pacing.is_empty()).then(|| schedule::pacing::with_edges(expanded, &pacing));
    let expanded = paced.as_ref().unwrap_or(expanded);
    let proved = match schedule::proof::prove_with_order(&expanded.dag, &placement.queues) {
        Ok(proved) => proved,
        Err(cycle) => {
            // The list scheduler never produces this; the proof is the guard that says so.
            let mut d = Diagnostics::default();
            d.push(check::deadlock_error(tf, &expanded.space, &cycle));
            return Err(d);
        }
    };
    times.deadlock_proof = t.elapsed();

    let t = Instant::now();
    // The reduction visits the order the proof found acyclic (the same order it would build).
    let kept = schedule::counters::kept_consumers(expanded, placement, &proved);
    drop(proved);
    times.sync = t.elapsed();

    // The counters of every kept dependency (`Compiled::sync`, checked against the device's
    // limits), and the flag plan: two functions of the kept dependencies, so on a large
    // schedule planned side by side. The counters of the dependencies the flags leave (the
    // table's, when they flag some) are then an edit of the first.
    let before_flags = || {
        let t = Instant::now();
        let sync = schedule::counters::counters_of(expanded, &kept.consumers, kept.cross_edges_before);
        let limits = check::check_table_limits(tf, expanded, placement, &sync);
        (sync, limits, t.elapsed())
    };
    let with_flags = || {
        let t = Instant::now();
        let plan = flags::plan_flags_of(expanded, placement, &kept.consumers, &tf.profile, &options.flags);
        (plan, t.elapsed())
    };
    // No work is repeated: the two only share the kept dependencies they read.
    let side_by_side = expanded.nodes() >= WORTH_A_THREAD_FROM && options.flags.enabled;
    let ((sync, limits, counters_time), (plan, flags_time)) = both(side_by_side, before_flags, with_flags);
    drop(kept);
    times.sync += counters_time;
    limits.into_result(())?;
    let plan = plan.map_err(|e| {
        let mut d = Diagnostics::default();
        d.push(crate::error::Diagnostic::new(crate::error::ErrorKind::Internal, tf.loc, e.to_string()));
        d
    })?;

    let t = Instant::now();
    // The plan is `sync` itself when no dependency is flagged.
    let flagged_out = (!plan.edges.is_empty()).then(|| flags::without_flagged_counters(expanded, &sync, &plan));
    let counters = flagged_out.as_ref().unwrap_or(&sync);
    let names: Vec<String> = tf.families.iter().map(|f| f.name.clone()).collect();
    let table = crate::table::ScheduleTable::try_build(&tf.name, &tf.profile, &names, expanded, placement, counters)
        .map_err(|e| {
            // The checks before this point make the table valid; this is a bug, reported
            // as an error rather than a panic inside a user's build.
            let mut d = Diagnostics::default();
            d.push(crate::error::Diagnostic::new(
                crate::error::ErrorKind::Internal,
                tf.loc,
                format!("internal error: the schedule table of `{}` is inconsistent: {e}; please report this", tf.name),
            ));
            d
        })?;
    let flags_bin = flags::plan_bytes(&plan, &placement.queues, &tf.profile, table.checksum());
    times.table = flags_time + t.elapsed();
    Ok(AfterScheduling { sync, flags: plan, table, flags_bin, pacing, times })
}

/// Checks a taskflow and expands it into its instance DAG.
///
/// Every error found is returned together: structural errors first (if there are any, the
/// taskflow is not expanded), then tiles whose buffer footprint exceeds UB / L1, then errors
/// found while expanding (bounds, ranks, unwritten
/// reads, `after` ranges), then cycles or, on an acyclic DAG, unordered conflicting accesses.
pub fn analyse(tf: &Taskflow) -> Result<Expanded, Diagnostics> {
    analyse_checked(tf, Checked::new(tf)).map(|(e, _, _)| e)
}

/// [`analyse`] of a taskflow whose structural checks have run (`checked`, of `tf`), with the
/// topological order of its DAG that the ordering checks used ([`crate::graph::Dag::topo_order`]).
fn analyse_checked(tf: &Taskflow, checked: Checked<'_>) -> Result<(Expanded, Vec<NodeId>, StageTimes), Diagnostics> {
    let mut times = StageTimes::default();
    let t = Instant::now();
    let resolved = checked.structure?;
    let footprint = resolve::check_footprint(&resolved);
    times.structure = checked.time + t.elapsed();

    let t = Instant::now();
    let expansion = expand::expand(&resolved);
    times.expand = t.elapsed();
    let expand::Expansion { expanded, hazards, diagnostics: expand_errors } = expansion;
    // An `after` entry that makes an instance wait for itself is reported and left out of the
    // DAG; the order it was meant to give is then missing, so the ordering check would only
    // repeat the same mistake.
    let after_left_out = expand_errors.kinds().contains(&crate::ErrorKind::Cycle);
    let mut diagnostics = footprint;
    diagnostics.extend(expand_errors);

    let t = Instant::now();
    let order = match expanded.dag.topo_order() {
        Err(cycle) => {
            diagnostics.push(check::cycle_error(tf, &expanded.space, &cycle));
            Vec::new()
        }
        Ok(order) if after_left_out => order,
        Ok(order) => {
            let mut pos = IdVec::filled(order.len(), 0u32);
            for (i, &n) in order.iter().enumerate() {
                pos[n] = i as u32;
            }
            diagnostics.extend(check::check_ordering(tf, &expanded, &hazards, &pos));
            order
        }
    };
    times.order_checks = t.elapsed();
    // A cycle is an error, so an `Ok` always carries the order of every node.
    diagnostics.into_result((expanded, order, times))
}
