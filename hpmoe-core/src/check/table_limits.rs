//! Limits of the schedule table and the device runtime: tasks per core, counters per rank,
//! fan-in of one wait, signals of one tile.

use crate::error::{Diagnostic, Diagnostics, ErrorKind as K};
use crate::expand::Expanded;
use crate::ids::NodeId;
use crate::limits::{MAX_COUNTERS_PER_RANK, MAX_FAN_IN, MAX_SIGNALS_PER_TILE, MAX_TASKS_PER_CORE};
use crate::model::Taskflow;
use crate::schedule::{Placement, SyncPlan};

/// Checks a placement and its synchronisation against the table's limits.
pub fn check_table_limits(tf: &Taskflow, exp: &Expanded, placement: &Placement, sync: &SyncPlan) -> Diagnostics {
    let mut d = Diagnostics::default();
    let profile = &tf.profile;
    if let Some(core) = placement.queues.row_ids().max_by_key(|&c| placement.queues.degree(c)) {
        let n = placement.queues.degree(core);
        if n as u64 > u64::from(MAX_TASKS_PER_CORE) {
            d.push(
                Diagnostic::new(
                    K::TooManyTasks,
                    tf.loc,
                    format!(
                        "core {} runs {n} tiles; a core's list holds at most {MAX_TASKS_PER_CORE} (MAX_TASKS_PER_CORE)",
                        profile.core_name(core.raw())
                    ),
                )
                .help("use larger tiles"),
            );
        }
    }
    if let Some((rank, &n)) = sync.counters_per_rank.iter().max_by_key(|p| *p.1)
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
    let fam_loc = |n: NodeId| tf.families[exp.space.family_of(n)].loc;
    let name = |n: NodeId| super::node_name(tf, &exp.space, n);
    if let Some((n, w)) = sync.waits.iter().filter_map(|(n, w)| Some((n, (*w)?))).max_by_key(|p| p.1.target)
        && w.target > MAX_FAN_IN
    {
        d.push(Diagnostic::new(
            K::FanInTooLarge,
            fam_loc(n),
            format!("{} waits for {} other cores; the limit is {MAX_FAN_IN} (MAX_FAN_IN)", name(n), w.target),
        ));
    }
    if let Some(n) = exp.space.node_ids().max_by_key(|&n| sync.signals(n).len())
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::Csr;
    use crate::ids::{CoreId, CounterId, IdVec, RankId};
    use crate::model::{CoreKind, MachineProfile};
    use crate::schedule::{Signal, Wait};

    /// One rank, two AICs: a tile family `f` with `n` instances all on core 0 (an uneven
    /// placement: the instance count alone passes the check made before scheduling).
    fn setup(n: u32) -> (Taskflow, Expanded, Placement) {
        let mut tf = Taskflow::new("t", MachineProfile::small(2, 1));
        tf.tile("f", CoreKind::Aic, |t| {
            t.grid("i", u64::from(n));
        });
        let exp = crate::analyse(&tf).unwrap();
        let mut rows = vec![Vec::new(); tf.profile.cores_per_rank() as usize];
        rows[0] = (0..n).map(NodeId::new).collect::<Vec<_>>();
        let queues = Csr::from_rows(rows);
        let placement = Placement {
            core_of: IdVec::filled(n as usize, CoreId::new(0)),
            position: (0..n).collect(),
            queues,
            start_ns: IdVec::filled(n as usize, 0),
            finish_ns: IdVec::filled(n as usize, 0),
            makespan_ns: 0,
        };
        (tf, exp, placement)
    }

    fn sync(n: usize) -> SyncPlan {
        SyncPlan {
            waits: IdVec::filled(n, None),
            signal_offsets: vec![0; n + 1],
            signal_list: Vec::new(),
            counters_per_rank: vec![0].into(),
            cross_edges_before: 0,
            cross_edges_after: 0,
        }
    }

    #[test]
    fn within_limits_is_fine() {
        let (tf, exp, p) = setup(4);
        assert!(check_table_limits(&tf, &exp, &p, &sync(4)).is_empty());
    }

    #[test]
    fn too_many_tasks_on_one_core() {
        let n = MAX_TASKS_PER_CORE + 1;
        let (tf, exp, p) = setup(n);
        let d = check_table_limits(&tf, &exp, &p, &sync(n as usize));
        assert_eq!(d.kinds(), vec![K::TooManyTasks]);
        assert_eq!(
            d.errors[0].message,
            "core r0.aic0 runs 65536 tiles; a core's list holds at most 65535 (MAX_TASKS_PER_CORE)"
        );
    }

    #[test]
    fn too_many_counters_fan_in_and_signals() {
        let (tf, exp, p) = setup(2);
        let mut s = sync(2);
        s.counters_per_rank = vec![MAX_COUNTERS_PER_RANK + 1].into();
        s.waits[NodeId::new(1)] = Some(Wait { counter: CounterId::new(0), target: MAX_FAN_IN + 1 });
        let many = MAX_SIGNALS_PER_TILE as usize + 1;
        s.signal_list = vec![Signal { rank: RankId::new(0), counter: CounterId::new(0) }; many];
        s.signal_offsets = vec![0, many as u32, many as u32];
        let d = check_table_limits(&tf, &exp, &p, &s);
        assert_eq!(d.kinds(), vec![K::TooManyCounters, K::FanInTooLarge, K::TooManySignals]);
        assert_eq!(
            d.errors[0].message,
            "rank 0 needs 1048577 event counters; the limit is 1048576 (MAX_COUNTERS_PER_RANK)"
        );
        assert_eq!(
            d.errors[1].message,
            "f(i=1) on rank 0 waits for 65536 other cores; the limit is 65535 (MAX_FAN_IN)"
        );
        assert_eq!(
            d.errors[2].message,
            "f(i=0) on rank 0 signals 65536 waiting tiles; the limit is 65535 (MAX_SIGNALS_PER_TILE)"
        );
    }
}
