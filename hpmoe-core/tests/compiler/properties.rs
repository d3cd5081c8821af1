//! Properties over random taskflows (`hpmoe_core::testing`: random DAGs with local, explicit and
//! cross-rank edges, guards and folds): the scheduler, the synchronisation and the table must never deadlock or let a
//! tile start before one of its dependencies, whatever the tile durations.

use hpmoe_core::schedule::SimpleCost;
use hpmoe_core::table::{NO_WAIT, ScheduleTable};
use hpmoe_core::testing::taskflow_spec;
use hpmoe_core::{Compiled, compile};
use proptest::prelude::*;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Runs the table the way the device would: every core walks its entries in order, waits
/// until its entry's counter reaches the target, runs for `duration(node)`, then adds 1
/// to each counter it signals. Returns per node (start, finish), or the cores that were
/// stuck (a deadlock).
fn replay(table: &ScheduleTable, per_rank: u32, duration: impl Fn(u32) -> u64) -> Result<Vec<(u64, u64)>, Vec<u32>> {
    let view = table.view();
    let cores = view.core_count();
    let cores_per_rank = table.header().cores_per_rank;
    let mut counters: Vec<Vec<u32>> = table.counters_per_rank().iter().map(|&n| vec![0; n as usize]).collect();
    let mut next = vec![0usize; cores];
    let mut busy = vec![false; cores];
    let nodes = per_rank as usize * table.counters_per_rank().len();
    let mut times = vec![(u64::MAX, u64::MAX); nodes];
    let mut running: BinaryHeap<Reverse<(u64, u32)>> = BinaryHeap::new();
    let mut now = 0u64;
    loop {
        for core in 0..cores as u32 {
            let entries = view.core_entries(core);
            let i = next[core as usize];
            if busy[core as usize] || i >= entries.len() {
                continue;
            }
            let e = &entries[i];
            let rank = core / cores_per_rank;
            if e.wait_counter != NO_WAIT && counters[rank as usize][e.wait_counter as usize] < u32::from(e.wait_target)
            {
                continue;
            }
            let node = rank * per_rank + e.instance;
            let finish = now + duration(node);
            times[node as usize] = (now, finish);
            busy[core as usize] = true;
            running.push(Reverse((finish, core)));
        }
        let Some(Reverse((t, core))) = running.pop() else { break };
        now = t;
        let entry = &view.core_entries(core)[next[core as usize]];
        for s in view.entry_signals(entry) {
            counters[s.rank as usize][s.counter as usize] += 1;
        }
        busy[core as usize] = false;
        next[core as usize] += 1;
    }
    let stuck: Vec<u32> = (0..cores as u32).filter(|&c| next[c as usize] < view.core_entries(c).len()).collect();
    if stuck.is_empty() { Ok(times) } else { Err(stuck) }
}

fn check_compiled(c: &Compiled, seed: u64) -> Result<(), TestCaseError> {
    let exp = &c.expanded;
    let p = &c.placement;
    // The estimated placement respects every dependency, and same-core order.
    for (u, v) in exp.dag.succ.pairs() {
        prop_assert!(p.start_ns[v] >= p.finish_ns[u], "estimate: {v} starts before {u} ends");
        if p.core_of[u] == p.core_of[v] {
            prop_assert!(p.position[u] < p.position[v]);
        }
    }
    // Exact fan-in: each counter is waited on by one entry, whose target is the number of
    // signals the counter receives.
    let t = &c.table;
    let mut signals: Vec<Vec<u32>> = t.counters_per_rank().iter().map(|&n| vec![0; n as usize]).collect();
    let mut targets: Vec<Vec<Option<u32>>> = t.counters_per_rank().iter().map(|&n| vec![None; n as usize]).collect();
    for s in t.signals() {
        signals[s.rank as usize][s.counter as usize] += 1;
    }
    let cpr = t.header().cores_per_rank;
    for core in 0..t.view().core_count() as u32 {
        for e in t.core_entries(core) {
            if e.wait_counter != NO_WAIT {
                let slot = &mut targets[(core / cpr) as usize][e.wait_counter as usize];
                prop_assert!(slot.is_none(), "counter waited on twice");
                *slot = Some(u32::from(e.wait_target));
            }
        }
    }
    for (r, (sig, tgt)) in signals.iter().zip(&targets).enumerate() {
        for (k, (&n, &want)) in sig.iter().zip(tgt).enumerate() {
            prop_assert_eq!(Some(n), want, "rank {} counter {}: {} signals", r, k, n);
        }
    }
    // Replaying the table with random durations runs every tile, after all its inputs.
    let per_rank = exp.space.per_rank;
    let dur = |n: u32| 1 + (u64::from(n).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ seed).rotate_left(17) % 97;
    let times = replay(t, per_rank, dur).map_err(|stuck| TestCaseError::fail(format!("deadlock: cores {stuck:?}")))?;
    for (u, v) in exp.dag.succ.pairs() {
        prop_assert!(times[v.index()].0 >= times[u.index()].1, "replay: {} starts before {} ends", v, u);
    }
    // No schedule beats the lower bound.
    let profile = hpmoe_core::model::MachineProfile::small(t.header().aic_per_rank, t.header().ranks);
    let bound = hpmoe_core::schedule::lower_bound(exp, &profile, &SimpleCost::default());
    prop_assert!(bound.ns() <= p.makespan_ns, "bound {:?} above makespan {}", bound, p.makespan_ns);
    // Every form round-trips.
    prop_assert_eq!(&ScheduleTable::from_bytes(&t.to_bytes()).unwrap(), t);
    prop_assert_eq!(&ScheduleTable::from_json(&t.to_json()).unwrap(), t);
    prop_assert_eq!(&t.view().to_owned(), t);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn random_taskflows_schedule_without_deadlock_or_early_start(spec in taskflow_spec(10), seed in any::<u64>()) {
        let tf = spec.taskflow();
        let c = compile(&tf, &SimpleCost::default()).map_err(|d| TestCaseError::fail(d.render(&tf.sources)))?;
        check_compiled(&c, seed)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn the_same_taskflow_gives_byte_identical_tables(spec in taskflow_spec(10)) {
        let tf = spec.taskflow();
        let a = compile(&tf, &SimpleCost::default()).unwrap().table;
        let b = compile(&tf.clone(), &SimpleCost::default()).unwrap().table;
        prop_assert_eq!(a.to_bytes(), b.to_bytes());
        prop_assert_eq!(a.to_json(), b.to_json());
        prop_assert_eq!(a.c_header("T"), b.c_header("T"));
        prop_assert_eq!(a.to_rust_source("T"), b.to_rust_source("T"));
    }
}

#[test]
fn moe_taskflows_replay_soundly() {
    for ranks in [1, 2, 4] {
        let tf = hpmoe_host::moe::MoeShape::tiny(ranks).taskflow().unwrap();
        let c = compile(&tf, &SimpleCost::default()).unwrap();
        for seed in 0..8 {
            check_compiled(&c, seed).unwrap();
        }
    }
}
