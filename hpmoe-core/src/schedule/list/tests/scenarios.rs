//! Hand-worked schedules: small DAGs whose every start time the comments derive.

use super::*;
use crate::schedule::cost::UnitCost;

#[test]
fn fork_runs_on_both_vector_cores_after_the_matmul() {
    // One rank: core 0 = AIC, cores 1 and 2 = AIV. Node 0 (AIC) feeds nodes 1 and 2 (AIV).
    let exp = expanded(1, &[(AIC, 1, W), (AIV, 2, W)], &[(0, 1), (0, 2)]);
    let p = list_schedule(&exp, &profile(1, 2, 1), &UnitCost);
    assert_eq!(p.core_of.values().map(|c| c.raw()).collect::<Vec<_>>(), vec![0, 1, 2]);
    assert_eq!(p.position, vec![0, 0, 0]);
    assert_eq!(p.start_ns, vec![0, 1, 1]);
    assert_eq!(p.finish_ns, vec![1, 2, 2]);
    assert_eq!(p.makespan_ns, 2);
    assert_eq!(rows(&p.queues), vec![vec![0], vec![1], vec![2]]);
}

#[test]
fn critical_path_goes_first_and_ties_fall_to_the_lower_id() {
    // One AIC core. Node 0 stands alone (level 1); chain 1 → 2 → 3 (levels 3, 2, 1).
    // Order: 1 (3), 2 (2), then 0 and 3 tie at level 1 and the lower id wins.
    let exp = expanded(1, &[(AIC, 4, W)], &[(1, 2), (2, 3)]);
    let p = list_schedule(&exp, &profile(1, 0, 1), &UnitCost);
    assert_eq!(rows(&p.queues), vec![vec![1, 2, 0, 3]]);
    assert_eq!(p.start_ns, vec![2, 0, 1, 3]);
    assert_eq!(p.finish_ns, vec![3, 1, 2, 4]);
    assert_eq!(p.position, vec![2, 0, 1, 3]);
    assert_eq!(p.makespan_ns, 4);
}

#[test]
fn a_node_waiting_for_its_inputs_does_not_hold_up_ready_work() {
    // One AIC core (0), one AIV core (1). AIC 0 → AIV 2, AIC 1 → AIV 2, AIV 3 alone.
    // Levels: 0, 1: 10 + 3 + 10 = 23; 2, 3: 10. AIC runs 0 [0,10], then 1 [10,20].
    // AIV: 2 is ready only at 20 + 3 = 23, and 3 is ready at 0, so 3 runs [0,10] and 2
    // [23,33]. (Appending in priority order instead would run 2 first, at 23, and 3
    // behind it at 33.)
    let exp = expanded(1, &[(AIC, 2, W), (AIV, 2, W)], &[(0, 2), (1, 2)]);
    let p = list_schedule(&exp, &profile(1, 1, 1), &TenAndEdges);
    assert_eq!(p.core_of.values().map(|c| c.raw()).collect::<Vec<_>>(), vec![0, 0, 1, 1]);
    assert_eq!(p.start_ns, vec![0, 10, 23, 0]);
    assert_eq!(p.finish_ns, vec![10, 20, 33, 10]);
    assert_eq!(rows(&p.queues), vec![vec![0, 1], vec![3, 2]]);
    assert_eq!(p.makespan_ns, 33);
}

#[test]
fn less_urgent_work_fills_the_gap_before_an_urgent_node_is_ready() {
    // One AIC core (0), one AIV core (1); tiles cost their flops, edges 3 ns.
    // Nodes: AIC a = 0 (10), AIC b = 1 (10), AIV x = 2 (10), AIV y = 3 (5).
    // a → x → b is the critical path (levels 36, 23, 10); y (level 5) stands alone.
    // x's input arrives at 10 + 3 = 13: the vector core runs y in the gap, [0,5], and x
    // still starts at 13. b waits for x: 23 + 3 = 26.
    let exp = expanded(1, &[(AIC, 2, flops(10)), (AIV, 1, flops(10)), (AIV, 1, flops(5))], &[(0, 2), (2, 1)]);
    let p = list_schedule(&exp, &profile(1, 1, 1), &FlopsCost { local: 3, remote: 7 });
    assert_eq!(rows(&p.queues), vec![vec![0, 1], vec![3, 2]]);
    assert_eq!(p.start_ns, vec![0, 26, 13, 0]);
    assert_eq!(p.finish_ns, vec![10, 36, 23, 5]);
    assert_eq!(p.makespan_ns, 36);
}

#[test]
fn a_successor_follows_its_producer_on_the_same_core_and_others_take_free_cores() {
    // One AIC core (0), two AIV cores (1, 2); tiles cost their flops, edges 3 ns.
    // Nodes: AIC p = 0 (7), AIC q = 1 (10), AIV x = 2, a = 3, b = 4 (10 each).
    // p → x → q (levels 33, 23, 10) and a → b (levels 23, 10).
    // At 0: p runs [0,7] on the AIC, a [0,10] on core 1; core 2 has nothing ready.
    // At 10: x is ready everywhere (7 + 3), and b is ready on core 1 only, right after a
    // (on core 2 it would be ready at 13). The more urgent x takes the free core 2, not
    // core 1, so b also starts at 10, on core 1. q: 20 + 3 = 23.
    let exp = expanded(1, &[(AIC, 1, flops(7)), (AIC, 1, flops(10)), (AIV, 3, flops(10))], &[(0, 2), (2, 1), (3, 4)]);
    let p = list_schedule(&exp, &profile(1, 2, 1), &FlopsCost { local: 3, remote: 7 });
    assert_eq!(rows(&p.queues), vec![vec![0, 1], vec![3, 4], vec![2]]);
    assert_eq!(p.start_ns, vec![0, 23, 10, 0, 10]);
    assert_eq!(p.finish_ns, vec![7, 33, 20, 10, 20]);
    assert_eq!(p.makespan_ns, 33);
}

#[test]
fn with_no_free_core_an_urgent_node_displaces_the_least_urgent_affine_node() {
    // One AIC core (0), two AIV cores (1, 2); tiles cost their flops, edges 3 ns.
    // AIC p = 0 (7), q = 1 (10), r = 2 (20); AIV x = 3, a1 = 4, a2 = 5, b1 = 6, b2 = 7 (10).
    // p → x → r, a1 → b1 → q, a2 → b2. Levels: x 33, b1 23, b2 10.
    // At 0: p [0,7]; a1 on core 1 and a2 on core 2, [0,10].
    // At 10 both vector cores free up. x is ready everywhere (7 + 3); b1 is ready on core
    // 1 only and b2 on core 2 only (elsewhere at 13). x is the most urgent and there is no
    // free core without an affine node, so it takes core 2 from the least urgent b2; b1
    // starts on core 1. At 20 core 2 is free again and b2 still follows a2 there.
    // AIC: r and q are both ready at 20 + 3 = 23; r is more urgent: r [23,43], q [43,53].
    let exp = expanded(
        1,
        &[(AIC, 1, flops(7)), (AIC, 1, flops(10)), (AIC, 1, flops(20)), (AIV, 5, flops(10))],
        &[(0, 3), (3, 2), (4, 6), (6, 1), (5, 7)],
    );
    let p = list_schedule(&exp, &profile(1, 2, 1), &FlopsCost { local: 3, remote: 7 });
    assert_eq!(rows(&p.queues), vec![vec![0, 2, 1], vec![4, 6], vec![5, 3, 7]]);
    assert_eq!(p.start_ns, vec![0, 43, 23, 10, 0, 0, 10, 20]);
    assert_eq!(p.finish_ns, vec![7, 53, 43, 20, 10, 10, 20, 30]);
    assert_eq!(p.makespan_ns, 53);
}

#[test]
fn nodes_fed_from_another_server_take_the_core_idle_longest_and_others_the_core_freed_last() {
    // Every tile 10 ns, edges 3 ns on a rank and 7 ns across ranks. Two ranks, cores 0-2 and
    // 3-5 (AIC, AIV, AIV). Rank 0 runs 0 [0,10] and 1 [10,20] on core 1 (1 follows 0 there);
    // they feed rank 1's 2 and 3, ready at 17 and 27. 2 takes core 4 or 5 at 17, [17,27]; at
    // 27 that core is freed and 3 is ready.
    let exp = expanded(2, &[(AIV, 2, W)], &[(0, 1), (0, 2), (1, 3)]);
    let prof = profile(1, 2, 2);
    // Both ranks on one server: 3 takes the core freed last, 2's (the lowest id, core 4,
    // went first), [27,37].
    let p = list_schedule(&exp, &prof, &TenAndEdgesOnServers(2));
    assert_eq!(rows(&p.queues), vec![vec![], vec![0, 1], vec![], vec![], vec![2, 3], vec![]]);
    assert_eq!(p.start_ns, vec![0, 10, 17, 27]);
    // A server each: 2's and 3's inputs come from another server, so each takes the core idle
    // longest: 2 core 5 (of the two idle since the start, the higher id), 3 core 4, not core 5,
    // freed at 27. On one core 3 would follow 2 in the table, and a run in which both inputs
    // land together would run them one after the other.
    let p = list_schedule(&exp, &prof, &TenAndEdgesOnServers(1));
    assert_eq!(rows(&p.queues), vec![vec![], vec![0, 1], vec![], vec![], vec![3], vec![2]]);
    assert_eq!(p.start_ns, vec![0, 10, 17, 27]);
    assert_eq!(p.makespan_ns, 37);
    // With no servers in the cost model, as with one server.
    let p = list_schedule(&exp, &prof, &TenAndEdges);
    assert_eq!(rows(&p.queues), vec![vec![], vec![0, 1], vec![], vec![], vec![2, 3], vec![]]);
}

#[test]
fn same_core_predecessor_costs_no_edge_and_cross_rank_costs_more() {
    // Two ranks, one AIV core each (global cores 1 and 3). Per rank: AIV 0 → AIV 1.
    // Rank 0's node 0 also feeds rank 1's node 3 (a put and its remote reader).
    let exp = expanded(2, &[(AIV, 2, W)], &[(0, 1), (2, 3), (0, 3)]);
    let p = list_schedule(&exp, &profile(1, 1, 2), &TenAndEdges);
    assert_eq!(p.core_of.values().map(|c| c.raw()).collect::<Vec<_>>(), vec![1, 1, 3, 3]);
    // Node 1 follows node 0 on its own core: no edge cost.
    assert_eq!((p.start_ns[NodeId::new(1)], p.finish_ns[NodeId::new(1)]), (10, 20));
    // Node 3 waits for node 2 (same core, 10) and node 0 (other rank, 10 + 7).
    assert_eq!((p.start_ns[NodeId::new(3)], p.finish_ns[NodeId::new(3)]), (17, 27));
    assert_eq!(p.makespan_ns, 27);
}

#[test]
fn equally_urgent_puts_go_out_in_rank_rotated_order() {
    // Four ranks, one AIV core each. On every rank, put k writes to rank k, so its
    // rotation is (k - rank) mod 4. All puts are equally urgent: the core sends them in
    // rotation order, so rank r writes to r, r+1, r+2, r+3 and in every time slot the
    // four ranks write to four different peers.
    let ranks = 4;
    let mut exp = expanded(ranks, &[(AIV, 4, W)], &[]);
    for v in 0..16u32 {
        let (rank, k) = (v / 4, v % 4);
        exp.rotation[NodeId::new(v)] = (k + ranks - rank) % ranks;
    }
    let prof = profile(1, 1, ranks);
    let p = list_schedule(&exp, &prof, &UnitCost);
    for rank in 0..ranks {
        let aiv = rank * prof.cores_per_rank() + 1;
        let dsts: Vec<u32> = p.queues.row(CoreId::new(aiv)).iter().map(|&v| v.raw() % 4).collect();
        let expected: Vec<u32> = (0..4).map(|i| (rank + i) % 4).collect();
        assert_eq!(dsts, expected, "rank {rank}");
    }
    for slot in 0..4u64 {
        let mut dsts: Vec<u32> = (0..16u32).filter(|&v| p.start_ns[NodeId::new(v)] == slot).map(|v| v % 4).collect();
        dsts.sort_unstable();
        assert_eq!(dsts, vec![0, 1, 2, 3], "slot {slot}");
    }
}

#[test]
fn forward_backward_passes_interleave_stages_that_critical_path_runs_one_after_another() {
    // One AIC core, one AIV core, edges free. Three jobs j: AIC a_j (10) → AIC b_j (5) →
    // AIV p_j (10); a_j = j, b_j = 3 + j, p_j = 6 + j.
    let pairs: Vec<(u32, u32)> = (0..3).flat_map(|j| [(j, 3 + j), (3 + j, 6 + j)]).collect();
    let exp = expanded(1, &[(AIC, 3, flops(10)), (AIC, 3, flops(5)), (AIV, 3, flops(10))], &pairs);
    let prof = profile(1, 1, 1);
    let cost = FlopsCost { local: 0, remote: 0 };
    // By bottom level (a 25, b 15, p 10) the AIC runs every a before any b, so the vector
    // core starts at 35 and ends at 65.
    let setup = Setup::new(&exp, &prof, &cost);
    let first = setup.pass(Direction::Forward, priorities_with(&exp, &setup.costs, &cost));
    assert_eq!(first.start_ns, vec![0, 10, 20, 30, 35, 40, 35, 45, 55]);
    // The backward pass, latest-finishing first, runs p2, p1, p0 on the vector core from
    // the end ([0,10], [10,20], [20,30]) and b2 [10,15], a2 [15,25], b1 [25,30], b0
    // [30,35], a1 [35,45], a0 [45,55] on the AIC. By those finish times (a0 55, a1 45,
    // b0 35, b1 30, a2 25, b2 15) the forward pass interleaves: a0, a1, b0, b1, a2, b2,
    // and the vector core runs p0 [25,35], p1 [35,45], p2 [45,55]: 55, AIC work + one p.
    let p = list_schedule(&exp, &prof, &cost);
    assert_eq!(rows(&p.queues), vec![vec![0, 1, 3, 4, 2, 5], vec![6, 7, 8]]);
    assert_eq!(p.start_ns, vec![0, 10, 30, 20, 25, 40, 25, 35, 45]);
    assert_eq!(p.makespan_ns, 55);
    assert_valid(&exp, &prof, &p, &cost);
    assert_work_conserving(&exp, &prof, &p, &cost);
}

#[test]
fn with_a_shared_link_a_rank_streams_its_puts_on_a_few_dedicated_vector_cores() {
    // Link 6 B/ns, a put streams at most 4 B/ns: two puts fill the link, so the last two
    // vector cores (3, 4) are lanes. On a lane a put gets min(4, 6 / 2) = 3 B/ns: 2 + 20 = 22.
    // The local put 0 leaves the link alone: 2 + 60 / 4 = 17, on a core that is not a lane.
    // Lanes: puts 1 and 2 at [0, 22], put 3 [22, 44] on the lane freed last (core 4).
    // Cores 1, 2 run put 0 [0, 17] and the vector tiles 4 [0, 10], 5 [10, 20], 6 [17, 27]
    // while lane cores would be free at 22: nothing but puts runs on a lane.
    let exp = puts_and_vector_work();
    let prof = profile(1, 4, 2);
    let cost = LinkCost { link: 6, stream: 4, edge: 0 };
    let p = list_schedule(&exp, &prof, &cost);
    let shift = |row: &[u32], by: u32| row.iter().map(|v| v + by).collect::<Vec<_>>();
    let rank0: Vec<Vec<u32>> = vec![vec![], vec![0, 6], vec![4, 5], vec![1], vec![2, 3]];
    let expected: Vec<Vec<u32>> = rank0.iter().cloned().chain(rank0.iter().map(|r| shift(r, 7))).collect();
    assert_eq!(rows(&p.queues), expected);
    assert_eq!(&p.start_ns.as_slice()[..7], &[0, 0, 0, 22, 0, 10, 17]);
    assert_eq!(&p.finish_ns.as_slice()[..7], &[17, 22, 22, 44, 10, 20, 27]);
    assert_eq!(p.makespan_ns, 44);
    assert_valid(&exp, &prof, &p, &cost);
    assert_work_conserving(&exp, &prof, &p, &cost);

    // Without the link, every put is charged alone (2 + 60 / 4 = 17) and all four go at once;
    // the vector tiles follow at 17 on the cores freed last first.
    let p = list_schedule(&exp, &prof, &NoLink(cost));
    assert_eq!(&rows(&p.queues)[..5], &[vec![], vec![0], vec![1, 6], vec![2, 5], vec![3, 4]]);
    assert_eq!(p.makespan_ns, 27);
}

#[test]
fn lanes_leave_a_vector_core_for_other_work_and_need_two() {
    let exp = puts_and_vector_work();
    // A link 100 times a put's stream would want 100 lanes; two vector cores give one lane
    // (local core 2) and one core for everything else. On the lane: 2 + 60 / 1 = 62 each.
    let cost = LinkCost { link: 100, stream: 1, edge: 0 };
    let p = list_schedule(&exp, &profile(1, 2, 2), &cost);
    assert_eq!(&rows(&p.queues)[..3], &[vec![], vec![0, 4, 5, 6], vec![1, 2, 3]]);
    assert_eq!(p.finish_ns[NodeId::new(3)], 3 * 62);
    assert_valid(&exp, &profile(1, 2, 2), &p, &cost);
    // With a single vector core there is no lane: everything runs there, puts charged alone.
    let p = list_schedule(&exp, &profile(1, 1, 2), &cost);
    assert_eq!(rows(&p.queues)[1], [0, 1, 2, 3, 4, 5, 6]);
    assert_eq!(p.makespan_ns, 4 * 62 + 30);
    // One rank: every put is local, so there is no lane either.
    let one = expanded(1, &[(AIV, 4, Work { flops: 2, bytes: 0, remote_bytes: 60 })], &[]);
    let p = list_schedule(&one, &profile(1, 2, 1), &cost);
    assert_eq!(rows(&p.queues), vec![vec![], vec![0, 3], vec![1, 2]]);
}

#[test]
fn beyond_one_server_a_lane_more_is_planned_when_it_shortens_the_plan() {
    // Two ranks of one AIC and four vector cores; each rank sends three puts (2 flops, 60
    // bytes) to the other. Link 6 B/ns, stream 4: two lanes fill the link (local cores 3, 4),
    // a put on one takes 2 + 60 / 3 = 22, so puts 1 and 2 run [0, 22] and put 3 [22, 44].
    let work = Work { flops: 2, bytes: 0, remote_bytes: 60 };
    let mut exp = expanded(2, &[(AIV, 3, work)], &[]);
    for v in 0..6 {
        exp.rotation[NodeId::new(v)] = 1;
    }
    let prof = profile(1, 4, 2);
    let tiered = |per_server| TieredCost {
        link: LinkCost { link: 6, stream: 4, edge: 0 },
        per_server,
        tier: 1000,
        extra: 0,
        hbm: None,
    };
    let lane_rows = |p: &Placement| rows(&p.queues)[1..5].to_vec();
    // On one server there is no tier, and the lanes are the link's.
    let p = list_schedule(&exp, &prof, &tiered(2));
    assert_eq!(lane_rows(&p), [vec![], vec![], vec![0], vec![1, 2]]);
    assert_eq!(p.makespan_ns, 44);
    // A rank a server: the tier (1000 B/ns) holds a put for 1 ns and its half fixed part, 1
    // ns, and every put crosses. The plan is 44 against a bound of 22 without the lanes'
    // term, so a third lane is tried (local core 2): each put then takes 2 + 60 / 2 = 32, all
    // three at once, 32 < 44 less 1%; a fourth would leave no vector core for other work.
    let p = list_schedule(&exp, &prof, &tiered(1));
    assert_eq!(lane_rows(&p), [vec![], vec![0], vec![1], vec![2]]);
    assert_eq!(p.makespan_ns, 32);
    assert_eq!((&p.start_ns.as_slice()[..3], &p.finish_ns.as_slice()[..3]), (&[0, 0, 0][..], &[32, 32, 32][..]));
    // With vector work beside the puts (`puts_and_vector_work`: a local put and three 10 ns
    // tiles a rank) a third lane would leave one core for 17 + 30 = 47 ns of it, longer than
    // the two lanes' 44: the plan keeps two.
    let p = list_schedule(&puts_and_vector_work(), &prof, &tiered(1));
    assert_eq!(&rows(&p.queues)[3..5], &[vec![1], vec![2, 3]]);
    assert_eq!(p.makespan_ns, 44);
}

/// [`LinkCost`], expecting put `v` of every rank with `v % 3 == 1` to take half its time
/// (as a put likely to skip its bytes at run time would).
struct HalfExpected(LinkCost);
impl CostModel for HalfExpected {
    fn tile_ns(&self, core: CoreKind, work: &Work) -> u64 {
        self.0.tile_ns(core, work)
    }
    fn node_tile_ns(&self, node: NodeId, family_ns: u64) -> u64 {
        if node.raw() % 3 == 1 { family_ns / 2 } else { family_ns }
    }
    fn edge_ns(&self, cross_rank: bool) -> u64 {
        self.0.edge_ns(cross_rank)
    }
    fn link_bytes_per_s(&self) -> Option<u64> {
        self.0.link_bytes_per_s()
    }
    fn family_put(&self, family: usize, core: CoreKind, work: &Work) -> PutShape {
        self.0.family_put(family, core, work)
    }
}

#[test]
fn lanes_send_round_by_round_when_every_destination_takes_as_long_and_by_priority_otherwise() {
    // Three ranks of one AIC (local core 0) and two vector cores (1, 2); core 2 is the one
    // lane (link 6 B/ns, stream 4: a put on it takes 2 + 60 / 4 = 17). Rank r: put 3r to rank
    // r + 1 (rotation 1), put 3r + 1 to rank r + 2 (rotation 2), which feeds AIC tile 3r + 2
    // (100): the second put is the more urgent.
    let work = Work { flops: 2, bytes: 0, remote_bytes: 60 };
    let pairs: Vec<(u32, u32)> = (0..3).map(|r| (3 * r + 1, 3 * r + 2)).collect();
    let mut exp = expanded(3, &[(AIV, 2, work), (AIC, 1, flops(100))], &pairs);
    for r in 0..3 {
        exp.rotation[NodeId::new(3 * r)] = 1;
        exp.rotation[NodeId::new(3 * r + 1)] = 2;
    }
    let prof = profile(1, 2, 3);
    // Every rank sends each destination one 17 ns put: the rounds stay in step, and the lane
    // sends round 1 first though round 2's put is more urgent: puts [0, 17], [17, 34], then
    // the AIC tile [34, 134].
    let cost = LinkCost { link: 6, stream: 4, edge: 0 };
    let p = list_schedule(&exp, &prof, &cost);
    for r in 0..3u32 {
        assert_eq!(rows(&p.queues)[3 * r as usize + 2], [3 * r, 3 * r + 1], "rank {r}'s lane");
    }
    assert_eq!((&p.start_ns.as_slice()[..3], &p.finish_ns.as_slice()[..3]), (&[0, 17, 34][..], &[17, 34, 134][..]));
    assert_valid(&exp, &prof, &p, &cost);
    // The second put expected to take half as long (8): the destinations' loads differ, the
    // rounds would drift apart, and the lane goes by priority: put 1 [0, 8], put 0 [8, 25],
    // the AIC tile [8, 108].
    let cost = HalfExpected(cost);
    let p = list_schedule(&exp, &prof, &cost);
    for r in 0..3u32 {
        assert_eq!(rows(&p.queues)[3 * r as usize + 2], [3 * r + 1, 3 * r], "rank {r}'s lane");
    }
    assert_eq!((&p.start_ns.as_slice()[..3], &p.finish_ns.as_slice()[..3]), (&[8, 0, 8][..], &[25, 8, 108][..]));
    assert_valid(&exp, &prof, &p, &cost);
    assert_work_conserving(&exp, &prof, &p, &cost);
}

#[test]
fn within_one_server_vector_tiles_book_their_hbm_bytes_first_come_first_served() {
    // The layout of `with_a_shared_link_a_rank_streams_its_puts_on_a_few_dedicated_vector_cores`
    // (lanes 3 and 4; both ranks send the other three puts alike, so the lanes go by round),
    // both ranks on one server, and each vector tile (10 ns) moves 30 bytes through its rank's
    // HBM at 1 B/ns. Tile 4 starts at 0 on core 2 and is done when its bytes are, at 30; put 0
    // leaves core 1 at 17, where tile 5 starts and books the HBM after tile 4's bytes: done at
    // 60; tile 6 starts on core 2 at 30 and books after those: 90. The puts book nothing and
    // keep their times.
    let exp = puts_and_vector_work();
    let prof = profile(1, 4, 2);
    let cost = |per_server, hbm| TieredCost {
        link: LinkCost { link: 6, stream: 4, edge: 0 },
        per_server,
        tier: 1,
        extra: 5,
        hbm,
    };
    let p = list_schedule(&exp, &prof, &cost(2, Some(30)));
    assert_eq!(&p.start_ns.as_slice()[..7], &[0, 0, 0, 22, 0, 17, 30]);
    assert_eq!(&p.finish_ns.as_slice()[..7], &[17, 22, 22, 44, 30, 60, 90]);
    assert_eq!(p.makespan_ns, 90);
    // (Not `assert_valid`: a booked tile runs longer than its cost.) Rank 1 has an HBM of its
    // own: the same times. Tile 6 now follows tile 4 on core 2 (without the HBM it followed
    // put 0 on core 1, and the vector tiles ran 4 [0, 10], 5 [10, 20], 6 [17, 27]).
    assert_eq!(&p.finish_ns.as_slice()[7..], &[17, 22, 22, 44, 30, 60, 90]);
    assert_eq!(&rows(&p.queues)[..3], &[vec![], vec![0, 5], vec![4, 6]]);
    assert_eq!(list_schedule(&exp, &prof, &cost(2, None)).makespan_ns, 44);

    // Each rank on a server of its own: the layer spans two servers and nothing is booked.
    let unbooked = list_schedule(&exp, &prof, &cost(1, None));
    let p = list_schedule(&exp, &prof, &cost(1, Some(30)));
    assert_eq!((&p.start_ns, &p.finish_ns), (&unbooked.start_ns, &unbooked.finish_ns));
}
