//! The whole pipeline: check → expand → check → schedule → prove → synchronise → table.

use crate::check;
use crate::error::Diagnostics;
use crate::expand::{self, Expanded};
use crate::model::Taskflow;
use crate::schedule::{self, CostModel, Placement, SyncPlan};
use std::time::{Duration, Instant};

/// Wall-clock time of each stage, for benchmarks.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StageTimes {
    pub structure: Duration,
    pub expand: Duration,
    pub order_checks: Duration,
    pub list_schedule: Duration,
    pub deadlock_proof: Duration,
    pub sync: Duration,
    pub table: Duration,
}

impl StageTimes {
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

/// A checked, scheduled taskflow and its schedule table.
#[derive(Clone, Debug)]
pub struct Compiled {
    pub expanded: Expanded,
    pub placement: Placement,
    pub sync: SyncPlan,
    pub table: crate::table::ScheduleTable,
    pub times: StageTimes,
}

/// Runs the whole pipeline: checks, expansion, scheduling under `cost`, the deadlock-freedom
/// proof, synchronisation and the schedule table. Returns every error found.
pub fn compile(tf: &Taskflow, cost: &dyn CostModel) -> Result<Compiled, Diagnostics> {
    let (expanded, mut times) = analyse_timed(tf)?;

    let t = Instant::now();
    let placement = schedule::list_schedule(&expanded, &tf.profile, cost);
    times.list_schedule = t.elapsed();

    let t = Instant::now();
    if let Err(cycle) = schedule::prove_deadlock_free(&expanded.dag, &placement.queues) {
        // The list scheduler never produces this; the proof is the guard that says so.
        let mut d = Diagnostics::default();
        d.push(check::deadlock_error(tf, &expanded.space, &cycle));
        return Err(d);
    }
    times.deadlock_proof = t.elapsed();

    let t = Instant::now();
    let sync = schedule::plan_sync(&expanded, &placement);
    times.sync = t.elapsed();
    check::check_table_limits(tf, &expanded, &placement, &sync).into_result(())?;

    let t = Instant::now();
    let names: Vec<String> = tf.families.iter().map(|f| f.name.clone()).collect();
    let table = crate::table::ScheduleTable::try_build(&tf.name, &tf.profile, &names, &expanded, &placement, &sync)
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
    times.table = t.elapsed();
    Ok(Compiled { expanded, placement, sync, table, times })
}

/// Checks a taskflow and expands it into its instance DAG.
///
/// Every error found is returned together: structural errors first (if there are any, the
/// taskflow is not expanded), then tiles whose buffer footprint exceeds UB / L1, then errors
/// found while expanding (bounds, ranks, unwritten
/// reads, `after` ranges), then cycles or, on an acyclic DAG, unordered conflicting accesses.
pub fn analyse(tf: &Taskflow) -> Result<Expanded, Diagnostics> {
    analyse_timed(tf).map(|(e, _)| e)
}

pub(crate) fn analyse_timed(tf: &Taskflow) -> Result<(Expanded, StageTimes), Diagnostics> {
    let mut times = StageTimes::default();
    let t = Instant::now();
    let resolved = check::check_structure(tf)?;
    let footprint = check::check_footprint(&resolved);
    times.structure = t.elapsed();

    let t = Instant::now();
    let expansion = expand::expand(&resolved);
    times.expand = t.elapsed();
    let expand::Expansion { expanded, hazards, diagnostics: expand_errors } = expansion;
    let mut diagnostics = footprint;
    diagnostics.extend(expand_errors);

    let t = Instant::now();
    match expanded.dag.topo_order() {
        Err(cycle) => diagnostics.push(check::cycle_error(tf, &expanded.space, &cycle)),
        Ok(order) => {
            let mut pos = vec![0u32; order.len()];
            for (i, &n) in order.iter().enumerate() {
                pos[n as usize] = i as u32;
            }
            diagnostics.extend(check::check_ordering(tf, &expanded, &hazards, &pos));
        }
    }
    times.order_checks = t.elapsed();
    diagnostics.into_result((expanded, times))
}
