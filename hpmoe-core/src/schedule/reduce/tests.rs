//! The sync reduction on hand-made and random schedules: exactness, soundness and the put rule.

use super::*;
use crate::ids::IdVec;
use crate::schedule::cost::SimpleCost;
use crate::schedule::list::list_schedule;
use crate::schedule::proof::CoreChain;
use crate::schedule::testutil::{Rng, placement, profile, random_expanded};
use std::collections::HashMap;

fn kept_rows(kept: &Csr) -> Vec<Vec<u32>> {
    kept.row_ids().map(|v| kept.row(v).iter().map(|n| n.raw()).collect()).collect()
}

#[test]
fn drops_an_edge_implied_through_the_core_predecessor() {
    // Core 0: [0]; core 1: [1, 2]. 0 → 1 and 0 → 2: 2 runs after 1, which waited for 0.
    let dag = Dag::of(3, &[(0, 1), (0, 2)]);
    let kept = reduce_cross_core_edges(&dag, &placement(3, &[&[0], &[1, 2]]));
    assert_eq!(kept_rows(&kept), vec![vec![], vec![0], vec![]]);
}

#[test]
fn drops_an_edge_implied_through_a_chain_of_kept_edges() {
    // Three cores, one node each: 0 → 1 → 2 and 0 → 2. The wait of 2 on 1 implies 0.
    let dag = Dag::of(3, &[(0, 1), (1, 2), (0, 2)]);
    let kept = reduce_cross_core_edges(&dag, &placement(3, &[&[0], &[1], &[2]]));
    assert_eq!(kept_rows(&kept), vec![vec![], vec![0], vec![1]]);
}

#[test]
fn drops_an_edge_implied_through_an_earlier_task_of_the_producers_core() {
    // Core 0: [0, 1]; core 1: [2]. 0 → 2 and 1 → 2: once 1 is done, so is 0. The later
    // producer is considered first and kept; the earlier one is dropped.
    let dag = Dag::of(3, &[(0, 2), (1, 2)]);
    let kept = reduce_cross_core_edges(&dag, &placement(3, &[&[0, 1], &[2]]));
    assert_eq!(kept_rows(&kept), vec![vec![], vec![], vec![1]]);
}

#[test]
fn keeps_edges_nothing_else_implies() {
    // Cores 0, 1, 2 with one node each; 0 → 2 and 1 → 2 are independent.
    let dag = Dag::of(3, &[(0, 2), (1, 2)]);
    let kept = reduce_cross_core_edges(&dag, &placement(3, &[&[0], &[1], &[2]]));
    assert_eq!(kept_rows(&kept), vec![vec![], vec![], vec![0, 1]]);
    // A same-core edge is never a wait: core 0 runs [0, 1], 0 → 1.
    let dag = Dag::of(2, &[(0, 1)]);
    let kept = reduce_cross_core_edges(&dag, &placement(2, &[&[0, 1]]));
    assert_eq!(kept.edges(), 0);
}

#[test]
fn knowledge_flows_through_a_core_but_not_backwards_in_it() {
    // Core 0: [0]; core 1: [1, 2]; core 2: [3]. 0 → 2 and 1 → 3 and 0 → 3.
    // 3 waits for 1, which is *before* 2 on core 1, so 3 knows nothing about 0: keep 0 → 3.
    let dag = Dag::of(4, &[(0, 2), (1, 3), (0, 3)]);
    let kept = reduce_cross_core_edges(&dag, &placement(4, &[&[0], &[1, 2], &[3]]));
    assert_eq!(kept_rows(&kept), vec![vec![], vec![], vec![0], vec![0, 1]]);
    // With 2 first on core 1 and 2 → 3 instead of 1 → 3, 3 learns of 0 through 2.
    let dag = Dag::of(4, &[(0, 2), (2, 3), (0, 3)]);
    let kept = reduce_cross_core_edges(&dag, &placement(4, &[&[0], &[2, 1], &[3]]));
    assert_eq!(kept_rows(&kept), vec![vec![], vec![], vec![0], vec![2]]);
}

#[test]
fn edges_out_of_marked_sources_are_kept_once_per_core() {
    // The chain case again, but node 0 is a put: its edge to 2 stays.
    let dag = Dag::of(3, &[(0, 1), (1, 2), (0, 2)]);
    let kept = reduce_cross_core_edges_keeping(&dag, &placement(3, &[&[0], &[1], &[2]]), |u| u.raw() == 0);
    assert_eq!(kept_rows(&kept), vec![vec![], vec![0], vec![0, 1]]);
    // The core-predecessor case: 2 runs after 1 on core 1, and 1 waited for the put's own
    // signal, so 0 → 2 needs none.
    let dag = Dag::of(3, &[(0, 1), (0, 2)]);
    let kept = reduce_cross_core_edges_keeping(&dag, &placement(3, &[&[0], &[1, 2]]), |u| u.raw() == 0);
    assert_eq!(kept_rows(&kept), vec![vec![], vec![0], vec![]]);
    // But not through another producer: 3 waits for 2, which waited for the put 0, yet
    // 2 is on another core, so 0 → 3 keeps its own signal.
    let dag = Dag::of(4, &[(0, 2), (0, 3), (2, 3), (1, 3)]);
    let kept = reduce_cross_core_edges_keeping(&dag, &placement(4, &[&[0], &[1], &[2], &[3]]), |u| u.raw() == 0);
    assert_eq!(kept_rows(&kept), vec![vec![], vec![], vec![0], vec![0, 1, 2]]);
}

/// Every cross-core edge out of a marked node is kept, or an earlier node of its
/// consumer's core keeps an edge from the same producer.
fn assert_marked_covered(dag: &Dag, p: &Placement, kept: &Csr, marked: impl Fn(NodeId) -> bool) {
    for (u, v) in dag.succ.pairs().filter(|&(u, v)| marked(u) && p.core_of[u] != p.core_of[v]) {
        let covered =
            kept.row(v).contains(&u)
                || dag.succ.row(u).iter().any(|&w| {
                    p.core_of[w] == p.core_of[v] && p.position[w] < p.position[v] && kept.row(w).contains(&u)
                });
        assert!(covered, "edge {u} → {v} out of a put has no signal of its producer on its core");
    }
}

#[test]
fn random_reductions_keep_a_signal_of_every_put_per_core() {
    let mut dropped = 0;
    for seed in 0..120 {
        let ranks = 1 + (seed % 3) as u32;
        let exp = random_expanded(seed, ranks, 6, 10);
        let p = list_schedule(&exp, &profile(2, 2, ranks), &SimpleCost::default());
        let marked = |u: NodeId| u.raw().is_multiple_of(3);
        let kept = reduce_cross_core_edges_keeping(&exp.dag, &p, marked);
        assert_sound(&exp.dag, &p, &kept, false);
        assert_marked_covered(&exp.dag, &p, &kept, marked);
        let marked_cross = exp.dag.succ.pairs().filter(|&(u, v)| marked(u) && p.core_of[u] != p.core_of[v]).count();
        dropped += marked_cross - kept.pairs().filter(|&(_, u)| marked(u)).count();
    }
    assert!(dropped > 0, "the random cases exercise dropping edges out of marked nodes");
}

#[test]
#[should_panic(expected = "the placement deadlocks")]
fn refuses_a_deadlocking_placement() {
    let dag = Dag::of(2, &[(0, 1)]);
    reduce_cross_core_edges(&dag, &placement(2, &[&[1, 0]]));
}

#[test]
fn caps_keep_the_window_of_nearest_cores() {
    let mut facts: Vec<Fact> = [1, 4, 5, 6, 9, 20].iter().map(|&c| (c, c * 10)).collect();
    cap_facts(&mut facts, 6, 4);
    // The window around 6 grows towards the nearer neighbour: 5 (distance 1), 4 (2),
    // 9 (3); cores 1 (5) and 20 (14) are forgotten.
    assert_eq!(facts, vec![(4, 40), (5, 50), (6, 60), (9, 90)]);
    let mut facts: Vec<Fact> = [2, 3, 4].iter().map(|&c| (c, 0)).collect();
    cap_facts(&mut facts, 3, 2);
    assert_eq!(facts, vec![(2, 0), (3, 0)], "ties go to the lower core");
    let mut facts: Vec<Fact> = vec![(0, 1), (7, 2)];
    cap_facts(&mut facts, 0, 1);
    assert_eq!(facts, vec![(0, 1)]);
}

#[test]
fn merge_keeps_the_larger_position_per_core() {
    let mut acc = vec![(1, 5), (3, 1)];
    let mut scratch = Vec::new();
    merge_facts(&mut acc, &[(0, 2), (1, 3), (3, 4), (8, 0)], &mut scratch, 3, CLOCK_CAP);
    assert_eq!(acc, vec![(0, 2), (1, 5), (3, 4), (8, 0)]);
}

/// The facts of `facts` (any order, one per core) a capped clock keeps, by brute force:
/// the `cap` cores nearest `own_core`, ties to the lower id, sorted by core.
fn capped_by_brute_force(mut facts: Vec<Fact>, own_core: u32, cap: usize) -> Vec<Fact> {
    facts.sort_by_key(|f| (f.0.abs_diff(own_core), f.0));
    facts.truncate(cap);
    facts.sort_unstable();
    facts
}

/// Random distinct cores below 24 with positions below 8, sorted by core.
fn random_facts(rng: &mut Rng, with: Option<u32>) -> Vec<Fact> {
    let mut cores: Vec<u32> = (0..24).filter(|_| rng.below(3) == 0).chain(with).collect();
    cores.sort_unstable();
    cores.dedup();
    cores.into_iter().map(|c| (c, rng.below(8) as u32)).collect()
}

#[test]
fn capped_merges_match_brute_force() {
    let mut rng = Rng::new(5);
    let mut scratch = Vec::new();
    for _ in 0..20_000 {
        let own = rng.below(24) as u32;
        let cap = 1 + rng.below(8) as usize;
        let mut acc = capped_by_brute_force(random_facts(&mut rng, Some(own)), own, cap);
        let other = random_facts(&mut rng, None);

        let mut union: HashMap<u32, u32> = acc.iter().copied().collect();
        for &(core, pos) in &other {
            let p = union.entry(core).or_default();
            *p = (*p).max(pos);
        }
        let expected = capped_by_brute_force(union.into_iter().collect(), own, cap);
        let before = acc.clone();
        merge_facts(&mut acc, &other, &mut scratch, own, cap);
        assert_eq!(acc, expected, "merging {other:?} into {before:?} around {own}, cap {cap}");

        let mut all = random_facts(&mut rng, Some(own));
        let expected = capped_by_brute_force(all.clone(), own, cap);
        cap_facts(&mut all, own, cap);
        assert_eq!(all, expected);
    }
}

/// Whether `to` is reachable from `from` through core order and kept edges, without
/// using the kept edge `skip`.
fn reaches(chain: &CoreChain, kept_succ: &Csr, from: NodeId, to: NodeId, skip: Option<(NodeId, NodeId)>) -> bool {
    let mut seen: IdVec<NodeId, bool> = IdVec::filled(chain.next.len(), false);
    let mut stack = vec![from];
    while let Some(x) = stack.pop() {
        if x == to {
            return true;
        }
        let next = chain.next[x].get();
        let succ = kept_succ.row(x).iter().copied().filter(|&y| skip != Some((x, y)));
        for y in succ.chain(next) {
            if !std::mem::replace(&mut seen[y], true) {
                stack.push(y);
            }
        }
    }
    false
}

/// Every cross-core edge is still implied by core order and kept edges (sound); with
/// `exact`, no kept edge is implied by the others (minimal).
fn assert_sound(dag: &Dag, p: &Placement, kept: &Csr, exact: bool) {
    let chain = CoreChain::new(dag.nodes(), &p.queues);
    let kept_succ = kept.transpose();
    for (u, v) in dag.succ.pairs() {
        let cross = p.core_of[u] != p.core_of[v];
        assert!(cross || !kept.row(v).contains(&u), "same-core edge {u} → {v} kept");
        if cross {
            assert!(reaches(&chain, &kept_succ, u, v, None), "edge {u} → {v} lost");
        }
    }
    if exact {
        for (v, u) in kept.pairs() {
            assert!(!reaches(&chain, &kept_succ, u, v, Some((u, v))), "kept edge {u} → {v} is redundant");
        }
    }
}

#[test]
fn random_reductions_are_sound_and_minimal() {
    let mut dropped = 0;
    for seed in 0..120 {
        let ranks = 1 + (seed % 3) as u32;
        let exp = random_expanded(seed, ranks, 6, 10);
        let prof = profile(2, 2, ranks);
        assert!(prof.total_cores() as usize <= CLOCK_CAP, "clocks never capped here, so exact");
        let p = list_schedule(&exp, &prof, &SimpleCost::default());
        let kept = reduce_cross_core_edges(&exp.dag, &p);
        assert_sound(&exp.dag, &p, &kept, true);
        let cross = exp.dag.succ.pairs().filter(|&(u, v)| p.core_of[u] != p.core_of[v]).count();
        dropped += cross - kept.edges();
    }
    assert!(dropped > 0, "the random cases exercise dropping");
}

#[test]
fn tiny_clock_caps_stay_sound() {
    for seed in 0..80 {
        let ranks = 2 + (seed % 3) as u32;
        let exp = random_expanded(seed, ranks, 8, 12);
        let p = list_schedule(&exp, &profile(3, 2, ranks), &SimpleCost::default());
        for cap in [1, 2, 3] {
            let kept = reduce_with_cap(&exp.dag, &p, &proved(&exp.dag, &p), |_| false, cap);
            assert_sound(&exp.dag, &p, &kept, false);
            // Capping only forgets facts, so it never keeps fewer edges than exact clocks.
            assert!(
                kept.edges() >= reduce_with_cap(&exp.dag, &p, &proved(&exp.dag, &p), |_| false, usize::MAX).edges()
            );
        }
    }
}

/// Two workers keep exactly the edges one keeps, whatever the interleaving (each case runs
/// several times), with and without caps and marked producers, on schedules whose cores the
/// split puts on both sides.
#[test]
fn two_workers_keep_the_edges_one_keeps() {
    let mut both_sides = 0;
    for seed in 0..60 {
        let ranks = 2 + (seed % 3) as u32;
        let exp = random_expanded(seed, ranks, 8, 40);
        let p = list_schedule(&exp, &profile(3, 2, ranks), &SimpleCost::default());
        let proved = proved(&exp.dag, &p);
        for cap in [1, 3, CLOCK_CAP, usize::MAX] {
            for marked in [|_: NodeId| false, |u: NodeId| u.raw().is_multiple_of(3)] {
                let one = reduce_on(&exp.dag, &p, &proved, marked, cap, 1);
                let cross = exp.dag.succ.pairs().filter(|&(u, v)| p.core_of[u] != p.core_of[v]).count();
                assert_eq!(one.1, cross as u64, "seed {seed}: the walk counts every cross-core edge");
                for _ in 0..3 {
                    let two = reduce_on(&exp.dag, &p, &proved, marked, cap, 2);
                    assert_eq!(kept_rows(&two.0), kept_rows(&one.0), "seed {seed}, cap {cap}");
                    assert_eq!(two.1, one.1, "seed {seed}, cap {cap}: cross-core edges counted alike");
                }
            }
        }
        both_sides += usize::from(p.queues.row_ids().filter(|&c| p.queues.degree(c) > 0).count() >= 2);
    }
    assert!(both_sides >= 50, "the cases give both workers nodes");
}
