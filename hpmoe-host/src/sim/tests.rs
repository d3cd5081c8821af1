//! Hand-computed cases: the engine on hand-built programs, and whole taskflows through
//! `compile`, the simulator, the baseline and the bound.

use super::engine::{Timing, run};
use super::fabric::NetParams;
use super::program::{LinkUse, Program, SimCounterId, Task, TaskId};
use super::*;
use hpmoe_core::cost::CostProfile;
use hpmoe_core::graph::Csr;
use hpmoe_core::ids::{CoreId, FamilyId, NodeId, RankId};
use hpmoe_core::model::{Affine, CoreKind, DType, Taskflow};

/// poll 7, issue 3, latency 1000 ns, injection and ejection 2 bytes/ns, all ranks on one
/// server, HBM unlimited.
const T: Timing = Timing {
    poll_ns: 7,
    issue_ns: 3,
    net: NetParams {
        inject: 2_000_000_000,
        eject: 2_000_000_000,
        cross_server: 2_000_000_000,
        dies_per_server: 16,
        latency: 1000,
        cross_server_latency: 1000,
    },
    hbm_bytes_per_s: u64::MAX,
    noise: None,
};

fn task(node: u32, rank: u32, wait: Option<(u32, u32)>, exec_ns: u64, link: Option<u64>) -> Task {
    Task {
        node: NodeId::new(node),
        family: FamilyId::new(0),
        rank: RankId::new(rank),
        wait: wait.map(|(counter, target)| (SimCounterId::new(counter), target)),
        exec_ns,
        link: link.map(|bytes| LinkUse { bytes, cap: u64::MAX, to: RankId::new(rank ^ 1) }),
        computes: link.is_none(),
        hbm_bytes: 0,
    }
}

/// One AIC and two AIV per rank (3 cores per rank).
fn program(ranks: u32, queues: &[&[u32]], tasks: Vec<Task>, signals: &[&[u32]], counter_rank: Vec<u32>) -> Program {
    let mut rows: Vec<Vec<TaskId>> = queues.iter().map(|q| q.iter().copied().map(TaskId::new).collect()).collect();
    rows.resize((ranks * 3) as usize, Vec::new());
    let mut sig: Vec<Vec<SimCounterId>> =
        signals.iter().map(|s| s.iter().copied().map(SimCounterId::new).collect()).collect();
    sig.resize(tasks.len(), Vec::new());
    Program {
        ranks,
        cores_per_rank: 3,
        aic_per_rank: 1,
        queues: Csr::from_rows(rows),
        tasks: tasks.into(),
        signals: Csr::from_rows(sig),
        counter_rank: counter_rank.into_iter().map(RankId::new).collect(),
    }
}

fn result_of(p: &Program) -> SimResult {
    let r = run(p, T).unwrap();
    let mut out = SimResult::empty(p.ranks, p.cores_per_rank, p.aic_per_rank, p.tasks.len());
    out.absorb(p, &r, 0);
    out.finish(T.poll_ns);
    out
}

#[test]
fn a_cross_core_wait_costs_the_signal_issue_and_one_poll() {
    // Core 0 runs task 0 (100 ns) and signals counter 0; core 1's task 1 waits for it.
    let p = program(
        1,
        &[&[0], &[1]],
        vec![task(0, 0, None, 100, None), task(1, 0, Some((0, 1)), 50, None)],
        &[&[0]],
        vec![0],
    );
    let r = result_of(&p);
    let t = &r.tiles;
    assert_eq!((t[0].start_ns, t[0].end_ns, t[0].done_ns), (0, 100, 103));
    // Visible at 103, seen one poll later.
    assert_eq!((t[1].arrive_ns, t[1].start_ns, t[1].end_ns, t[1].done_ns), (0, 110, 160, 160));
    assert_eq!(t[1].released_by, Some(NodeId::new(0)));
    assert_eq!(r.makespan_ns, 160);
    assert_eq!(r.cores[0], CoreStats { busy_ns: 100, sync_ns: 3, wait_ns: 0, idle_ns: 57, tiles: 1 });
    assert_eq!(r.cores[1], CoreStats { busy_ns: 50, sync_ns: 7, wait_ns: 103, idle_ns: 0, tiles: 1 });
    assert_eq!(r.cores[2], CoreStats { idle_ns: 160, ..CoreStats::default() });
}

#[test]
fn a_put_streams_then_its_signal_crosses_the_link() {
    // Rank 0's AIV (global core 1) puts 1000 B after 10 ns of exec and signals counter 0 on
    // rank 1, where the AIC (global core 3) waits for it.
    let p = program(
        2,
        &[&[], &[0], &[], &[1]],
        vec![task(0, 0, None, 10, Some(1000)), task(1, 1, Some((0, 1)), 50, None)],
        &[&[0]],
        vec![1],
    );
    let r = result_of(&p);
    // 1000 B at 2 B/ns: 10 → 510; the data lands at 1510 with the signal it carries, seen at
    // 1517. The putting core waits for the put's completion until 2510 (the quiet).
    assert_eq!((r.tiles[0].start_ns, r.tiles[0].end_ns, r.tiles[0].done_ns), (0, 510, 2510));
    assert_eq!(
        r.flows,
        vec![FlowRecord {
            node: NodeId::new(0),
            rank: RankId::new(0),
            to: RankId::new(1),
            bytes: 1000,
            start_ns: 10,
            end_ns: 510,
            delivered_ns: 1510
        }]
    );
    assert_eq!((r.tiles[1].start_ns, r.tiles[1].end_ns), (1517, 1567));
    assert_eq!(r.makespan_ns, 2510);
    // Rank 0's communication (10..1510) overlaps no computation of rank 0.
    assert_eq!(
        r.rank_stats[0],
        RankStats { link_bytes: 1000, link_busy_ns: 500, comm_ns: 1500, exposed_comm_ns: 1500 }
    );
    assert_eq!(r.rank_stats[1], RankStats::default());
}

#[test]
fn puts_in_flight_share_their_rank_link() {
    // Two AIVs of rank 0 put 1000 B each into rank 1 at time 0 (1 B/ns each, both out at
    // 1000); after its quiet (until 3000) the first AIV puts 500 B alone (2 B/ns, out at
    // 3250, landed at 4250, its quiet done at 5250).
    let p = program(
        2,
        &[&[], &[0, 2], &[1]],
        vec![task(0, 0, None, 0, Some(1000)), task(1, 0, None, 0, Some(1000)), task(2, 0, None, 0, Some(500))],
        &[],
        vec![],
    );
    let r = result_of(&p);
    let ends: Vec<(u64, u64)> = r.flows.iter().map(|f| (f.start_ns, f.end_ns)).collect();
    assert_eq!(ends, vec![(0, 1000), (0, 1000), (3000, 3250)]);
    assert_eq!(r.makespan_ns, 5250);
    assert_eq!(r.rank_stats[0].link_busy_ns, 1250);
    assert_eq!(r.summary().exposed_comm_ns, 2000 + 1250);
}

#[test]
fn a_signal_that_lands_before_the_core_arrives_costs_only_the_poll() {
    // Core 0: task 0 (10 ns) signals counter 0. Core 1: task 1 (100 ns), then task 2 waits
    // for counter 0, reached long before.
    let p = program(
        1,
        &[&[0], &[1, 2]],
        vec![task(0, 0, None, 10, None), task(1, 0, None, 100, None), task(2, 0, Some((0, 1)), 5, None)],
        &[&[0]],
        vec![0],
    );
    let r = result_of(&p);
    assert_eq!((r.tiles[2].arrive_ns, r.tiles[2].start_ns, r.tiles[2].end_ns), (100, 107, 112));
    assert_eq!(r.tiles[2].released_by, Some(NodeId::new(0)));
    assert_eq!(r.cores[1].wait_ns, 0);
    assert_eq!(r.cores[1].sync_ns, 7);
}

#[test]
fn a_wait_that_cannot_be_met_is_a_deadlock_naming_the_core() {
    // Task 1 waits for 2 signals; only one is ever sent.
    let p = program(
        1,
        &[&[0], &[1]],
        vec![task(0, 0, None, 10, None), task(1, 0, Some((0, 2)), 5, None)],
        &[&[0]],
        vec![0],
    );
    match run(&p, T) {
        Err(SimError::Deadlock(stuck)) => {
            assert_eq!(
                stuck,
                vec![Stuck {
                    core: CoreId::new(1),
                    node: NodeId::new(1),
                    counter: SimCounterId::new(0),
                    target: 2,
                    seen: 1
                }]
            );
            let msg = SimError::Deadlock(stuck).to_string();
            assert!(msg.contains("core 1 waits to run node 1 on counter 0 (seen 1 of 2)"), "{msg}");
        }
        other => panic!("expected a deadlock, got {other:?}"),
    }
}

/// 1 GHz: every per-cycle figure is per ns. Hit rate 1, so L2-eligible bytes read at 40 B/ns.
fn round_profile() -> CostProfile {
    CostProfile {
        cube_efficiency: 1.0,
        l2_hit_rate: 1.0,
        kernel_launch_ns: 5000.0,
        host_collective_sync_ns: 20000.0,
        ..hpmoe_core::testing::round_profile()
    }
}

/// One rank: a matmul on the AIC, then a cast of its result on an AIV.
fn matmul_then_cast() -> Taskflow {
    let mut tf = Taskflow::new("mm_cast", hpmoe_core::model::MachineProfile::small(1, 1));
    let a = tf.input("a", DType::Bf16, &[16, 32]);
    let w = tf.input("w", DType::Bf16, &[32, 16]);
    let h = tf.scratch("h", DType::Bf16, &[16, 16]);
    let o = tf.output("o", DType::F32, &[16, 16]);
    tf.tile("mm", CoreKind::Aic, |t| {
        t.grid("i", 1);
        t.op("matmul", [a.whole(), w.whole(), h.whole()]);
    });
    tf.tile("cast", CoreKind::Aiv, |t| {
        t.grid("i", 1);
        t.op("cast", [h.whole(), o.whole()]);
    });
    tf
}

#[test]
fn matmul_then_cast_simulates_and_runs_kernel_by_kernel_as_computed_by_hand() {
    let tf = matmul_then_cast();
    let cost = hpmoe_core::cost::TaskflowCost::new(&tf, round_profile());
    // mm: 100 + max(16 384 flops / 1000 → 17, 2048 cold B / 10 → 205, 512 B / 20 → 26) = 305.
    // cast: 100 + max(256 flops / 10 → 26, 512 warm B / 40 → 13, 1024 B / 8 → 128) = 228.
    assert_eq!((cost.family(0).exec_ns, cost.family(1).exec_ns), (305, 228));
    let compiled = hpmoe_core::compile(&tf, &cost).unwrap();
    let cmp = compare(&compiled, &tf.profile, &cost).unwrap();
    // Taskflow: 305, signal issue 20, poll 30, 228.
    assert_eq!(cmp.taskflow.makespan_ns, 305 + 20 + 30 + 228);
    // Baseline: launch 5000, mm, launch 5000, cast (no all-to-all, no host sync).
    assert_eq!(cmp.baseline.result.makespan_ns, 5000 + 305 + 5000 + 228);
    let k = &cmp.baseline.kernels;
    assert_eq!((k[0].start_ns, k[0].end_ns, k[1].start_ns, k[1].end_ns), (5000, 5305, 10305, 10533));
    assert_eq!(
        cmp.bound,
        Bound {
            critical_path_ns: 533,
            aic_work_per_core_ns: 305,
            aiv_work_per_core_ns: 114,
            // The AIC's one tile and the cast after it; the AIV's one tile after the matmul.
            aic_span_ns: 533,
            aiv_span_ns: 533,
            hbm_ns: 1,
            ..Bound::default()
        }
    );
    assert_eq!(cmp.bound.binding(), "critical path");
    assert!((cmp.speedup() - 10533.0 / 583.0).abs() < 1e-12);
}

/// Two ranks: every rank sends an 8×8 BF16 block to each rank (itself included), then one
/// tile per rank reads everything that arrived.
fn exchange() -> Taskflow {
    let mut tf = Taskflow::new("exchange", hpmoe_core::model::MachineProfile::small(1, 2));
    let x = tf.input("x", DType::Bf16, &[16, 8]);
    let recv = tf.symmetric("recv", DType::Bf16, &[16, 8]);
    let o = tf.output("o", DType::F32, &[16, 8]);
    tf.tile("send", CoreKind::Aiv, |t| {
        let dst = t.grid("dst", 2);
        t.put(x.slice(dst.clone() * 8, 8), recv.on(dst).slice(Affine::rank() * 8, 8));
    });
    tf.tile("use", CoreKind::Aiv, |t| {
        t.grid("i", 1);
        t.op("cast", [recv.whole(), o.whole()]);
    });
    tf
}

#[test]
fn exchange_simulates_and_runs_kernel_by_kernel_as_computed_by_hand() {
    let tf = exchange();
    let cost = hpmoe_core::cost::TaskflowCost::new(&tf, round_profile());
    // send: exec = overhead 100; its 128 B source reads cold at 10 B/ns (13 ns), so it
    // streams at min(128/13 B/ns, 8 B/ns write) = 8 B/ns. Through the 4 B/ns link: 32 ns;
    // to itself, a local copy at 8 B/ns: 16 ns.
    let put = cost.family(0).put.unwrap();
    assert_eq!((cost.family(0).exec_ns, put.stream_bytes_per_s, put.bytes), (100, 8_000_000_000, 128));
    // use: 100 + max(128 flops / 10 → 13, 256 cold B / 10 → 26, 512 B / 8 → 64) = 164.
    assert_eq!(cost.family(1).exec_ns, 164);
    let compiled = hpmoe_core::compile(&tf, &cost).unwrap();
    let cmp = compare(&compiled, &tf.profile, &cost).unwrap();
    // The remote put: out at 132, lands at 1132 with its signal, seen at 1162; use runs
    // 164 ns. (The local put is done by 136 whichever core runs it.) The putting core waits
    // for the put's completion until 2132 (the quiet), the end of the run.
    assert_eq!(cmp.taskflow.makespan_ns, 2132);
    assert_eq!(cmp.taskflow.tiles.iter().map(|t| t.end_ns).max(), Some(1162 + 164));
    for r in 0..2 {
        let f = cmp.taskflow.flows[r];
        assert_eq!(
            (f.rank, f.bytes, f.start_ns, f.end_ns, f.delivered_ns),
            (RankId::new(r as u32), 128, 100, 132, 1132)
        );
        // Communication 100..1132 overlaps no computation (the puts' exec is overhead only).
        assert_eq!(cmp.taskflow.rank_stats[r].exposed_comm_ns, 1032);
    }
    // Baseline: launch + host sync, the send kernel (remote put landed at 1132, its quiet
    // done at 2132), launch, use.
    let k = &cmp.baseline.kernels;
    assert!(k[0].collective && !k[1].collective);
    assert_eq!((k[0].start_ns, k[0].end_ns), (25_000, 27_132));
    assert_eq!((k[1].start_ns, k[1].end_ns), (32_132, 32_296));
    assert_eq!(cmp.baseline.result.makespan_ns, 32_296);
    assert_eq!(cmp.baseline.overhead_ns(), 30_000);
    // Bound: send over the link (132) then use (164); per rank AIV work 116 + 132 + 164 over 2,
    // or spanned with what precedes and follows it;
    // 128 B in and out of each rank at 4 B/ns; use's 256 B read and 512 B written through
    // the (practically unlimited) HBM.
    assert_eq!(
        cmp.bound,
        Bound {
            critical_path_ns: 296,
            aic_work_per_core_ns: 0,
            aiv_work_per_core_ns: 206,
            aic_span_ns: 0,
            // Two AIVs: heads 0, 0 (the sends) and 132 (use), tails 164, 164 and 0; one core
            // does 0 + 412 + 0, two do (0 + 0 + 412 + 0 + 164) / 2 = 288.
            aiv_span_ns: 288,
            link_ns: 32,
            busiest_link_bytes: 128,
            ejection_ns: 32,
            cross_server_ns: 0,
            hbm_ns: 1,
        }
    );
}

#[test]
fn wave_quantisation_rounds_tiles_up_to_whole_waves() {
    // Five equal tiles on two AIVs: three waves.
    let mut tf = Taskflow::new("waves", hpmoe_core::model::MachineProfile::small(1, 1));
    let x = tf.input("x", DType::Bf16, &[5, 8]);
    let y = tf.output("y", DType::Bf16, &[5, 8]);
    tf.tile("copy", CoreKind::Aiv, |t| {
        let i = t.grid("i", 5);
        t.op("copy", [x.slice(i.clone(), 1), y.slice(i, 1)]);
    });
    let cost = hpmoe_core::cost::TaskflowCost::new(&tf, round_profile());
    let exec = cost.family(0).exec_ns;
    let compiled = hpmoe_core::compile(&tf, &cost).unwrap();
    let base = kernel_by_kernel(&compiled.expanded, &tf.profile, &cost).unwrap();
    assert_eq!(base.kernels[0].waves, 3);
    assert_eq!(base.result.makespan_ns, 5000 + 3 * exec);
    let per_core: Vec<u32> = base.result.cores.iter().map(|c| c.tiles).collect();
    assert_eq!(per_core, vec![0, 3, 2]);
}

#[test]
fn a_cost_model_of_another_taskflow_is_refused() {
    let tf = exchange();
    let other = hpmoe_core::cost::TaskflowCost::new(&matmul_then_cast(), round_profile());
    let compiled = hpmoe_core::compile(&tf, &hpmoe_core::cost::TaskflowCost::new(&tf, round_profile())).unwrap();
    assert!(matches!(simulate(&compiled, &other), Err(SimError::Mismatch(_))));
    assert!(matches!(kernel_by_kernel(&compiled.expanded, &tf.profile, &other), Err(SimError::Mismatch(_))));
    assert!(matches!(lower_bound(&compiled.expanded, &tf.profile, &other), Err(SimError::Mismatch(_))));
}

/// Natural routing on a small layer: the schedule is built for full blocks, each run is
/// priced with its routing's activity.
#[test]
fn skipped_instances_cost_their_overhead_and_move_nothing_in_every_model() {
    use crate::moe::{MoeShape, RoutedTokens};
    // 4 experts, top-2, 64 tokens: 32 rows per (source, expert) on average, slots of 48.
    let shape = MoeShape { tokens_per_rank: 64, ..MoeShape::tiny(2) }.with_natural_routing(48);
    let tf = shape.taskflow().unwrap();
    let cost = TaskflowCost::new(&tf, CostProfile::ascend_a3_die());
    let compiled = hpmoe_core::compile(&tf, &cost).unwrap();
    let full = compare(&compiled, &tf.profile, &cost).unwrap();
    // An even routing fills 32 of each slot's 48 rows: the last 4 of 12 blocks stay empty.
    let even: Vec<Vec<u32>> = (0..2).map(|_| (0..64).flat_map(|t| [t % 4, (t + 1) % 4]).collect()).collect();
    let routing = RoutedTokens::place(&shape, even).unwrap();
    let activity = routing.activity(&shape, &tf, &compiled.expanded.space).unwrap();
    let guarded: usize = tf
        .families
        .iter()
        .zip(&compiled.expanded.space.families)
        .filter(|(f, _)| f.guard.is_some())
        .map(|(_, s)| s.count as usize * 2)
        .sum();
    assert_eq!(activity.skipped() * 3, guarded);
    let run_cost = cost.clone().with_activity(activity.clone());
    let run = compare(&compiled, &tf.profile, &run_cost).unwrap();
    for cmp in [&full, &run] {
        assert!(cmp.bound.ns() <= cmp.taskflow.makespan_ns);
        assert!(cmp.bound.ns() <= cmp.baseline.result.makespan_ns);
    }
    assert!(run.taskflow.makespan_ns < full.taskflow.makespan_ns);
    assert!(run.baseline.result.makespan_ns < full.baseline.result.makespan_ns);
    assert!(run.bound.busiest_link_bytes < full.bound.busiest_link_bytes);
    // A skipped put moves nothing; a skipped tile costs exactly the overhead.
    let skipped_put = compiled
        .expanded
        .space
        .node_ids()
        .find(|&v| activity.skips(v) && cost.family(compiled.expanded.space.family_of(v)).put.is_some())
        .unwrap();
    let (exec, link, computes) = program::lower_node(&compiled.expanded, &run_cost, skipped_put);
    assert_eq!((exec, link, computes), (run_cost.profile().tile_overhead(), None, false));
    // The scheduler's view is the same with or without the activity.
    let again = hpmoe_core::compile(&tf, &run_cost).unwrap();
    assert_eq!(again.table.to_bytes(), compiled.table.to_bytes());
    // An activity for another taskflow is refused.
    let wrong = cost.with_activity(hpmoe_core::cost::Activity::default());
    assert!(matches!(simulate(&compiled, &wrong), Err(SimError::Mismatch(_))));
}

/// Timing noise perturbs the run reproducibly, leaves it alone at 0‰, and keeps each tile's
/// exec time within its deviation of the noise-free run's (on a layer whose tiles do not
/// queue for the HBM, so a tile's exec time is its own).
#[test]
fn timing_noise_is_reproducible_and_bounded() {
    use crate::moe::MoeShape;
    let tf = MoeShape::tiny(2).taskflow().unwrap();
    let mut profile = CostProfile::ascend_a3_die();
    profile.hbm_gb_per_s = 1e9;
    let cost = TaskflowCost::new(&tf, profile);
    let compiled = hpmoe_core::compile(&tf, &cost).unwrap();
    let exact = simulate(&compiled, &cost).unwrap();
    assert_eq!(simulate_with_noise(&compiled, &cost, None).unwrap(), exact);
    assert_eq!(simulate_with_noise(&compiled, &cost, Some(TimingNoise { permille: 0, seed: 5 })).unwrap(), exact);
    let noise = TimingNoise { permille: 100, seed: 5 };
    let noisy = simulate_with_noise(&compiled, &cost, Some(noise)).unwrap();
    assert_eq!(simulate_with_noise(&compiled, &cost, Some(noise)).unwrap(), noisy);
    assert_ne!(noisy.makespan_ns, exact.makespan_ns);
    let exec = |r: &SimResult, v: usize| r.tiles[v].end_ns - r.tiles[v].start_ns;
    let mut moved = 0;
    for v in 0..exact.tiles.len() {
        // A put's end includes its network phase, which the noise leaves alone.
        if cost.family(compiled.expanded.space.family_of(NodeId::new(v as u32))).put.is_some() {
            continue;
        }
        let (e, n) = (exec(&exact, v), exec(&noisy, v));
        assert!(
            n * 1000 >= (e * 900).saturating_sub(1000) && n * 1000 <= e * 1100 + 1000,
            "tile {v}: {e} ns exact, {n} ns noisy"
        );
        moved += usize::from(n != e);
    }
    assert!(moved > exact.tiles.len() / 4, "only {moved} tiles moved");
}
