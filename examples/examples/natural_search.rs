//! How close to its bound can a *static* schedule bring the naturally routed DeepSeek-V3 layer
//! on one routing? An experiment with the simulator in the loop (issue 13 item 5), not a path
//! of the main job: it starts from the schedule the main job prices (planned on 8 sampled
//! routings, run under routing seed 42 or `--seed N`) and searches for better ones *knowing the
//! run's routing*, which no compile-time table can. Every schedule it tries is one a static
//! table could hold (per-core queues, proved deadlock-free, counters planned for them), so its
//! best is a makespan a static schedule reaches on this routing; a search, not a proof, so
//! not the best there is.
//!
//! ```sh
//! cargo run --release -p hpmoe-examples --example natural_search [-- --ep N] [--seed N]
//!                                    [--replans N] [--iters N] [--seeds N,N..] [--tokens N] [--profile P]
//!                                    [--relay]
//! ```
//!
//! Steps, each priced by the simulator (`sim::simulate`, the same run as the main job's), the
//! best schedule so far carried from one to the next:
//! 0. **Re-plan on the run's tile times** (`--replans`, default 4): the list scheduler again,
//!    with every tile planned at the time it held its core in the last simulated run (a tile the
//!    routing skips at its bare overhead and signals), then that plan simulated, and so on.
//! 1. **Balance the run's loads** of the main job's schedule. On every rank, while its AIC
//!    core with the most computed work (in the run: tiles whose guard lets them compute) is
//!    more than one tile above its least loaded core, the latest-planned computing tile of the former trades cores with
//!    the skipped tile of the same family on the latter whose planned start is nearest. Each
//!    core's queue stays in planned start order (so every queue keeps a topological order; the
//!    deadlock proof checks it), and the counters are planned again for the new queues.
//! 2. **Local search** (`--iters`, default 40), three moves in turn, each kept when the
//!    simulated makespan falls: a trade as in step 1 between the AIC core that finishes last
//!    and a random other core of its rank, among its last 16 computing tiles; one of the 8
//!    tiles of that rank that waited longest in the run's last sixth trading queue places with
//!    one of the next 3 on its core; a tile of the run's critical chain that releases the next
//!    through a signal trading places with one of the 4 before it on its core.
//!
//! It prints the makespan over the bound after each step, the busiest rank's heaviest AIC core
//! over its mean, where that rank's AIC cores idle (before their first tile, between tiles by
//! the family that released them and the tenth of the run, after their last), the run's
//! critical chain from its end, and, with `--seeds`, the best schedule priced under other
//! routings beside the main job's: whether what the search found is a rule or this routing's
//! luck. `NATURAL_SEARCH_TRACE=1` prints every simulated move. `--relay` searches the layer with
//! a relay per rank before the weighted sums (`MoeShape::with_relay`).

use hpmoe_core::Compiled;
use hpmoe_core::cost::TaskflowCost;
use hpmoe_core::expand::Work;
use hpmoe_core::graph::Csr;
use hpmoe_core::ids::{CoreId, IdVec, NodeId};
use hpmoe_core::model::CoreKind;
use hpmoe_core::schedule::{CostModel, NetworkLimits, Placement, PutShape, plan_sync, prove_deadlock_free};
use hpmoe_examples::ExampleError;
use hpmoe_examples::aic_load::{HeaviestCore, busiest_rank, heaviest_core};
use hpmoe_examples::cli::Options;
use hpmoe_examples::report::{PLAN_SAMPLES, ROUTING_SEED, RoutedLayer};
use hpmoe_host::moe::{MoeShape, Pass};
use hpmoe_host::rng::SplitMix;
use hpmoe_host::sim::{self, SimResult};
use std::collections::BTreeMap;

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), ExampleError> {
    let options = ["--ep", "--tokens", "--profile", "--seed", "--iters", "--seeds", "--replans", "--relay"];
    let opts = Options::from_env(&options, &options.join(", "))?;
    let ep = opts.number_u32("--ep", 8)?;
    let tokens = opts.number("--tokens", 4096)?;
    let seed = opts.number("--seed", ROUTING_SEED)?;
    let iters = opts.number("--iters", 40)?;
    let profile = opts.profile()?;
    let mut shape = MoeShape::deepseek_v3_natural(ep, tokens);
    if opts.flag("--relay") {
        shape = shape.with_relay();
    }
    let layer = RoutedLayer::natural_pass(&shape, Pass::Forward, seed, PLAN_SAMPLES)?;
    let tf = layer.taskflow;
    let base = TaskflowCost::new(&tf, profile);
    let plan = base.clone().with_expected_activity(layer.plan);
    let cost = base.clone().with_activity(layer.run);
    let start = hpmoe_core::compile(&tf, &plan).map_err(|d| ExampleError::plan(&tf, d))?;
    let simulate_error = |error| ExampleError::Simulate { taskflow: tf.name.clone(), error };
    let bound = sim::lower_bound(&start.expanded, &tf.profile, &cost).map_err(simulate_error)?.ns();
    let price = |c: &Compiled| sim::simulate(c, &cost).map_err(simulate_error);
    let report = |what: &str, run: &SimResult| {
        let Some(HeaviestCore { rank, mean_ns: mean, largest_ns: max }) = heaviest_core(run) else { return };
        println!(
            "{what:<32} {:>9.1} us  {:.4}x bound | rank {rank}: AIC compute mean {:.1} us, heaviest core +{:.1} us",
            run.makespan_ns as f64 / 1e3,
            run.makespan_ns as f64 / bound as f64,
            mean / 1e3,
            (max - mean) / 1e3
        );
    };
    println!(
        "EP {ep}, routing seed {seed}: bound {:.1} us (1.03x: {:.1} us)",
        bound as f64 / 1e3,
        bound as f64 * 1.03e-3
    );
    let first = price(&start)?;
    report("main job's schedule", &first);

    // The planned order rebuilt from planned starts must be the scheduler's own.
    let same = requeue(&start.placement, &start.placement.core_of);
    if same.queues != start.placement.queues {
        println!("note: queues in planned start order differ from the scheduler's; the search uses start order");
    }

    let (mut best, mut best_run) = (start.clone(), first.clone());
    idle(&best_run);
    // Step 0: re-plan on the tile times the simulator measured (iterated).
    let mut measured = first.clone();
    for k in 0..opts.number("--replans", 4)? {
        let model = Measured::of(&cost, &measured);
        let c = hpmoe_core::compile(&tf, &model).map_err(|d| ExampleError::plan(&tf, d))?;
        let run = price(&c)?;
        report(&format!("re-planned on run times ({})", k + 1), &run);
        idle(&run);
        chain(&c, &run, 3);
        if run.makespan_ns < best_run.makespan_ns {
            (best, best_run) = (c, run.clone());
        }
        measured = run;
    }
    // Step 1 from the main job's schedule (the re-planned ones end on their lanes, not cores).
    let what = "AIC loads balanced on the run";
    match with_cores(&start, balanced_cores(&start, &first)) {
        Ok(balanced) => {
            let run = price(&balanced)?;
            report(what, &run);
            idle(&run);
            chain(&balanced, &run, 3);
            if run.makespan_ns < best_run.makespan_ns {
                (best, best_run) = (balanced, run);
            }
        }
        Err(cycle) => println!("{what}: the queues deadlock (a cycle of {cycle} nodes)"),
    }

    let mut rng = SplitMix::new(seed ^ 0x5eed);
    let mut kept = 0;
    // Moves with no candidate, moves whose queues deadlock, moves simulated; the best simulated.
    let (mut tally, mut nearest) = ([0u32; 3], u64::MAX);
    for i in 0..iters {
        let candidate = match i % 4 {
            0 => random_trade(&best, &best_run, &mut rng).map(|cores| with_cores(&best, cores)),
            1 => random_reorder(&best, &best_run, &mut rng).map(|keys| with_order(&best, keys)),
            _ => critical_reorder(&best, &best_run, &mut rng).map(|keys| with_order(&best, keys)),
        };
        let candidate = match candidate {
            None => {
                tally[0] += 1;
                continue;
            }
            Some(Err(_)) => {
                tally[1] += 1;
                continue;
            }
            Some(Ok(candidate)) => candidate,
        };
        let run = price(&candidate)?;
        tally[2] += 1;
        if std::env::var_os("NATURAL_SEARCH_TRACE").is_some() {
            let moved =
                candidate.placement.position.iter().filter(|&(v, &at)| best.placement.position[v] != at).count();
            println!("      move {i}: {moved} positions moved, {:.1} us", run.makespan_ns as f64 / 1e3);
        }
        nearest = nearest.min(run.makespan_ns);
        if run.makespan_ns < best_run.makespan_ns {
            best = candidate;
            best_run = run;
            kept += 1;
        }
    }
    report(&format!("local search ({kept} of {iters} kept)"), &best_run);
    println!(
        "    moves: {} without a candidate, {} deadlocked, {} simulated (best {:.1} us)",
        tally[0],
        tally[1],
        tally[2],
        nearest as f64 / 1e3
    );

    let seeds = opts.list_u32("--seeds")?;
    if !seeds.is_empty() {
        println!("under other routings: seed | main job's schedule x bound | searched schedule x bound");
    }
    for s in seeds {
        let activity =
            shape.route(u64::from(s)).activity(&shape, &tf, &start.expanded.space).map_err(ExampleError::Routing)?;
        let other = base.clone().with_activity(activity);
        let b = sim::lower_bound(&start.expanded, &tf.profile, &other).map_err(simulate_error)?.ns() as f64;
        let a = sim::simulate(&start, &other).map_err(simulate_error)?.makespan_ns as f64;
        let c = sim::simulate(&best, &other).map_err(simulate_error)?.makespan_ns as f64;
        println!("  {s:>4} | {:.4} | {:.4}", a / b, c / b);
    }
    Ok(())
}

/// The run's cost model, but every tile planned at the time it took in a simulated run
/// (its exec, put and signals; a skipped tile its bare overhead and signals).
struct Measured {
    run_cost: TaskflowCost,
    ns: Vec<u64>,
}

impl Measured {
    fn of(run_cost: &TaskflowCost, run: &SimResult) -> Self {
        Measured { run_cost: run_cost.clone(), ns: run.tiles.iter().map(|t| t.done_ns - t.start_ns).collect() }
    }
}

impl CostModel for Measured {
    fn tile_ns(&self, core: CoreKind, work: &Work) -> u64 {
        self.run_cost.tile_ns(core, work)
    }
    fn family_tile_ns(&self, family: usize, core: CoreKind, work: &Work) -> u64 {
        self.run_cost.family_tile_ns(family, core, work)
    }
    fn node_tile_ns(&self, node: NodeId, _family_ns: u64) -> u64 {
        self.ns[node.index()]
    }
    fn edge_ns(&self, cross_rank: bool) -> u64 {
        self.run_cost.edge_ns(cross_rank)
    }
    fn link_bytes_per_s(&self) -> Option<u64> {
        self.run_cost.link_bytes_per_s()
    }
    fn ranks_per_server(&self) -> Option<u32> {
        self.run_cost.ranks_per_server()
    }
    fn network_limits(&self) -> Option<NetworkLimits> {
        self.run_cost.network_limits()
    }
    fn node_put_bytes(&self, node: NodeId, bytes: u64) -> u64 {
        self.run_cost.node_put_bytes(node, bytes)
    }
    fn family_put(&self, family: usize, core: CoreKind, work: &Work) -> PutShape {
        self.run_cost.family_put(family, core, work)
    }
}

/// `compiled` with its nodes on `cores`: queues in planned start order, the deadlock proof,
/// and counters planned for the new queues.
/// `Err` holds the length of the cycle the proof found.
fn with_cores(compiled: &Compiled, cores: IdVec<NodeId, CoreId>) -> Result<Compiled, usize> {
    let placement = requeue(&compiled.placement, &cores);
    prove_deadlock_free(&compiled.expanded.dag, &placement.queues).map_err(|cycle| cycle.len())?;
    let mut out = compiled.clone();
    out.sync = plan_sync(&out.expanded, &placement);
    out.placement = placement;
    Ok(out)
}

/// `compiled` with every core's queue in the order of `keys` (taken as the planned starts),
/// proved and synchronised as [`with_cores`] does.
fn with_order(compiled: &Compiled, keys: IdVec<NodeId, u64>) -> Result<Compiled, usize> {
    let mut c = compiled.clone();
    c.placement.start_ns = keys;
    let cores = c.placement.core_of.clone();
    with_cores(&c, cores)
}

/// Step 2's second move: on the rank whose AIC cores finish last, one of the 8 tiles in the
/// run's last sixth that waited longest before starting trades places in its core's queue with
/// one of the next 3 tiles, so the core runs other work while it waits.
fn random_reorder(c: &Compiled, run: &SimResult, rng: &mut SplitMix) -> Option<IdVec<NodeId, u64>> {
    let last = run
        .tiles
        .iter()
        .filter(|t| run.core_kind(t.core) == CoreKind::Aic && t.computes)
        .max_by_key(|t| (t.end_ns, t.node))?;
    let rank = run.rank_of_core(last.core).raw();
    let p = &c.placement;
    let mut waited: Vec<(u64, NodeId)> = Vec::new();
    for t in run.tiles.iter().filter(|t| {
        run.core_kind(t.core) == CoreKind::Aic
            && run.rank_of_core(t.core).raw() == rank
            && t.start_ns * 6 >= run.makespan_ns * 5
    }) {
        let row = p.queues.row(t.core);
        let at = p.position[t.node] as usize;
        let prev_end = if at == 0 { 0 } else { run.tiles[row[at - 1].index()].end_ns };
        if t.start_ns > prev_end + 1000 {
            waited.push((t.start_ns - prev_end, t.node));
        }
    }
    waited.sort_by_key(|&(w, v)| (std::cmp::Reverse(w), v));
    waited.truncate(8);
    let (_, a) = *waited.get((rng.next_u64() % waited.len().max(1) as u64) as usize)?;
    let row = p.queues.row(p.core_of[a]);
    let b = *row.get(p.position[a] as usize + 1 + (rng.next_u64() % 3) as usize)?;
    let mut keys = p.start_ns.clone();
    keys[a] = p.start_ns[b];
    keys[b] = p.start_ns[a];
    // Equal keys fall back to planned finish, then node id: keep the swap strict.
    keys[a] = keys[a].max(keys[b] + 1);
    Some(keys)
}

/// `placement` with each node on `cores[node]`, every core's queue in planned start order
/// (planned finish, then node id, break ties).
fn requeue(placement: &Placement, cores: &IdVec<NodeId, CoreId>) -> Placement {
    let rows = placement.queues.row_ids().count();
    let mut per_core: Vec<Vec<NodeId>> = vec![Vec::new(); rows];
    for (v, &c) in cores.iter() {
        per_core[c.index()].push(v);
    }
    let mut position = IdVec::filled(cores.len(), 0u32);
    let mut offsets = vec![0u32];
    let mut flat = Vec::with_capacity(cores.len());
    for row in &mut per_core {
        row.sort_by_key(|&v| (placement.start_ns[v], placement.finish_ns[v], v));
        for (i, &v) in row.iter().enumerate() {
            position[v] = i as u32;
        }
        flat.extend_from_slice(row);
        offsets.push(flat.len() as u32);
    }
    Placement { core_of: cores.clone(), position, queues: Csr::from_parts(offsets, flat), ..placement.clone() }
}

/// Per rank, per AIC core: the run's computed work, and its AIC tiles (computing or not).
struct Loads {
    work: BTreeMap<CoreId, u64>,
    computing: BTreeMap<CoreId, Vec<NodeId>>,
    skipped: BTreeMap<CoreId, Vec<NodeId>>,
}

fn loads(run: &SimResult, rank: u32) -> Loads {
    let mut l = Loads { work: BTreeMap::new(), computing: BTreeMap::new(), skipped: BTreeMap::new() };
    for t in
        run.tiles.iter().filter(|t| run.core_kind(t.core) == CoreKind::Aic && run.rank_of_core(t.core).raw() == rank)
    {
        let work = l.work.entry(t.core).or_default();
        if t.computes {
            *work += t.end_ns - t.start_ns;
            l.computing.entry(t.core).or_default().push(t.node);
        } else {
            l.skipped.entry(t.core).or_default().push(t.node);
        }
    }
    l
}

/// The skipped tile on `core` of `node`'s family nearest in planned start to `node` and not yet
/// traded, if any.
fn partner(c: &Compiled, l: &Loads, core: CoreId, node: NodeId, traded: &[bool]) -> Option<NodeId> {
    let space = &c.expanded.space;
    let p = &c.placement;
    l.skipped
        .get(&core)?
        .iter()
        .copied()
        .filter(|&b| !traded[b.index()] && space.family_of(b) == space.family_of(node))
        .min_by_key(|&b| (p.start_ns[b].abs_diff(p.start_ns[node]), b))
}

/// Step 1: on every rank, trade the heaviest core's latest computing tiles for skipped tiles
/// of the same family on the lightest core until no trade narrows the spread.
fn balanced_cores(c: &Compiled, run: &SimResult) -> IdVec<NodeId, CoreId> {
    let mut cores = c.placement.core_of.clone();
    let mut traded = vec![false; cores.len()];
    for rank in 0..run.ranks {
        let mut l = loads(run, rank);
        for list in l.computing.values_mut() {
            list.sort_by_key(|&v| (c.placement.start_ns[v], v));
        }
        let time = |v: NodeId| run.tiles[v.index()].end_ns - run.tiles[v.index()].start_ns;
        while let Some((&heavy, &hw)) = l.work.iter().max_by_key(|&(c, w)| (*w, std::cmp::Reverse(*c))) {
            let Some((&light, &lw)) = l.work.iter().min_by_key(|&(c, w)| (*w, *c)) else { break };
            // The latest computing tile of the heaviest core that has a partner and whose move
            // narrows the spread.
            let list = l.computing.get(&heavy).cloned().unwrap_or_default();
            let found = list.iter().rev().copied().find_map(|a| {
                if traded[a.index()] || time(a) >= hw - lw {
                    return None;
                }
                partner(c, &l, light, a, &traded).map(|b| (a, b))
            });
            let Some((a, b)) = found else { break };
            traded[a.index()] = true;
            traded[b.index()] = true;
            cores[a] = light;
            cores[b] = heavy;
            *l.work.get_mut(&heavy).expect("a core with work") -= time(a);
            *l.work.get_mut(&light).expect("a core with work") += time(a);
        }
    }
    cores
}

/// Step 2's move: on the rank whose AIC cores finish last, one of the last 16 computing tiles
/// of the core that finishes last trades cores with a skipped tile of the same family on
/// another random core of the rank.
fn random_trade(c: &Compiled, run: &SimResult, rng: &mut SplitMix) -> Option<IdVec<NodeId, CoreId>> {
    let last = run
        .tiles
        .iter()
        .filter(|t| run.core_kind(t.core) == CoreKind::Aic && t.computes)
        .max_by_key(|t| (t.end_ns, t.node))?;
    let core = last.core;
    let rank = run.rank_of_core(core).raw();
    let l = loads(run, rank);
    let mut list = l.computing.get(&core)?.clone();
    list.sort_by_key(|&v| (std::cmp::Reverse(c.placement.start_ns[v]), v));
    list.truncate(16);
    let a = list[(rng.next_u64() % list.len() as u64) as usize];
    let others: Vec<CoreId> = l.work.keys().copied().filter(|&o| o != core).collect();
    let other = *others.get((rng.next_u64() % others.len().max(1) as u64) as usize)?;
    let b = partner(c, &l, other, a, &vec![false; c.placement.core_of.len()])?;
    let mut cores = c.placement.core_of.clone();
    cores[a] = other;
    cores[b] = core;
    Some(cores)
}

/// The run's critical chain, from the tile that ends last back: at each step the later of the
/// tile that released its wait and the tile before it on its core; the last `steps` printed.
fn chain(c: &Compiled, run: &SimResult, steps: usize) {
    println!(
        "    critical chain back from the end, runs of one family on one core: family, rank/core, tiles (skipping), first start..last end us"
    );
    // (family, core, tiles, skipping, first start, last end)
    let mut runs: Vec<(u32, CoreId, u32, u32, u64, u64)> = Vec::new();
    for (v, _) in critical(c, run) {
        let t = &run.tiles[v.index()];
        match runs.last_mut() {
            Some(r) if r.0 == t.family.raw() && r.1 == t.core => {
                r.2 += 1;
                r.3 += u32::from(!t.computes);
                r.4 = t.start_ns;
            }
            _ => runs.push((t.family.raw(), t.core, 1, u32::from(!t.computes), t.start_ns, t.end_ns)),
        }
    }
    for (family, core, n, skipping, first, last) in runs.into_iter().take(steps) {
        println!(
            "      f{family} r{} c{} {n} ({skipping}) {:.1}..{:.1}",
            run.rank_of_core(core).raw(),
            run.local_core(core),
            first as f64 / 1e3,
            last as f64 / 1e3
        );
    }
}

/// The run's critical chain from the tile that ends last back to the start: per tile, whether
/// it released the tile after it in the chain through a signal (rather than by being before
/// it on its core).
fn critical(c: &Compiled, run: &SimResult) -> Vec<(NodeId, bool)> {
    let mut out = Vec::new();
    let Some(mut t) = run.tiles.iter().max_by_key(|t| (t.end_ns, t.node)) else { return out };
    let mut by_signal = false;
    loop {
        out.push((t.node, by_signal));
        let p = &c.placement;
        let at = p.position[t.node] as usize;
        let before = (at > 0).then(|| &run.tiles[p.queues.row(t.core)[at - 1].index()]);
        let released = t.released_by.map(|r| &run.tiles[r.index()]);
        // Waiting on a signal when it arrived before its release; else its core was busy.
        (t, by_signal) = match (released, before) {
            (Some(r), Some(b)) => {
                if r.done_ns >= b.done_ns {
                    (r, true)
                } else {
                    (b, false)
                }
            }
            (Some(r), None) => (r, true),
            (None, Some(b)) => (b, false),
            (None, None) => break,
        };
    }
    out
}

/// Step 2's third move: a tile of the critical chain that releases the next through a signal
/// (among the chain's last 200 tiles) trades places with one of the 4 tiles before it on its
/// core, so its signal goes out sooner.
fn critical_reorder(c: &Compiled, run: &SimResult, rng: &mut SplitMix) -> Option<IdVec<NodeId, u64>> {
    let releasers: Vec<NodeId> = critical(c, run)
        .into_iter()
        .take(200)
        .filter(|&(v, by_signal)| by_signal && run.tiles[v.index()].computes)
        .map(|(v, _)| v)
        .collect();
    let a = *releasers.get((rng.next_u64() % releasers.len().max(1) as u64) as usize)?;
    let p = &c.placement;
    let at = p.position[a] as usize;
    let back = 1 + (rng.next_u64() % 4) as usize;
    let b = p.queues.row(p.core_of[a])[at.checked_sub(back)?];
    let mut keys = p.start_ns.clone();
    keys[a] = p.start_ns[b];
    keys[b] = p.start_ns[a].max(keys[a] + 1);
    Some(keys)
}

/// A tile in the run: start, end, whether it computes, which tile released its wait.
type Span = (u64, u64, bool, Option<NodeId>);

/// On the rank with the most computed AIC work, per AIC core on average: computed work, idle
/// before its first tile, idle between tiles (waiting), and from its last tile to the end.
fn idle(run: &SimResult) {
    let Some(rank) = busiest_rank(run) else { return };
    let mut per_core: BTreeMap<CoreId, Vec<Span>> = BTreeMap::new();
    for t in
        run.tiles.iter().filter(|t| run.core_kind(t.core) == CoreKind::Aic && run.rank_of_core(t.core).raw() == rank)
    {
        per_core.entry(t.core).or_default().push((t.start_ns, t.end_ns, t.computes, t.released_by));
    }
    // Waits by the family that released them, in tenths of the run.
    let mut by: BTreeMap<(String, u64), u64> = BTreeMap::new();
    let (mut work, mut head, mut gaps, mut tail, mut max_end) = (0u64, 0u64, 0u64, 0u64, 0u64);
    for tiles in per_core.values_mut() {
        tiles.sort_unstable();
        head += tiles.first().map_or(0, |t| t.0);
        let mut end = tiles.first().map_or(0, |t| t.0);
        for &(s, e, computes, released_by) in tiles.iter() {
            gaps += s.saturating_sub(end);
            if s > end {
                let family = released_by.map_or("none".to_string(), |r| {
                    let t = &run.tiles[r.index()];
                    format!("{:?}{}", run.core_kind(t.core), t.family.raw())
                });
                *by.entry((family, end * 10 / run.makespan_ns.max(1))).or_default() += s - end;
            }
            if computes {
                work += e - s;
            }
            end = end.max(e);
        }
        tail += run.makespan_ns - end;
        max_end = max_end.max(end);
    }
    let n = per_core.len().max(1) as f64 * 1e3;
    println!(
        "    rank {rank} per AIC core, us: computed {:.1}, before first {:.1}, between tiles {:.1}, after last {:.1} (last AIC end {:.1})",
        work as f64 / n,
        head as f64 / n,
        gaps as f64 / n,
        tail as f64 / n,
        max_end as f64 / 1e3
    );
    for ((family, tenth), ns) in by {
        if ns as f64 / n >= 5.0 {
            println!("      waits released by {family} in tenth {tenth}: {:.1} us per core", ns as f64 / n);
        }
    }
}
