//! Limits of the schedule table and the device runtime: tasks per core, counters per rank,
//! fan-in of one wait, signals of one tile.

use crate::error::{Diagnostic, Diagnostics, ErrorKind as K};
use crate::expand::Expanded;
use crate::limits::{MAX_COUNTERS_PER_RANK, MAX_FAN_IN, MAX_SIGNALS_PER_TILE, MAX_TASKS_PER_CORE};
use crate::model::Taskflow;
use crate::schedule::{Placement, SyncPlan};

/// Checks a placement and its synchronisation against the table's limits.
pub fn check_table_limits(tf: &Taskflow, exp: &Expanded, placement: &Placement, sync: &SyncPlan) -> Diagnostics {
    let mut d = Diagnostics::default();
    let profile = &tf.profile;
    if let Some(core) = (0..placement.queues.nodes() as u32).max_by_key(|&c| placement.queues.degree(c)) {
        let n = placement.queues.degree(core);
        if n as u64 > u64::from(MAX_TASKS_PER_CORE) {
            d.push(
                Diagnostic::new(
                    K::TooManyTasks,
                    tf.loc,
                    format!(
                        "core {} runs {n} tiles; a core's list holds at most {MAX_TASKS_PER_CORE} (MAX_TASKS_PER_CORE)",
                        profile.core_name(core)
                    ),
                )
                .help("use larger tiles"),
            );
        }
    }
    if let Some((rank, &n)) = sync.counters_per_rank.iter().enumerate().max_by_key(|p| *p.1)
        && n > MAX_COUNTERS_PER_RANK
    {
        d.push(
            Diagnostic::new(
                K::TooManyCounters,
                tf.loc,
                format!(
                    "rank {rank} needs {n} event counters; the limit is {MAX_COUNTERS_PER_RANK} (MAX_COUNTERS_PER_RANK)"
                ),
            )
            .help("use larger tiles"),
        );
    }
    let fam_loc = |n: u32| tf.families[exp.space.family_of(n)].loc;
    let name = |n: u32| super::node_name(tf, &exp.space, n);
    if let Some((n, w)) =
        sync.waits.iter().enumerate().filter_map(|(n, w)| Some((n as u32, (*w)?))).max_by_key(|p| p.1.target)
        && w.target > MAX_FAN_IN
    {
        d.push(Diagnostic::new(
            K::FanInTooLarge,
            fam_loc(n),
            format!("{} waits for {} other cores; the limit is {MAX_FAN_IN} (MAX_FAN_IN)", name(n), w.target),
        ));
    }
    if let Some(n) = (0..exp.nodes() as u32).max_by_key(|&n| sync.signals(n).len())
        && sync.signals(n).len() as u64 > u64::from(MAX_SIGNALS_PER_TILE)
    {
        d.push(Diagnostic::new(
            K::TooManySignals,
            fam_loc(n),
            format!(
                "{} signals {} waiting tiles; the limit is {MAX_SIGNALS_PER_TILE} (MAX_SIGNALS_PER_TILE)",
                name(n),
                sync.signals(n).len()
            ),
        ));
    }
    d
}
