//! Properties of the simulator, the baseline and the bound over random taskflows
//! (`hpmoe_core::testing`: random DAGs with local, explicit and cross-rank edges, puts and guards
//! included) and random cost profiles.

use hpmoe_core::cost::{CostProfile, TaskflowCost};
use hpmoe_core::expand::Work;
use hpmoe_core::model::CoreKind;
use hpmoe_core::schedule::CostModel;
use hpmoe_core::{Compiled, compile};
use hpmoe_host::sim::{self, FlowRecord, SimResult};
use proptest::prelude::*;

/// A profile with the network and the HBM slow enough, at times, for the tiny puts and
/// tiles of random taskflows to overlap and contend: injection, ejection and cross-server
/// bandwidths drawn independently, one die per server at times (every put then crosses
/// servers), two dies per package at others.
fn profile() -> impl Strategy<Value = CostProfile> {
    (
        (
            prop_oneof![Just(0.01), Just(0.1), Just(196.0)],
            prop_oneof![Just(0.01), Just(0.05), Just(196.0)],
            prop_oneof![Just(0.005), Just(196.0)],
            prop_oneof![Just((1, 1)), Just((2, 8)), Just((1, 2))],
        ),
        prop_oneof![Just(0.0), Just(50.0), Just(500.0)],
        prop_oneof![Just(0.0), Just(0.9)],
        prop_oneof![Just(0.0), Just(1000.0)],
        prop_oneof![Just(0.0), Just(300.0)],
        prop_oneof![Just(0.5), Just(1600.0)],
    )
        .prop_map(|((link, eject, cross, (dies, packages)), overhead, hit, latency, setup, hbm)| CostProfile {
            link_gb_per_s: link,
            ejection_gb_per_s: eject,
            cross_server_gb_per_s: cross,
            dies_per_package: dies,
            packages_per_server: packages,
            tile_overhead_ns: overhead,
            l2_hit_rate: hit,
            link_latency_ns: latency,
            cross_server_latency_ns: 2.0 * latency,
            put_setup_ns: setup,
            hbm_gb_per_s: hbm,
            ..CostProfile::ascend910b()
        })
}

/// Every core runs one tile at a time, each tile's phases are in order, and the per-core
/// time accounting adds up to the makespan.
fn check_cores(r: &SimResult) -> Result<(), TestCaseError> {
    let mut per_core: Vec<Vec<(u64, u64)>> = vec![Vec::new(); r.cores.len()];
    for t in &r.tiles {
        prop_assert!(t.arrive_ns <= t.start_ns && t.start_ns <= t.end_ns && t.end_ns <= t.done_ns, "{t:?}");
        prop_assert!(t.done_ns <= r.makespan_ns);
        per_core[t.core.index()].push((t.arrive_ns, t.done_ns));
    }
    for (c, spans) in per_core.iter_mut().enumerate() {
        spans.sort_unstable();
        for w in spans.windows(2) {
            prop_assert!(w[0].1 <= w[1].0, "core {c} runs two tiles at once: {:?} and {:?}", w[0], w[1]);
        }
        let s = &r.cores[c];
        prop_assert_eq!(s.busy_ns + s.sync_ns + s.wait_ns + s.idle_ns, r.makespan_ns, "core {}", c);
        prop_assert_eq!(s.tiles as usize, spans.len());
    }
    Ok(())
}

/// No tile starts before a predecessor has finished, nor before a predecessor on another
/// rank has finished and its signal crossed the link.
fn check_dependencies(c: &Compiled, r: &SimResult, latency: u64) -> Result<(), TestCaseError> {
    let space = &c.expanded.space;
    for (u, v) in c.expanded.dag.succ.pairs() {
        let (tu, tv) = (&r.tiles[u.index()], &r.tiles[v.index()]);
        let ready = if space.rank_of(u) == space.rank_of(v) { tu.end_ns } else { tu.end_ns + latency };
        prop_assert!(tv.start_ns >= ready, "{u} -> {v}: starts at {} before {}", tv.start_ns, ready);
    }
    Ok(())
}

/// Over every window between a put's start and a put's end, the puts of a rank that lie
/// entirely inside it carry no more bytes than its injection moves in that time; the same
/// for the puts landing on a rank and its ejection, and for the puts a rank sends to other
/// servers and its cross-server bandwidth.
fn check_network_capacity(r: &SimResult, p: &CostProfile) -> Result<(), TestCaseError> {
    for rank in 0..r.ranks {
        let out: Vec<_> = r.flows.iter().filter(|f| f.rank.raw() == rank).collect();
        check_window_capacity(&out, p.link_bytes_per_s())?;
        let landing: Vec<_> = r.flows.iter().filter(|f| f.to.raw() == rank).collect();
        check_window_capacity(&landing, p.ejection_bytes_per_s())?;
        let cross: Vec<_> = out.iter().copied().filter(|f| p.crosses_server(f.rank.raw(), f.to.raw())).collect();
        check_window_capacity(&cross, p.cross_server_bytes_per_s())?;
    }
    Ok(())
}

/// The flows of one resource carry no more than `bytes_per_s` in any window between a
/// flow's start and a flow's end.
fn check_window_capacity(flows: &[&FlowRecord], bytes_per_s: u64) -> Result<(), TestCaseError> {
    for a in flows {
        let mut inside: Vec<_> = flows.iter().filter(|f| f.start_ns >= a.start_ns).collect();
        inside.sort_by_key(|f| f.end_ns);
        let mut bytes = 0u128;
        for f in inside {
            bytes += u128::from(f.bytes);
            let window = u128::from(f.end_ns - a.start_ns);
            prop_assert!(
                bytes * 1_000_000_000 <= u128::from(bytes_per_s) * window,
                "{bytes} B in {window} ns from {a:?} exceeds {bytes_per_s} B/s"
            );
        }
    }
    for f in flows {
        prop_assert!(f.end_ns <= f.delivered_ns);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn simulated_runs_respect_cores_dependencies_the_network_and_the_bound(
        spec in hpmoe_core::testing::taskflow_spec(8),
        profile in profile(),
    ) {
        let tf = spec.taskflow();
        let cost = TaskflowCost::new(&tf, profile.clone());
        let c = compile(&tf, &cost).map_err(|d| TestCaseError::fail(d.render(&tf.sources)))?;
        let cmp = sim::compare(&c, &tf.profile, &cost).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let latency = profile.link_latency();
        for r in [&cmp.taskflow, &cmp.baseline.result] {
            check_cores(r)?;
            check_dependencies(&c, r, latency)?;
            check_network_capacity(r, &profile)?;
            prop_assert!(cmp.bound.ns() <= r.makespan_ns, "bound {:?} above makespan {}", cmp.bound, r.makespan_ns);
        }
        // Baseline kernels run one after another.
        for w in cmp.baseline.kernels.windows(2) {
            prop_assert!(w[0].end_ns + w[1].launch_ns + w[1].host_sync_ns == w[1].start_ns);
        }
        for k in &cmp.baseline.kernels {
            for t in cmp.baseline.result.tiles.iter().filter(|t| t.family.index() == k.family) {
                prop_assert!(k.start_ns <= t.arrive_ns && t.done_ns <= k.end_ns);
            }
        }
        // Deterministic.
        prop_assert_eq!(&sim::simulate(&c, &cost).unwrap(), &cmp.taskflow);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Natural routing: one static schedule, priced with random routings (log-normal
    /// skew, or every token on the same experts), for the forward, the backward (its guards read
    /// the counts the forward announced, an input here) and the training step.
    #[test]
    fn natural_routings_simulate_without_deadlock_within_the_bound(
        ranks in prop::sample::select(vec![1u32, 2, 4]),
        seed in any::<u64>(),
        hot in any::<bool>(),
        pass in prop::sample::select(hpmoe_host::moe::Pass::ALL.to_vec()),
    ) {
        use hpmoe_host::moe::{MoeShape, RoutedTokens};
        let shape = MoeShape::tiny_natural(ranks);
        let tf = shape.pass_taskflow(pass).unwrap();
        let cost = TaskflowCost::new(&tf, CostProfile::ascend_a3_die());
        let c = compile(&tf, &cost).unwrap();
        let routing = if hot {
            let k = shape.top_k as u32;
            let ids = (0..shape.tokens_per_rank).flat_map(|_| 0..k).collect::<Vec<u32>>();
            RoutedTokens::place(&shape, vec![ids; ranks as usize]).unwrap()
        } else {
            shape.route(seed)
        };
        let activity = routing.activity(&shape, &tf, &c.expanded.space).unwrap();
        // A hot routing sends nothing to most experts: their guarded tiles skip.
        prop_assert!(!hot || ranks == 1 || activity.skipped() > 0, "{} of a hot routing skips nothing", pass.name());
        let run = cost.clone().with_activity(activity);
        let cmp = sim::compare(&c, &tf.profile, &run).map_err(|e| TestCaseError::fail(e.to_string()))?;
        for r in [&cmp.taskflow, &cmp.baseline.result] {
            check_cores(r)?;
            check_dependencies(&c, r, run.profile().link_latency())?;
            check_network_capacity(r, run.profile())?;
            prop_assert!(cmp.bound.ns() <= r.makespan_ns, "bound {:?} above makespan {}", cmp.bound, r.makespan_ns);
        }
    }
}

#[test]
fn moe_layers_simulate_within_the_bound_and_beat_the_baseline() {
    for ranks in [1, 2, 4] {
        let shape = hpmoe_host::moe::MoeShape::tiny(ranks);
        let tf = shape.taskflow().unwrap();
        let cost = TaskflowCost::new(&tf, CostProfile::ascend_a3_die());
        let c = compile(&tf, &cost).unwrap();
        let cmp = sim::compare(&c, &tf.profile, &cost).unwrap();
        check_cores(&cmp.taskflow).unwrap();
        check_dependencies(&c, &cmp.taskflow, cost.profile().link_latency()).unwrap();
        assert!(cmp.bound.ns() <= cmp.taskflow.makespan_ns);
        // Six kernels, each paying a launch; the two all-to-alls also pay host sync.
        assert_eq!(cmp.baseline.kernels.len(), 6);
        let collectives = cmp.baseline.kernels.iter().filter(|k| k.collective).count();
        assert_eq!(collectives, if ranks > 1 { 2 } else { 0 });
        assert!(cmp.speedup() > 1.0, "ranks {ranks}: {}", cmp.speedup());
    }
}

#[test]
fn traces_of_a_moe_layer_have_every_tile_put_and_cross_core_release() {
    use hpmoe_host::trace::{Labels, Panel, chrome_trace, svg_timeline};
    let shape = hpmoe_host::moe::MoeShape::tiny(2);
    let tf = shape.taskflow().unwrap();
    let cost = TaskflowCost::new(&tf, CostProfile::ascend910b());
    let c = compile(&tf, &cost).unwrap();
    let cmp = sim::compare(&c, &tf.profile, &cost).unwrap();
    let labels = Labels::new(&tf, &c.expanded);
    for r in [&cmp.taskflow, &cmp.baseline.result] {
        let doc: serde_json::Value = serde_json::from_str(&chrome_trace(r, &labels)).unwrap();
        let events = doc["traceEvents"].as_array().unwrap();
        let count = |ph: &str, cat: &str| events.iter().filter(|e| e["ph"] == ph && e["cat"] == cat).count();
        assert_eq!(count("X", "tile"), c.expanded.nodes());
        assert_eq!(count("X", "link"), r.flows.len());
        let cross = r.tiles.iter().filter(|t| t.released_by.is_some_and(|p| r.tiles[p.index()].core != t.core));
        let arrows = cross.count();
        assert_eq!((count("s", "dep"), count("f", "dep")), (arrows, arrows));
        // Every tile slice names its instance, e.g. "gmm1(e=0, m=1, n=0)".
        let tile = events.iter().find(|e| e["cat"] == "tile" && e["name"] == "gmm1").unwrap();
        assert!(tile["args"]["instance"].as_str().unwrap().starts_with("gmm1(e="));
    }
    assert!(!cmp.taskflow.flows.is_empty(), "the tiny layer puts across ranks");
    let svg = svg_timeline(&[Panel::taskflow(&cmp.taskflow), Panel::baseline(&cmp.baseline, &labels)], 1, &labels);
    assert_eq!((svg.matches("<svg").count(), svg.matches("</svg>").count()), (1, 1));
    for family in ["dispatch", "gmm1", "swiglu", "gmm2", "combine", "weighted_sum"] {
        assert!(svg.contains(&format!(">{family}<")), "legend or marker for {family}");
    }
}

/// The scheduler's view of a [`TaskflowCost`] without its shared link: every put charged as
/// if alone on the link and free to run on any vector core.
struct WithoutLink<'a>(&'a TaskflowCost);

impl CostModel for WithoutLink<'_> {
    fn tile_ns(&self, core: CoreKind, work: &Work) -> u64 {
        self.0.tile_ns(core, work)
    }
    fn family_tile_ns(&self, family: usize, core: CoreKind, work: &Work) -> u64 {
        self.0.family_tile_ns(family, core, work)
    }
    fn edge_ns(&self, cross_rank: bool) -> u64 {
        self.0.edge_ns(cross_rank)
    }
}

/// Per rank: the most puts it ever has on its link at once.
fn max_puts_in_flight(r: &SimResult) -> Vec<usize> {
    (0..r.ranks)
        .map(|rank| {
            let mut events: Vec<(u64, i32)> = r
                .flows
                .iter()
                .filter(|f| f.rank.raw() == rank)
                .flat_map(|f| [(f.start_ns, 1), (f.end_ns, -1)])
                .collect();
            events.sort_unstable(); // an end sorts before a start at the same time
            let (mut now, mut most) = (0i32, 0i32);
            for (_, d) in events {
                now += d;
                most = most.max(now);
            }
            most as usize
        })
        .collect()
}

#[test]
fn a_rank_streams_its_puts_a_few_at_a_time_so_matmuls_start_on_the_first_blocks() {
    // A MoE layer with DeepSeek's core counts (24 AIC, 48 AIV) and a smaller model.
    let shape = hpmoe_host::moe::MoeShape {
        ranks: 4,
        aic_per_rank: 24,
        tokens_per_rank: 1024,
        hidden: 2048,
        intermediate: 512,
        experts: 16,
        top_k: 4,
        row_block: 64,
        gmm1_cols: 256,
        gmm2_cols: 256,
        sum_rows: 64,
        wgrad_rows: 64,
        wgrad_source_groups: 1,
        relay: false,
        routing: hpmoe_host::moe::Routing::Balanced,
        dispatch: hpmoe_host::moe::DispatchPrecision::Bf16,
    };
    let tf = shape.taskflow().unwrap();
    // Without per-put costs (setup, latency, so no quiet): the lanes' streaming alone.
    let profile = CostProfile { put_setup_ns: 0.0, link_latency_ns: 0.0, ..CostProfile::ascend_a3_die() };
    let cost = TaskflowCost::new(&tf, profile);
    let streamed = compile(&tf, &cost).unwrap();
    let at_once = compile(&tf, &WithoutLink(&cost)).unwrap();
    let (streamed, at_once) = (sim::simulate(&streamed, &cost).unwrap(), sim::simulate(&at_once, &cost).unwrap());
    // Dispatch puts stream at 59 GB/s (cold reads), combine puts at 118: two fill the die's
    // 112 GB/s injection, and a third streams while another does a put's fixed part (the
    // tile's own work and its quiet), so each rank has three lanes.
    assert_eq!(max_puts_in_flight(&streamed), vec![3; 4]);
    assert!(max_puts_in_flight(&at_once).iter().all(|&n| n > 20), "{:?}", max_puts_in_flight(&at_once));
    // So the first blocks land early and matmuls start on them, instead of every block
    // landing near the end of the all-to-all.
    let first_out = |r: &SimResult| r.flows.iter().map(|f| f.end_ns).min().unwrap();
    assert!(4 * first_out(&streamed) < first_out(&at_once), "{} vs {}", first_out(&streamed), first_out(&at_once));
    assert!(
        100 * streamed.makespan_ns < 85 * at_once.makespan_ns,
        "{} vs {}",
        streamed.makespan_ns,
        at_once.makespan_ns
    );
}
