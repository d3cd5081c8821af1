//! The hardware-flag rule against an executable model of the device protocol: every core walks
//! its list; an AIV does its flag waits (each blocks while its flag counter is 0, then takes 1),
//! then its counter wait; the tile runs; an AIC sets the flag (both its AIVs' counters + 1) and
//! every tile adds 1 to the counters it signals; at the end an AIV drains its remaining waits.
//! Cores are stepped in random orders. Every dependency of the DAG must be respected, no flag
//! counter may ever pass 15, and every core must finish (no deadlock) — on the MoE layer and on
//! random DAGs — and the rule must take exactly the flags it can prove safe in hand-built cases.

use hpmoe_ascendc::flags::{FlagPlan, FlagPolicy, MAX_PENDING, plan_flags, without_flagged};
use hpmoe_core::expand::{Expanded, InstanceSpace, Work};
use hpmoe_core::graph::{Csr, Dag};
use hpmoe_core::ids::{CoreId, CounterId, NodeId, RankId};
use hpmoe_core::model::{CoreKind, MachineProfile};
use hpmoe_core::schedule::{Placement, SimpleCost, SyncPlan, list_schedule, plan_sync, prove_deadlock_free};
use hpmoe_host::moe::MoeShape;
use std::collections::HashMap;

/// splitmix64.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Runs the protocol once with a random interleaving; panics on any violation.
fn simulate(
    exp: &Expanded,
    placement: &Placement,
    profile: &MachineProfile,
    gm: &SyncPlan,
    plan: &FlagPlan,
    seed: u64,
) {
    let mut rng = Rng(seed);
    let cores = profile.total_cores() as usize;
    let cpr = profile.cores_per_rank();
    let mut next = vec![0usize; cores]; // next entry of each core
    let mut pending_waits = vec![None::<u32>; cores]; // flag waits left before the current entry (AIV)
    let mut flag = vec![0u32; cores]; // hardware flag counter of each AIV
    let mut consumed = vec![0u32; cores];
    let mut counters: HashMap<(RankId, CounterId), u32> = HashMap::new();
    let mut ran_at = vec![u64::MAX; exp.nodes()];
    let mut clock = 0u64;
    let is_aiv = |c: usize| profile.kind_of_local(profile.split_core(c as u32).1) == CoreKind::Aiv;
    let own_aivs = |c: usize| {
        let (rank, local) = profile.split_core(c as u32);
        let base = (rank * cpr + profile.aic_per_rank + 2 * local) as usize;
        [base, base + 1]
    };
    loop {
        // Cores that can take a step now.
        let mut ready = Vec::new();
        for c in 0..cores {
            let row = placement.queues.row(CoreId::from_index(c));
            if next[c] == row.len() {
                if is_aiv(c) && consumed[c] < plan.totals[CoreId::from_index(c)] && flag[c] > 0 {
                    ready.push(c);
                }
                continue;
            }
            let n = row[next[c]];
            let waits = pending_waits[c].unwrap_or(u32::from(plan.waits_before[n]));
            if waits > 0 {
                if flag[c] > 0 {
                    ready.push(c);
                }
                continue;
            }
            let ok = gm.waits[n]
                .is_none_or(|w| counters.get(&(exp.space.rank_of(n), w.counter)).copied().unwrap_or(0) >= w.target);
            if ok {
                ready.push(c);
            }
        }
        if ready.is_empty() {
            break;
        }
        let c = ready[rng.below(ready.len() as u64) as usize];
        clock += 1;
        let row = placement.queues.row(CoreId::from_index(c));
        if next[c] == row.len() {
            flag[c] -= 1;
            consumed[c] += 1;
            continue;
        }
        let n = row[next[c]];
        let waits = pending_waits[c].unwrap_or(u32::from(plan.waits_before[n]));
        if waits > 0 {
            flag[c] -= 1;
            consumed[c] += 1;
            pending_waits[c] = Some(waits - 1);
            continue;
        }
        // Run the tile, then its flag set and signals.
        ran_at[n.index()] = clock;
        if plan.set_after[n] {
            for a in own_aivs(c) {
                flag[a] += 1;
                assert!(flag[a] as usize <= MAX_PENDING, "seed {seed}: flag counter of core {a} reached {}", flag[a]);
            }
        }
        for s in gm.signals(n) {
            *counters.entry((s.rank, s.counter)).or_default() += 1;
        }
        next[c] += 1;
        pending_waits[c] = None;
    }
    for c in 0..cores {
        assert_eq!(next[c], placement.queues.row(CoreId::from_index(c)).len(), "seed {seed}: core {c} deadlocked");
        if is_aiv(c) {
            assert_eq!(consumed[c], plan.totals[CoreId::from_index(c)], "seed {seed}: core {c} left flag waits");
            assert_eq!(flag[c], 0, "seed {seed}: flag counter of core {c} not drained");
        }
    }
    for (u, v) in exp.dag.succ.pairs() {
        assert!(ran_at[u.index()] < ran_at[v.index()], "seed {seed}: {v} ran before its dependency {u}");
    }
}

fn check(exp: &Expanded, placement: &Placement, profile: &MachineProfile, sync: &SyncPlan, runs: u64) -> FlagPlan {
    let plan = plan_flags(exp, placement, sync, profile, &FlagPolicy::default()).unwrap();
    let gm = without_flagged(exp, sync, &plan);
    // Every kept dependency is carried exactly once: by the flag or by a counter.
    assert_eq!(gm.signal_list.len() + plan.edges.len(), sync.signal_list.len());
    for seed in 0..runs {
        simulate(exp, placement, profile, &gm, &plan, seed);
    }
    plan
}

#[test]
fn moe_layer_keeps_every_dependency_and_every_flag_bound() {
    for ranks in [1, 2, 4] {
        let tf = MoeShape::tiny(ranks).taskflow().unwrap();
        let c = hpmoe_core::compile(&tf, &SimpleCost::default()).unwrap();
        let plan = check(&c.expanded, &c.placement, &tf.profile, &c.sync, 40);
        assert!(!plan.edges.is_empty(), "the tiny layer has AIC -> own-AIV dependencies to carry");
    }
}

/// One-dimensional families `(kind, count)`, on one rank, with the given local edges.
fn expanded(families: &[(CoreKind, u32)], pairs: &[(u32, u32)]) -> Expanded {
    let space = InstanceSpace::new(1, families.iter().map(|&(_, n)| smallvec_of(n)));
    let nodes = space.len();
    Expanded {
        space,
        dag: Dag::from_pairs(nodes, &node_pairs(pairs)),
        family_core: families.iter().map(|f| f.0).collect(),
        family_work: vec![Work { flops: 1, bytes: 1, remote_bytes: 0 }; families.len()],
        rotation: vec![0; nodes].into(),
    }
}

fn node_pairs(pairs: &[(u32, u32)]) -> Vec<(NodeId, NodeId)> {
    pairs.iter().map(|&(a, b)| (NodeId::new(a), NodeId::new(b))).collect()
}

fn smallvec_of(n: u32) -> smallvec::SmallVec<[u32; 4]> {
    smallvec::smallvec![n]
}

/// A placement with the given core rows.
fn placement(nodes: usize, rows: &[Vec<u32>]) -> Placement {
    let mut core_of = vec![0; nodes];
    let mut position = vec![0; nodes];
    for (c, row) in rows.iter().enumerate() {
        for (i, &n) in row.iter().enumerate() {
            core_of[n as usize] = c as u32;
            position[n as usize] = i as u32;
        }
    }
    Placement {
        core_of: core_of.into_iter().map(CoreId::new).collect(),
        position: position.into(),
        queues: Csr::from_rows(rows.iter().map(|r| r.iter().copied().map(NodeId::new))),
        start_ns: vec![0; nodes].into(),
        finish_ns: vec![0; nodes].into(),
        makespan_ns: 0,
    }
}

fn one_aic() -> MachineProfile {
    MachineProfile { name: "t".into(), aic_per_rank: 1, aiv_per_aic: 2, ranks: 1 }
}

#[test]
fn without_a_path_back_only_fifteen_sets_are_taken() {
    // 40 AIC tiles each feeding one tile on AIV 0; nothing orders the AIC behind the AIV.
    let n = 40;
    let exp = expanded(&[(CoreKind::Aic, n), (CoreKind::Aiv, n)], &(0..n).map(|i| (i, n + i)).collect::<Vec<_>>());
    let p = placement(2 * n as usize, &[(0..n).collect(), (n..2 * n).collect(), vec![]]);
    prove_deadlock_free(&exp.dag, &p.queues).unwrap();
    let sync = plan_sync(&exp, &p);
    let plan = check(&exp, &p, &one_aic(), &sync, 30);
    assert_eq!(plan.edges.len(), MAX_PENDING, "15 sets fit in the counters; the 16th has no back-pressure");
    assert_eq!(plan.totals.as_slice(), [15, 15, 15]);
    assert_eq!(plan.waits_before.as_slice()[n as usize..(n + 3) as usize], [1, 1, 1]);
}

#[test]
fn with_both_aivs_ordered_behind_every_set_all_are_taken() {
    // A_i -> B_i (AIV 0) and A_i -> C_i (AIV 1), and B_i, C_i -> A_{i+8}: the AIC cannot run
    // more than 8 sets ahead of either AIV.
    let n = 40u32;
    let mut edges = Vec::new();
    for i in 0..n {
        edges.push((i, n + i));
        edges.push((i, 2 * n + i));
        if i + 8 < n {
            edges.push((n + i, i + 8));
            edges.push((2 * n + i, i + 8));
        }
    }
    let exp = expanded(&[(CoreKind::Aic, n), (CoreKind::Aiv, n), (CoreKind::Aiv, n)], &edges);
    let p = placement(3 * n as usize, &[(0..n).collect(), (n..2 * n).collect(), (2 * n..3 * n).collect()]);
    prove_deadlock_free(&exp.dag, &p.queues).unwrap();
    let sync = plan_sync(&exp, &p);
    let plan = check(&exp, &p, &one_aic(), &sync, 30);
    assert_eq!(plan.edges.len(), 2 * n as usize);
    assert_eq!(plan.totals.as_slice(), [n, n, n]);
}

#[test]
fn consumers_out_of_order_stay_on_counters() {
    // A0 -> B1 and A1 -> B0 with B0 before B1 on the AIV. The reduction would drop A0 -> B1
    // (implied through A1 -> B0), but it may keep implied edges (its clocks are capped), so the
    // rule must cope: a second set would release B0's wait with the first set's count, so only
    // one of the two dependencies may use the flag.
    use hpmoe_core::schedule::{Signal, Wait};
    let exp = expanded(&[(CoreKind::Aic, 2), (CoreKind::Aiv, 2)], &[(0, 3), (1, 2)]);
    let p = placement(4, &[vec![0, 1], vec![2, 3], vec![]]);
    let sync = SyncPlan {
        waits: vec![
            None,
            None,
            Some(Wait { counter: CounterId::new(0), target: 1 }),
            Some(Wait { counter: CounterId::new(1), target: 1 }),
        ]
        .into(),
        signal_offsets: vec![0, 1, 2, 2, 2],
        signal_list: vec![
            Signal { rank: RankId::new(0), counter: CounterId::new(1) },
            Signal { rank: RankId::new(0), counter: CounterId::new(0) },
        ],
        counters_per_rank: vec![2].into(),
        cross_edges_before: 2,
        cross_edges_after: 2,
    };
    let plan = check(&exp, &p, &one_aic(), &sync, 20);
    assert_eq!(plan.edges, [(NodeId::new(0), NodeId::new(3))]);
    assert_eq!(plan.waits_before.as_slice(), [0, 0, 0, 1]);
    // Another AIC's AIVs never use it, nor do AIV -> AIC dependencies.
    let profile = MachineProfile { name: "t".into(), aic_per_rank: 2, aiv_per_aic: 2, ranks: 1 };
    let exp = expanded(&[(CoreKind::Aic, 1), (CoreKind::Aiv, 1), (CoreKind::Aic, 1)], &[(0, 1), (1, 2)]);
    let p = placement(3, &[vec![0], vec![2], vec![], vec![], vec![1], vec![]]);
    let sync = plan_sync(&exp, &p);
    let plan = check(&exp, &p, &profile, &sync, 5);
    assert!(plan.edges.is_empty(), "AIC 0's tile feeds AIC 1's AIV, which feeds an AIC: {plan:?}");
}

#[test]
fn random_dags_keep_every_dependency() {
    let mut rng = Rng(7);
    for case in 0..60u64 {
        let ranks = 1 + (case % 2) as u32;
        let aic = 1 + (case % 3) as u32;
        let profile = MachineProfile { name: "t".into(), aic_per_rank: aic, aiv_per_aic: 2, ranks };
        let families: Vec<(CoreKind, u32)> = (0..5)
            .map(|f| (if f % 2 == 0 { CoreKind::Aic } else { CoreKind::Aiv }, 1 + rng.below(12) as u32))
            .collect();
        let space = InstanceSpace::new(ranks, families.iter().map(|&(_, n)| smallvec_of(n)));
        let per_rank = space.per_rank;
        let mut pairs = Vec::new();
        for r in 0..ranks {
            for v in 1..per_rank {
                for _ in 0..rng.below(4) {
                    let u = rng.below(u64::from(v)) as u32;
                    pairs.push((r * per_rank + u, r * per_rank + v));
                }
            }
        }
        pairs.sort_unstable();
        pairs.dedup();
        let nodes = space.len();
        let exp = Expanded {
            space,
            dag: Dag::from_pairs(nodes, &node_pairs(&pairs)),
            family_core: families.iter().map(|f| f.0).collect(),
            family_work: (0..families.len())
                .map(|i| Work { flops: 1 << (10 + i), bytes: 1 << (8 + (i % 3)), remote_bytes: 0 })
                .collect(),
            rotation: vec![0; nodes].into(),
        };
        let p = list_schedule(&exp, &profile, &SimpleCost::default());
        let sync = plan_sync(&exp, &p);
        check(&exp, &p, &profile, &sync, 8);
    }
}
