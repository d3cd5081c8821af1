//! Where a simulated taskflow run's time goes on the network: per rank (die), how busy its
//! injection, ejection and cross-server bandwidth were, how many puts shared them, how much
//! longer puts took than alone on an idle network, the fixed cost of each put on its core,
//! and how long the AIC cores sat waiting — beside the bound's terms. It answers "is the
//! bound loose, or the schedule poor?" for the DeepSeek-V3 layer.
//!
//! ```sh
//! cargo run --release -p hpmoe-examples --example network_breakdown [-- --ep N] [--tokens N]
//!                                                                  [--profile NAME|FILE] [--int8]
//!                                                                  [--natural [--seed N] [--plan-on-run]
//!                                                                             [--seeds N,N..] [--row-block N] [--relay]]
//!                                                                  [--pass forward|backward|training_step]
//!                                                                  [--noise P [--noise-seeds N,N..]]
//! ```
//!
//! `--pass` takes the layer's backward or training step (`MoeShape::pass_taskflow`; balanced,
//! each expert's weight gradient in one tile as `moe_training` builds them, or with `--natural`
//! the naturally routed layer's) instead of the forward.
//! `--int8` takes the layer with INT8 dispatch (`DispatchPrecision::Int8`).
//! `--natural` takes the naturally routed layer instead, planned and priced as the main job
//! does (planned on 8 sampled routings, run under routing seed 42, or `--seed N`); with
//! `--plan-on-run` its schedule is planned on the priced run's own activity instead, which no
//! static schedule can know before the run: the difference is what not knowing the routing
//! costs. `--seeds` prices the same schedule under other routings too (see below);
//! `--row-block N` takes the natural layer with `N`-row blocks instead of 192 (the capacity
//! still 1.5x the average, rounded up to whole blocks: 192 rows at 64 or 96); `--relay` takes it with
//! a relay per rank before the gathering sums (`MoeShape::with_relay`).
//!
//! `--noise P` runs the same table again with every tile's exec time perturbed by up to ±P‰
//! (`sim::TimingNoise`; seeds 1, 2, 3 or `--noise-seeds`) and prints each run against the
//! bound: how much the figure above owes to the simulator's times being exact.
//!
//! Per family, how many counters its instances signal (each signal costs its core
//! `signal_issue_ns` after the tile's work).
//! Last, on the rank with the most AIC work, where its AIC cores idle: before which tiles,
//! released by which family, and why a releasing tile of the rank itself was late; on rank 0,
//! each family's first start and last end, beside the scheduler's plan of them; the run's
//! critical chain, back from the tile that ends it (which can be on any rank): each link is a
//! stretch of tiles one core ran back to back, with the signal from some rank's tile that
//! released its first tile after the core was free, so that the chain shows which compute,
//! lane or receiver decided the makespan; and per put family, within a server and across, how
//! long its puts took and how late they started and landed against the plan. The scheduler's own estimate of the makespan is printed under the
//! run's: the difference is how far the run's network is from the scheduler's model of it;
//! beside it, how many pacing dependencies the table adds between puts into one receiver
//! (`Compiled::pacing`), and on how many vector cores a rank's puts to other ranks run: its
//! link lanes, more than the link needs where the scheduler found its plan shorter with them
//! beyond one server (`schedule::list`, "More lanes beyond one server").
//!
//! Rank 0 over time, in twenty slices: the share of its AIC time computing in the run and in the
//! plan (where the plan itself leaves the AICs idle, and where the run falls behind it), and of
//! its injection and ejection used in the run.
//!
//! On the rank with the most AIC work, also per AIC core its compute time and last tile's end
//! in the run beside the plan's: how far the run's counts moved the cores' loads from the
//! balanced loads the plan expected. With `--natural --seeds a,b,..`, last, the same schedule
//! priced under each of those routings: its makespan against that routing's bound, and on the
//! routing's busiest rank the mean and the largest AIC core compute time.
//!
//! Busy % is the share of the makespan with at least one put on the resource; utilisation %
//! is bytes moved over bandwidth × makespan (the share of the bound's term the run reaches).
//! "In flight" is the time-weighted number of puts on a resource while it is busy. Beside the
//! most puts landing on a rank at once in the run, the most the scheduler's plan has landing on
//! it at once: the plan books each sender's link and tier but no receiver, so a crowd in both
//! columns was planned (on the balanced training step at EP 16, 39 puts into rank 14 at
//! 10.04 ms, the last of every rank's forward combine), one in the run's alone came from drift.
//! The stretch of a put is its transfer time over its time alone (bytes over the least of its
//! stream cap, injection, ejection and, across servers, the cross-server bandwidth).

use hpmoe_core::cost::{CostProfile, TaskflowCost, ns_at_rate};
use hpmoe_core::ids::{CoreId, FamilyId, NodeId};
use hpmoe_core::model::CoreKind;
use hpmoe_core::schedule::Placement;
use hpmoe_examples::ExampleError;
use hpmoe_examples::aic_load::{HeaviestCore, busiest_rank, heaviest_core};
use hpmoe_examples::cli::Options;
use hpmoe_examples::critical_chain::{critical_chain, previous_on_core};
use hpmoe_examples::priced::{LayerSpec, NaturalSpec, PricedLayer};
use hpmoe_examples::report::ROUTING_SEED;
use hpmoe_host::moe::{DispatchPrecision, MoeShape};
use hpmoe_host::sim::{self, FlowRecord, SimResult, TileRecord};
use std::cmp::Reverse;
use std::collections::BTreeMap;

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), ExampleError> {
    let options = [
        "--ep",
        "--tokens",
        "--profile",
        "--natural",
        "--plan-on-run",
        "--seed",
        "--int8",
        "--pass",
        "--row-block",
        "--seeds",
        "--relay",
        "--noise",
        "--noise-seeds",
    ];
    let opts = Options::from_env(&options, &options.join(", "))?;
    let ep = opts.number_u32("--ep", 8)?;
    let tokens = opts.number("--tokens", 4096)?;
    let profile = opts.profile()?;
    let precision = if opts.flag("--int8") { DispatchPrecision::Int8 } else { DispatchPrecision::Bf16 };
    let natural = opts.flag("--natural").then(|| -> Result<NaturalSpec, ExampleError> {
        Ok(NaturalSpec {
            seed: opts.number("--seed", ROUTING_SEED)?,
            row_block: opts.flag("--row-block").then(|| opts.number("--row-block", 0)).transpose()?,
            relay: opts.flag("--relay"),
            plan_on_run: opts.flag("--plan-on-run"),
        })
    });
    let spec = LayerSpec { ep, tokens, pass: opts.pass()?, precision, natural: natural.transpose()? };
    let PricedLayer { taskflow: tf, plan, run: cost, natural_shape } = PricedLayer::new(&spec, profile)?;
    let compiled = hpmoe_core::compile(&tf, &plan).map_err(|d| ExampleError::plan(&tf, d))?;
    let cmp = sim::compare(&compiled, &tf.profile, &cost)
        .map_err(|error| ExampleError::Simulate { taskflow: tf.name.clone(), error })?;
    let run = &cmp.taskflow;
    let b = &cmp.bound;
    let us = |ns: u64| ns as f64 / 1e3;
    println!(
        "EP {ep}: taskflow {:.1} us, bound {:.1} us ({}), {:.3}x",
        us(run.makespan_ns),
        us(b.ns()),
        b.binding(),
        cmp.taskflow_over_bound()
    );
    println!(
        "scheduler's plan: {:.1} us (its own network model; the simulator's run above); {} pacing dependencies between puts into one receiver; link puts on {} vector cores a rank (its lanes)",
        us(compiled.placement.makespan_ns),
        compiled.pacing.len(),
        link_put_cores(run, &compiled.placement)
    );
    if opts.flag("--noise") {
        let permille = opts.number_u32("--noise", 0)?;
        let mut seeds = opts.list_u32("--noise-seeds")?;
        if seeds.is_empty() {
            seeds = vec![1, 2, 3];
        }
        print_noise(&tf, &compiled, &cost, b.ns(), permille, &seeds)?;
    }
    println!(
        "bound terms (us): critical path {:.1}, AIC work {:.1}, AIV work {:.1}, AIC span {:.1}, AIV span {:.1}, injection {:.1}, ejection {:.1}, cross-server {:.1}, HBM {:.1}",
        us(b.critical_path_ns),
        us(b.aic_work_per_core_ns),
        us(b.aiv_work_per_core_ns),
        us(b.aic_span_ns),
        us(b.aiv_span_ns),
        us(b.link_ns),
        us(b.ejection_ns),
        us(b.cross_server_ns),
        us(b.hbm_ns)
    );
    let p = cost.profile();
    let stretch = |f: &FlowRecord| {
        let cap =
            cost.family(compiled.expanded.space.family_of(f.node)).put.map_or(u64::MAX, |put| put.stream_bytes_per_s);
        let mut rate = cap.min(p.link_bytes_per_s()).min(p.ejection_bytes_per_s());
        if p.crosses_server(f.rank.raw(), f.to.raw()) {
            rate = rate.min(p.cross_server_bytes_per_s());
        }
        (f.end_ns - f.start_ns, ns_at_rate(f.bytes, rate))
    };
    let (mut taken, mut alone) = (0u64, 0u64);
    for f in &run.flows {
        let (t, a) = stretch(f);
        taken += t;
        alone += a;
    }
    println!(
        "{} puts, {:.1} KiB each on average; transfer time over time alone: {:.2}x",
        run.flows.len(),
        run.flows.iter().map(|f| f.bytes).sum::<u64>() as f64 / run.flows.len().max(1) as f64 / 1024.0,
        taken as f64 / alone.max(1) as f64
    );
    print_ranks(run, p, &compiled.placement);
    print_cores(run);
    print_aic_waits(run, &tf);
    print_aic_cores(run, &compiled.placement);
    print_families(run, &tf, &compiled.placement, 0);
    print_critical_chain(run, &tf, 12);
    print_puts_against_plan(run, &tf, &compiled.placement, p);
    print_signals(&tf, &compiled);
    print_timeline(run, p, &compiled.placement, 0, 20);
    if let Some(shape) = natural_shape {
        print_seed_spread(&shape, &tf, &compiled, &TaskflowCost::new(&tf, p.clone()), &opts.list_u32("--seeds")?)?;
    }
    Ok(())
}

/// The table of `compiled` run again under timing noise of ±`permille`‰ per tile with each of
/// `seeds` ([`sim::TimingNoise`]): each run's makespan over `bound_ns` (the noise-free bound:
/// the noise keeps each tile's mean time), and their mean.
fn print_noise(
    tf: &hpmoe_core::model::Taskflow,
    compiled: &hpmoe_core::Compiled,
    cost: &TaskflowCost,
    bound_ns: u64,
    permille: u32,
    seeds: &[u32],
) -> Result<(), ExampleError> {
    let mut ratios = Vec::new();
    for &seed in seeds {
        let noise = sim::TimingNoise { permille, seed: u64::from(seed) };
        let run = sim::simulate_with_noise(compiled, cost, Some(noise))
            .map_err(|error| ExampleError::Simulate { taskflow: tf.name.clone(), error })?;
        ratios.push(run.makespan_ns as f64 / bound_ns.max(1) as f64);
    }
    let shown: Vec<String> = seeds.iter().zip(&ratios).map(|(s, r)| format!("seed {s} {r:.3}x")).collect();
    let mean = ratios.iter().sum::<f64>() / ratios.len().max(1) as f64;
    println!("under timing noise of up to +-{permille} permille per tile: {}; mean {mean:.3}x", shown.join(", "));
    Ok(())
}

/// On rank `rank`: per family, when its first tile started its exec and its last finished its
/// exec and put, how many tiles it ran, and their exec and put time over the rank's cores of the
/// family's kind; families in the order they first started.
fn print_families(run: &SimResult, tf: &hpmoe_core::model::Taskflow, placement: &Placement, rank: u32) {
    let mut spans: BTreeMap<FamilyId, (u64, u64, u64, usize)> = BTreeMap::new();
    for t in run.tiles.iter().filter(|t| run.rank_of_core(t.core).raw() == rank) {
        let s = spans.entry(t.family).or_insert((u64::MAX, 0, 0, 0));
        s.0 = s.0.min(t.start_ns);
        s.1 = s.1.max(t.end_ns);
        s.2 += t.end_ns - t.start_ns;
        s.3 += 1;
    }
    // The scheduler's plan of the same tiles: first start and last finish per family.
    let mut planned: BTreeMap<FamilyId, (u64, u64)> = BTreeMap::new();
    for t in run.tiles.iter().filter(|t| run.rank_of_core(t.core).raw() == rank) {
        let p = planned.entry(t.family).or_insert((u64::MAX, 0));
        p.0 = p.0.min(placement.start_ns[t.node]);
        p.1 = p.1.max(placement.finish_ns[t.node]);
    }
    let mut rows: Vec<_> = spans.into_iter().collect();
    rows.sort_by_key(|(f, s)| (s.0, *f));
    let ms = |ns: u64| ns as f64 / 1e6;
    println!(
        "rank {rank}: families by first start (ms): first start, last end, tiles, exec and put time per core; planned first start, last end"
    );
    for (family, (first, last, busy, n)) in rows {
        let cores = match tf.families[family.index()].core {
            CoreKind::Aic => tf.profile.aic_per_rank,
            CoreKind::Aiv => tf.profile.aiv_per_rank(),
        };
        let name = tf.families[family.index()].name.as_str();
        let (plan_first, plan_last) = planned[&family];
        println!(
            "  {name:<20} {:>8.2} {:>8.2} {n:>7} {:>8.2} | {:>8.2} {:>8.2}",
            ms(first),
            ms(last),
            ms(busy) / f64::from(cores.max(1)),
            ms(plan_first),
            ms(plan_last)
        );
    }
}

/// The run's critical chain ([`critical_chain`]), latest first, at most `lines` stretches: per
/// stretch its rank, core and times, the families in it (most tiles first), and what released
/// its first tile.
fn print_critical_chain(run: &SimResult, tf: &hpmoe_core::model::Taskflow, lines: usize) {
    let name = |family: FamilyId| tf.families[family.index()].name.as_str();
    let ms = |ns: u64| ns as f64 / 1e6;
    println!(
        "the run's critical chain, back from its end at {:.3} ms: stretches of tiles a core ran back to back, and what released each stretch",
        ms(run.makespan_ns)
    );
    for stretch in critical_chain(run, lines) {
        let (first, last) = (stretch.first(), stretch.last());
        let mut families = BTreeMap::<&str, u32>::new();
        for t in &stretch.tiles {
            *families.entry(name(t.family)).or_default() += 1;
        }
        let mut families: Vec<(&str, u32)> = families.into_iter().collect();
        families.sort_by_key(|&(f, n)| (Reverse(n), f));
        let listed: Vec<String> = families.iter().map(|(f, n)| format!("{f} x{n}")).collect();
        let kind = match run.core_kind(last.core) {
            CoreKind::Aic => "AIC",
            CoreKind::Aiv => "AIV",
        };
        let held = match stretch.released_by {
            Some(u) => format!(
                "released by {} on rank {}, {:.1} us after its core was free",
                name(u.family),
                run.rank_of_core(u.core).raw(),
                first.start_ns.saturating_sub(stretch.core_free_ns) as f64 / 1e3
            ),
            None => "the core's first tile".to_string(),
        };
        println!(
            "  rank {:>3} {kind} core {:>5} {:>8.3} - {:>8.3} ms: {} tiles ({}); {held}",
            run.rank_of_core(last.core).raw(),
            last.core.raw(),
            ms(first.start_ns),
            ms(last.done_ns),
            stretch.tiles.len(),
            listed.join(", ")
        );
    }
}

/// Per put family, puts within a server and across apart: how long a put held its core in the
/// run (exec and put) against the scheduler's plan of it, how much later than planned it
/// started on average, and when the last one landed against the plan's last finish. Where the
/// run's network is slower than the plan's model, the puts start later and later.
fn print_puts_against_plan(run: &SimResult, tf: &hpmoe_core::model::Taskflow, placement: &Placement, p: &CostProfile) {
    /// The puts of one family within a server or across, summed.
    #[derive(Default)]
    struct Puts {
        count: u64,
        /// On their cores in the run, and in the plan, ns.
        held_ns: u64,
        planned_ns: u64,
        /// Run start minus planned start, ns.
        late_ns: i128,
        /// The last landing in the run, and the plan's last finish, ns.
        landed_ns: u64,
        planned_last_ns: u64,
    }
    let mut rows: BTreeMap<(FamilyId, bool), Puts> = BTreeMap::new();
    for f in &run.flows {
        let t = &run.tiles[f.node.index()];
        let r = rows.entry((t.family, p.crosses_server(f.rank.raw(), f.to.raw()))).or_default();
        r.count += 1;
        r.held_ns += t.end_ns - t.start_ns;
        r.planned_ns += placement.finish_ns[f.node] - placement.start_ns[f.node];
        r.late_ns += i128::from(t.start_ns) - i128::from(placement.start_ns[f.node]);
        r.landed_ns = r.landed_ns.max(f.delivered_ns);
        r.planned_last_ns = r.planned_last_ns.max(placement.finish_ns[f.node]);
    }
    println!(
        "link puts against the plan: puts, mean us on its core (run / plan), mean start later than planned us, last landed ms (run / plan)"
    );
    for ((family, crosses), r) in rows {
        let name = tf.families[family.index()].name.as_str();
        let mean_us = |ns: f64| ns / r.count.max(1) as f64 / 1e3;
        println!(
            "  {name:<14} {:<13} {:>6} {:>7.1} / {:>7.1} {:>9.1} {:>8.2} / {:>6.2}",
            if crosses { "across" } else { "within server" },
            r.count,
            mean_us(r.held_ns as f64),
            mean_us(r.planned_ns as f64),
            mean_us(r.late_ns as f64),
            r.landed_ns as f64 / 1e6,
            r.planned_last_ns as f64 / 1e6
        );
    }
}

/// Rank `rank`'s run in `buckets` equal time slices (of the run or the plan, whichever is
/// longer): the share of its AIC time computing, in the run and in the scheduler's plan, and of
/// its injection and ejection bandwidth used in the run, per slice.
fn print_timeline(run: &SimResult, p: &CostProfile, placement: &Placement, rank: u32, buckets: u64) {
    let width = run.makespan_ns.max(placement.makespan_ns).div_ceil(buckets).max(1);
    let overlap = |a: u64, b: u64, k: u64| b.min((k + 1) * width).saturating_sub(a.max(k * width));
    let aic: Vec<_> = run
        .tiles
        .iter()
        .filter(|t| run.rank_of_core(t.core).raw() == rank && run.core_kind(t.core) == CoreKind::Aic)
        .collect();
    println!(
        "rank {rank} over time ({} us slices): AIC computing % (run / plan) | injection used % | ejection used %",
        width / 1000
    );
    let aic_share = |busy: u64| 100.0 * busy as f64 / (u64::from(run.aic_per_rank) * width) as f64;
    for k in 0..buckets {
        let busy: u64 = aic.iter().map(|t| overlap(t.start_ns, t.end_ns, k)).sum();
        let planned: u64 =
            aic.iter().map(|t| overlap(placement.start_ns[t.node], placement.finish_ns[t.node], k)).sum();
        // A flow's bytes spread evenly over its transfer.
        let moved = |f: &&FlowRecord| {
            let d = (f.end_ns - f.start_ns).max(1);
            f.bytes as f64 * overlap(f.start_ns, f.end_ns, k) as f64 / d as f64
        };
        let sent: f64 = run.flows.iter().filter(|f| f.rank.raw() == rank).map(|f| moved(&f)).sum();
        let got: f64 = run.flows.iter().filter(|f| f.to.raw() == rank).map(|f| moved(&f)).sum();
        let cap = |bw: u64| bw as f64 * width as f64 / 1e9;
        println!(
            "  {:>8.0} us | {:>5.1} / {:>5.1} | {:>5.1} | {:>5.1}",
            (k * width) as f64 / 1e3,
            aic_share(busy),
            aic_share(planned),
            100.0 * sent / cap(p.link_bytes_per_s()),
            100.0 * got / cap(p.ejection_bytes_per_s())
        );
    }
}

/// Per-rank injection, ejection and cross-server figures, the most puts the scheduler's plan
/// has landing on the rank at once (its model books no receiver, so where the run's ejection
/// crowds, this says whether the plan asked for it), and the fixed cost of the puts.
fn print_ranks(run: &SimResult, p: &CostProfile, placement: &Placement) {
    let span = run.makespan_ns.max(1) as f64;
    let fixed_per_put = p.put_setup() + p.put_quiet_ns();
    println!(
        "{:>4} | {:>6} {:>6} {:>6} {:>5} {:>5} | {:>6} {:>6} {:>5} {:>5} {:>5} {:>8} | {:>6} {:>6} | {:>5} {:>9} {:>7}",
        "rank",
        "inj%",
        "util%",
        "rate%",
        "fly",
        "max",
        "ej%",
        "util%",
        "fly",
        "max",
        "plan",
        "at ms",
        "xs%",
        "util%",
        "puts",
        "fixed us",
        "last us"
    );
    for rank in 0..run.ranks {
        let out: Vec<&FlowRecord> = run.flows.iter().filter(|f| f.rank.raw() == rank).collect();
        let into: Vec<&FlowRecord> = run.flows.iter().filter(|f| f.to.raw() == rank).collect();
        let cross: Vec<&FlowRecord> =
            out.iter().copied().filter(|f| p.crosses_server(f.rank.raw(), f.to.raw())).collect();
        let (inj_busy, inj_fly, inj_max) = occupancy(&out);
        let (ej_busy, ej_fly, ej_max) = occupancy(&into);
        let (xs_busy, _, _) = occupancy(&cross);
        let (planned_max, planned_at) =
            most_at_once(into.iter().map(|f| (placement.start_ns[f.node], placement.finish_ns[f.node])));
        let bytes = |fs: &[&FlowRecord]| fs.iter().map(|f| f.bytes).sum::<u64>();
        let util = |bytes: u64, bw: u64| 100.0 * ns_at_rate(bytes, bw) as f64 / span;
        // While the injection is busy, the share of its bandwidth the puts used.
        let rate = 100.0 * ns_at_rate(bytes(&out), p.link_bytes_per_s()) as f64 / inj_busy.max(1) as f64;
        let last = out.iter().map(|f| f.end_ns).max().unwrap_or(0);
        println!(
            "{rank:>4} | {:>6.1} {:>6.1} {:>6.1} {:>5.1} {:>5} | {:>6.1} {:>6.1} {:>5.1} {:>5} {:>5} {:>8.2} | {:>6.1} {:>6.1} | {:>5} {:>9.1} {:>7.1}",
            100.0 * inj_busy as f64 / span,
            util(bytes(&out), p.link_bytes_per_s()),
            rate,
            inj_fly,
            inj_max,
            100.0 * ej_busy as f64 / span,
            util(bytes(&into), p.ejection_bytes_per_s()),
            ej_fly,
            ej_max,
            planned_max,
            planned_at as f64 / 1e6,
            100.0 * xs_busy as f64 / span,
            util(bytes(&cross), p.cross_server_bytes_per_s()),
            out.len(),
            (out.len() as u64 * fixed_per_put) as f64 / 1e3,
            last as f64 / 1e3
        );
    }
    println!(
        "inj%/ej%/xs%: share of the makespan with a put on the resource; util%: bytes over bandwidth x makespan; \
         rate%: bytes over bandwidth x busy time; fly/max: puts on it while busy (mean/max); \
         plan / at ms: the most puts the plan has landing on the rank at once, and when; \
         fixed: puts x (setup {} ns + quiet {} ns) of core time; last: the rank's last put out",
        p.put_setup(),
        p.put_quiet_ns()
    );
}

/// The most of the intervals `(start, end)` open at once, and the first time they are
/// (0 and 0 for none); an interval ending when another starts does not overlap it.
fn most_at_once(intervals: impl Iterator<Item = (u64, u64)>) -> (usize, u64) {
    let sweep = sweep(intervals);
    (sweep.most, sweep.most_at)
}

/// Busy time (at least one flow), the time-weighted mean number of flows while busy, and
/// the most at once.
fn occupancy(flows: &[&FlowRecord]) -> (u64, f64, usize) {
    let sweep = sweep(flows.iter().map(|f| (f.start_ns, f.end_ns)));
    (sweep.busy_ns, sweep.weighted as f64 / sweep.busy_ns.max(1) as f64, sweep.most)
}

/// What one sweep over intervals `(start, end)` finds.
struct Sweep {
    /// Time with at least one interval open, ns.
    busy_ns: u64,
    /// The open count integrated over time, interval·ns.
    weighted: u128,
    /// The most open at once, and the first time they are.
    most: usize,
    most_at: u64,
}

fn sweep(intervals: impl Iterator<Item = (u64, u64)>) -> Sweep {
    let mut events: Vec<(u64, i32)> = intervals.flat_map(|(start, end)| [(start, 1), (end, -1)]).collect();
    events.sort_unstable();
    let mut out = Sweep { busy_ns: 0, weighted: 0, most: 0, most_at: 0 };
    let (mut level, mut since) = (0i32, 0u64);
    for (t, d) in events {
        if level > 0 {
            out.busy_ns += t - since;
            out.weighted += u128::from(t - since) * level as u128;
        }
        level += d;
        if level as usize > out.most {
            (out.most, out.most_at) = (level as usize, t);
        }
        since = t;
    }
    out
}

/// The most vector cores of one rank that run its puts to other ranks (the run's flows) in
/// `placement`: the link lanes the scheduler planned (more than the link needs beyond one server
/// when that shortened its plan).
fn link_put_cores(run: &SimResult, placement: &Placement) -> usize {
    let mut cores: BTreeMap<u32, std::collections::BTreeSet<CoreId>> = BTreeMap::new();
    for f in &run.flows {
        cores.entry(f.rank.raw()).or_default().insert(placement.core_of[f.node]);
    }
    cores.values().map(|c| c.len()).max().unwrap_or(0)
}

/// AIC and AIV time, averaged over each rank's cores of that kind, as % of the makespan.
fn print_cores(run: &SimResult) {
    let span = run.makespan_ns.max(1) as f64;
    for kind in [CoreKind::Aic, CoreKind::Aiv] {
        let cores: Vec<_> = (0..run.cores.len()).filter(|&c| run.core_kind(CoreId::from_index(c)) == kind).collect();
        let n = cores.len().max(1) as f64;
        let mean = |f: fn(&sim::CoreStats) -> u64| cores.iter().map(|&c| f(&run.cores[c])).sum::<u64>() as f64 / n;
        println!(
            "{kind:?}: busy {:.1}%, waiting on counters {:.1}%, sync {:.1}%, idle (before first / after last tile) {:.1}%",
            100.0 * mean(|s| s.busy_ns) / span,
            100.0 * mean(|s| s.wait_ns) / span,
            100.0 * mean(|s| s.sync_ns) / span,
            100.0 * mean(|s| s.idle_ns) / span
        );
    }
}

/// On the rank with the most AIC work (the one the bound's AIC term is about), where its AIC
/// cores' idle time goes, per AIC core: waiting before a tile, by the family of the tile
/// whose signal released it (on this rank or another), and after their last tile; and, for
/// a releasing tile of this rank, why it was late: its core reached it late (by the family
/// the core ran just before) or it waited for its own input (by the family that released it).
fn print_aic_waits(run: &SimResult, tf: &hpmoe_core::model::Taskflow) {
    let rank_of_core = |core: CoreId| run.rank_of_core(core).raw();
    let is_aic = |t: &&TileRecord| run.core_kind(t.core) == CoreKind::Aic;
    let mut work = vec![0u64; run.ranks as usize];
    for t in run.tiles.iter().filter(is_aic).filter(|t| t.computes) {
        work[rank_of_core(t.core) as usize] += t.end_ns - t.start_ns;
    }
    let Some(rank) = (0..run.ranks).max_by_key(|&r| (work[r as usize], Reverse(r))) else { return };
    let name = |family: FamilyId| tf.families[family.index()].name.as_str();
    let by_node: BTreeMap<NodeId, &TileRecord> = run.tiles.iter().map(|t| (t.node, t)).collect();
    let on_rank: Vec<&TileRecord> = run.tiles.iter().filter(|t| rank_of_core(t.core) == rank).collect();
    let prev_on_core = previous_on_core(&on_rank);
    // (family, released from another rank) -> idle ns before the tiles it released.
    let mut waits: BTreeMap<(&str, bool), u64> = BTreeMap::new();
    let mut why: BTreeMap<(&str, &str, &str), u64> = BTreeMap::new();
    let (mut tail, mut unreleased) = (0u64, 0u64);
    for t in on_rank.iter().copied().filter(is_aic) {
        let free = prev_on_core.get(&t.node).map_or(0, |p| p.done_ns);
        let idle = t.start_ns.saturating_sub(free);
        match t.released_by.and_then(|u| by_node.get(&u)) {
            Some(u) => {
                *waits.entry((name(u.family), rank_of_core(u.core) != rank)).or_default() += idle;
                if rank_of_core(u.core) == rank && idle > 0 {
                    let input = u.released_by.and_then(|x| by_node.get(&x));
                    let behind = prev_on_core.get(&u.node).filter(|p| input.is_none_or(|i| p.done_ns > i.done_ns));
                    let reason = match (behind, input) {
                        (Some(p), _) => ("core busy before", name(p.family)),
                        (None, Some(i)) => ("input from", name(i.family)),
                        (None, None) => ("not released", ""),
                    };
                    *why.entry((name(u.family), reason.0, reason.1)).or_default() += idle;
                }
            }
            None => unreleased += idle,
        }
    }
    let mut last: BTreeMap<CoreId, u64> = BTreeMap::new();
    for t in on_rank.iter().copied().filter(is_aic) {
        let done = last.entry(t.core).or_default();
        *done = (*done).max(t.done_ns);
    }
    for done in last.values() {
        tail += run.makespan_ns - done;
    }
    let per_core = |ns: u64| ns as f64 / 1e3 / f64::from(run.aic_per_rank.max(1));
    println!(
        "rank {rank} (most AIC work: {:.1} us per AIC core): AIC idle per core, us, before tiles released by",
        per_core(work[rank as usize])
    );
    for ((family, other), ns) in waits.iter().filter(|(_, ns)| **ns > 0) {
        println!("  {family:<20} {:<11} {:>8.1}", if *other { "other rank" } else { "this rank" }, per_core(*ns));
    }
    println!("  not released by a signal {:>8.1}; after the last tile {:>8.1}", per_core(unreleased), per_core(tail));
    println!("  of the idle behind a tile of this rank, why that tile was late:");
    for ((family, reason, by), ns) in &why {
        println!("    {family:<16} {reason} {by:<16} {:>8.1}", per_core(*ns));
    }
}

/// On the rank with the most AIC work, per AIC core: the run's compute time and last tile's
/// end beside the plan's (the scheduler's expected costs), sorted by the run's end: how far
/// the cores' actual loads drift from the balanced loads the plan expected, and how ragged
/// their ends are.
fn print_aic_cores(run: &SimResult, placement: &Placement) {
    let is_aic = |t: &&TileRecord| run.core_kind(t.core) == CoreKind::Aic;
    let Some(rank) = busiest_rank(run) else { return };
    // core -> (run busy, run last end, plan busy, plan last end)
    let mut cores: BTreeMap<CoreId, (u64, u64, u64, u64)> = BTreeMap::new();
    for t in run.tiles.iter().filter(is_aic).filter(|t| run.rank_of_core(t.core).raw() == rank) {
        let c = cores.entry(t.core).or_default();
        if t.computes {
            c.0 += t.end_ns - t.start_ns;
        }
        c.1 = c.1.max(t.done_ns);
        c.2 += placement.finish_ns[t.node] - placement.start_ns[t.node];
        c.3 = c.3.max(placement.finish_ns[t.node]);
    }
    let mut rows: Vec<(CoreId, (u64, u64, u64, u64))> = cores.into_iter().collect();
    rows.sort_by_key(|&(c, (_, end, _, _))| (end, c));
    let ms = |ns: u64| ns as f64 / 1e6;
    println!("rank {rank} AIC cores by last end (ms): run busy, run last end | plan busy, plan last end");
    for (c, (busy, end, pbusy, pend)) in rows {
        println!("  core {:>4} | {:>7.3} {:>7.3} | {:>7.3} {:>7.3}", c.raw(), ms(busy), ms(end), ms(pbusy), ms(pend));
    }
}

/// Per family, the counters its instances signal (all ranks) and the mean per instance: what
/// a tile pays after its work, `signal_issue_ns` each.
fn print_signals(tf: &hpmoe_core::model::Taskflow, compiled: &hpmoe_core::Compiled) {
    let space = &compiled.expanded.space;
    let mut per_family = vec![(0u64, 0u64); tf.families.len()];
    for (f, counts) in per_family.iter_mut().enumerate() {
        let span = &space.families[f];
        for rank in 0..tf.profile.ranks {
            for i in 0..span.count {
                let node = space.node(hpmoe_core::ids::RankId::new(rank), span.first + i);
                counts.0 += 1;
                counts.1 += compiled.sync.signals(node).len() as u64;
            }
        }
    }
    println!("signals per family (all ranks): instances, signals, per instance");
    for (f, (n, s)) in tf.families.iter().zip(per_family) {
        println!("  {:<20} {n:>9} {s:>9} {:>8.2}", f.name, s as f64 / n.max(1) as f64);
    }
}

/// The same schedule (planned once on expected activity) priced under other routings
/// (`--seeds a,b,..`): per routing, the makespan against its bound and, on the rank with the
/// most AIC work, its cores' mean and largest compute time. The largest over the mean is
/// what the run's counts did to a balanced plan: the heaviest core cannot end before its own
/// tiles are done, so a run is at least that much above the bound's AIC work per core.
fn print_seed_spread(
    shape: &MoeShape,
    tf: &hpmoe_core::model::Taskflow,
    compiled: &hpmoe_core::Compiled,
    cost: &TaskflowCost,
    seeds: &[u32],
) -> Result<(), ExampleError> {
    if seeds.is_empty() {
        return Ok(());
    }
    println!(
        "the same schedule under other routings: seed | taskflow us, bound us, x | busiest rank: mean and largest AIC core compute us, largest - mean"
    );
    for &seed in seeds {
        let routing = shape.route(u64::from(seed));
        let activity = routing.activity(shape, tf, &compiled.expanded.space).map_err(ExampleError::Routing)?;
        let cost = cost.clone().with_activity(activity);
        let simulate_error = |error| ExampleError::Simulate { taskflow: tf.name.clone(), error };
        let run = sim::simulate(compiled, &cost).map_err(simulate_error)?;
        let bound = sim::lower_bound(&compiled.expanded, &tf.profile, &cost).map_err(simulate_error)?;
        let Some(HeaviestCore { rank, mean_ns: mean, largest_ns: max }) = heaviest_core(&run) else { continue };
        let us = |ns: f64| ns / 1e3;
        println!(
            "  {seed:>4} | {:>8.1} {:>8.1} {:.3} | rank {rank}: {:>8.1} {:>8.1} {:>6.1}",
            us(run.makespan_ns as f64),
            us(bound.ns() as f64),
            run.makespan_ns as f64 / bound.ns().max(1) as f64,
            us(mean),
            us(max),
            us(max - mean)
        );
    }
    Ok(())
}
