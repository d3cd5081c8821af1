//! Event counters: turn the cross-core edges left after reduction into waits and signals.
//!
//! Every node with at least one remaining cross-core predecessor owns one counter on its own
//! rank and waits until it reaches the number of those predecessors; each of them adds 1 to
//! it when it finishes. Counters only ever grow and each has exactly one waiter, so the wait
//! is released exactly when *all* its producers have finished, whatever the order in which
//! their signals arrive. That matters for remote puts, whose signals cross the network
//! and may land in any order, interleaved with local signals: a shared counter, a flag per
//! producer that gets reset, or a count that assumes an arrival order could release a wait
//! early or never. The target is the exact fan-in, so a wait can neither be released by too
//! few signals nor wait for one that is never sent.

use super::proof::{Proved, prove_with_order};
use super::reduce::reduce_proved_counting;
use super::{Placement, Signal, SyncPlan, Wait};
use crate::expand::Expanded;
use crate::graph::Csr;
use crate::ids::{CounterId, IdVec, NodeId, OptId, RankId};

/// The synchronisation of `placement`: counters, waits and signals for the cross-core edges
/// that [`reduce_cross_core_edges_keeping`](super::reduce_cross_core_edges_keeping) keeps. An edge out of a tile that writes into
/// another rank (`remote_bytes > 0`) is kept unless an earlier tile of the consumer's core
/// waits for the same put, since only a put's own signal shows its data has landed.
///
/// Counter ids are dense per rank, assigned in node-id order; each node's signals are sorted
/// by (rank, counter). Checking the results against the device limits (counters per rank,
/// fan-in, signals per tile) is left to the table builder.
///
/// # Panics
/// If the placement does not queue every node once or its orders deadlock (see
/// [`prove_deadlock_free`](super::prove_deadlock_free)).
pub fn plan_sync(exp: &Expanded, placement: &Placement) -> SyncPlan {
    let proved = prove_with_order(&exp.dag, &placement.queues).unwrap_or_else(|cycle| {
        panic!("the placement deadlocks (cycle {cycle:?}); prove it deadlock-free before synchronising")
    });
    let kept = kept_consumers(exp, placement, &proved);
    counters_of(exp, &kept.consumers, kept.cross_edges_before)
}

/// What the reduction keeps of a placement's cross-core dependencies.
pub(crate) struct KeptDependencies {
    /// Row `u`: the consumers whose dependency on `u` stays (ascending node ids).
    pub(crate) consumers: Csr,
    /// Dependency edges between different cores before the reduction.
    pub(crate) cross_edges_before: u64,
}

/// The cross-core dependencies of `placement` that need a signal: those the reduction
/// (`reduce_proved_counting`, with the proof's core chains and order) keeps, an edge out of a tile
/// that writes into another rank (`remote_bytes > 0`) kept unless an earlier tile of the
/// consumer's core waits for the same put. `proved` is the placement's deadlock proof
/// ([`prove_with_order`] of `placement.queues`), which the pipeline has already built; the rows
/// are what [`kept_edges`](super::flags::kept_edges) would rebuild from the counter plan.
pub(crate) fn kept_consumers(exp: &Expanded, placement: &Placement, proved: &Proved) -> KeptDependencies {
    let nodes = exp.nodes();
    // Per node rather than per family: asked for every cross-core edge, where finding the
    // family (a binary search) showed up in profiles.
    let mut puts = Vec::with_capacity(nodes);
    for _rank in 0..exp.space.ranks {
        for (span, work) in exp.space.families.iter().zip(&exp.family_work) {
            puts.extend(std::iter::repeat_n(work.remote_bytes > 0, span.count as usize));
        }
    }
    let (kept, cross_edges_before) = reduce_proved_counting(&exp.dag, placement, proved, |u| puts[u.index()]);
    KeptDependencies { consumers: kept.transpose(), cross_edges_before }
}

/// The counter plan of the dependencies `consumers` (row `u`: the nodes waiting for `u`,
/// ascending): every node with a dependency waits on one counter of its rank, numbered
/// densely per rank in node-id order, until it reaches the node's number of dependencies;
/// each producer signals its consumers' counters, sorted by (rank, counter).
/// `cross_edges_before` is recorded as is; `cross_edges_after` is the number of dependencies.
///
/// The one place counters are numbered: [`plan_sync`] numbers the reduction's kept
/// dependencies with it, and [`super::flags::without_flagged`] those the flags leave.
pub(crate) fn counters_of(exp: &Expanded, consumers: &Csr, cross_edges_before: u64) -> SyncPlan {
    let nodes = exp.nodes();
    let mut fan_in: IdVec<NodeId, u32> = IdVec::filled(nodes, 0);
    for &v in consumers.targets() {
        fan_in[v] += 1;
    }
    let mut counters_per_rank: IdVec<RankId, u32> = IdVec::filled(exp.space.ranks as usize, 0);
    let mut counter_of: IdVec<NodeId, OptId<CounterId>> = IdVec::filled(nodes, OptId::NONE);
    let mut waits = IdVec::filled(nodes, None);
    for v in counter_of.keys() {
        let fan_in = fan_in[v];
        if fan_in > 0 {
            let next = &mut counters_per_rank[exp.space.rank_of(v)];
            let counter = CounterId::new(*next);
            counter_of[v] = OptId::some(counter);
            waits[v] = Some(Wait { counter, target: fan_in });
            *next += 1;
        }
    }

    let mut signal_offsets = Vec::with_capacity(nodes + 1);
    let mut signal_list = Vec::with_capacity(consumers.edges());
    signal_offsets.push(0u32);
    for u in exp.space.node_ids() {
        let first = signal_list.len();
        signal_list.extend(consumers.row(u).iter().map(|&v| {
            let counter = counter_of[v].get().expect("a node with a consumer edge waits on a counter");
            Signal { rank: exp.space.rank_of(v), counter }
        }));
        signal_list[first..].sort_unstable();
        signal_offsets.push(u32::try_from(signal_list.len()).expect("signal count fits u32 (edges are limited)"));
    }
    SyncPlan {
        waits,
        signal_offsets,
        signal_list,
        counters_per_rank,
        cross_edges_before,
        cross_edges_after: consumers.edges() as u64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expand::Work;
    use crate::model::CoreKind::{Aic, Aiv};
    use crate::schedule::cost::SimpleCost;
    use crate::schedule::list::list_schedule;
    use crate::schedule::testutil::{expanded, placement, profile, random_expanded};
    use std::collections::HashMap;

    const COMPUTE: Work = Work { flops: 1, bytes: 1, remote_bytes: 0 };
    const PUT: Work = Work { flops: 0, bytes: 1, remote_bytes: 1 };

    fn wait(counter: u32, target: u32) -> Option<Wait> {
        Some(Wait { counter: CounterId::new(counter), target })
    }

    fn sig(rank: u32, counter: u32) -> Signal {
        Signal { rank: RankId::new(rank), counter: CounterId::new(counter) }
    }

    fn all_signals(plan: &SyncPlan, nodes: u32) -> Vec<Vec<Signal>> {
        (0..nodes).map(|n| plan.signals(NodeId::new(n)).to_vec()).collect()
    }

    #[test]
    fn hand_computed_plan_for_two_ranks() {
        // Per rank: pre (AIC), put (AIV, to the other rank), gmm (AIC), act (AIV).
        // Rank 0 = nodes 0..4, rank 1 = nodes 4..8. On each rank, pre → put, pre → act,
        // gmm → act, and each put feeds the other rank's gmm.
        // Cores per rank: AIC [pre, gmm], AIV [put], AIV [act].
        // pre → act is implied: act waits for gmm, which runs after pre on the AIC.
        let exp = expanded(
            2,
            &[(Aic, 1, COMPUTE), (Aiv, 1, PUT), (Aic, 1, COMPUTE), (Aiv, 1, COMPUTE)],
            &[(0, 1), (0, 3), (2, 3), (1, 6), (4, 5), (4, 7), (6, 7), (5, 2)],
        );
        let p = placement(8, &[&[0, 2], &[1], &[3], &[4, 6], &[5], &[7]]);
        let plan = plan_sync(&exp, &p);
        assert_eq!(plan.cross_edges_before, 8);
        assert_eq!(plan.cross_edges_after, 6);
        assert_eq!(plan.counters_per_rank, vec![3, 3]);
        assert_eq!(
            plan.waits,
            vec![None, wait(0, 1), wait(1, 1), wait(2, 1), None, wait(0, 1), wait(1, 1), wait(2, 1)]
        );
        assert_eq!(
            all_signals(&plan, 8),
            vec![
                vec![sig(0, 0)], // pre → put
                vec![sig(1, 1)], // put → rank 1's gmm
                vec![sig(0, 2)], // gmm → act
                vec![],
                vec![sig(1, 0)],
                vec![sig(0, 1)], // rank 1's put → rank 0's gmm
                vec![sig(1, 2)],
                vec![],
            ]
        );
    }

    #[test]
    fn every_put_signals_its_reader_even_when_implied() {
        // Per rank: two puts on one AIV core, both read by the other rank's gmm. Without
        // remote bytes the earlier put's edge is implied by the later one; with them it is
        // kept, because the later put's signal says nothing about the earlier put's data.
        let edges = [(0, 5), (1, 5), (3, 2), (4, 2)];
        let rows: &[&[u32]] = &[&[2], &[0, 1], &[], &[5], &[3, 4], &[]];
        let puts = expanded(2, &[(Aiv, 2, PUT), (Aic, 1, COMPUTE)], &edges);
        let plan = plan_sync(&puts, &placement(6, rows));
        assert_eq!(plan.waits[NodeId::new(2)], wait(0, 2));
        assert_eq!(plan.waits[NodeId::new(5)], wait(0, 2));
        assert_eq!(plan.cross_edges_after, 4);
        let local = expanded(2, &[(Aiv, 2, COMPUTE), (Aic, 1, COMPUTE)], &edges);
        let plan = plan_sync(&local, &placement(6, rows));
        assert_eq!(plan.waits[NodeId::new(2)], wait(0, 1));
        assert_eq!(plan.signals(NodeId::new(3)), &[]);
        assert_eq!(plan.signals(NodeId::new(4)), &[sig(0, 0)]);
        assert_eq!(plan.cross_edges_after, 2);
    }

    #[test]
    fn fan_in_is_exact_on_random_schedules() {
        for seed in 0..120 {
            let ranks = 1 + (seed % 4) as u32;
            let exp = random_expanded(seed, ranks, 7, 10);
            let p = list_schedule(&exp, &profile(2, 2, ranks), &SimpleCost::default());
            let plan = plan_sync(&exp, &p);
            let n = exp.nodes() as u32;

            let mut received: HashMap<Signal, u32> = HashMap::new();
            for u in 0..n {
                let s = plan.signals(NodeId::new(u));
                assert!(s.windows(2).all(|w| w[0] < w[1]), "signals of {u} sorted and distinct");
                for &sig in s {
                    *received.entry(sig).or_default() += 1;
                }
            }
            let mut waiters: HashMap<Signal, u32> = HashMap::new();
            let mut last_counter = vec![None; ranks as usize];
            for v in exp.space.node_ids() {
                let Some(w) = plan.waits[v] else { continue };
                let rank = exp.space.rank_of(v);
                assert!(w.counter.raw() < plan.counters_per_rank[rank]);
                let counter = Signal { rank, counter: w.counter };
                assert_eq!(waiters.insert(counter, v.raw()), None, "counter {counter:?} has one waiter");
                assert_eq!(received.get(&counter).copied(), Some(w.target), "exact fan-in of node {v}");
                // Dense ids, in node-id order.
                assert_eq!(w.counter.raw(), last_counter[rank.index()].map_or(0, |c: u32| c + 1));
                last_counter[rank.index()] = Some(w.counter.raw());
            }
            assert_eq!(waiters.len(), received.len(), "no signal goes to a counter nobody waits on");
            let total: u32 = plan.counters_per_rank.values().sum();
            assert_eq!(total as usize, waiters.len());

            let cross: Vec<(NodeId, NodeId)> =
                exp.dag.succ.pairs().filter(|&(u, v)| p.core_of[u] != p.core_of[v]).collect();
            assert_eq!(plan.cross_edges_before, cross.len() as u64);
            assert_eq!(plan.cross_edges_after, plan.signal_list.len() as u64);
            // A put signals its reader, or an earlier tile of the reader's core that reads it.
            let signals_reader = |u: NodeId, v: NodeId| {
                plan.waits[v].is_some_and(|w| {
                    plan.signals(u).contains(&Signal { rank: exp.space.rank_of(v), counter: w.counter })
                })
            };
            for (u, v) in cross {
                if exp.work(u).remote_bytes > 0 {
                    let covered = signals_reader(u, v)
                        || exp.dag.succ.row(u).iter().any(|&w| {
                            p.core_of[w] == p.core_of[v] && p.position[w] < p.position[v] && signals_reader(u, w)
                        });
                    assert!(covered, "put {u} signals its reader {v} or an earlier reader on its core");
                }
            }
        }
    }
}
