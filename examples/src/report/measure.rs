//! One EP of a job: schedule, simulate against the kernel-by-kernel baseline, write the
//! kernel (and the EP 8 trace), and keep the figures the table prints.

use super::{Job, Routed, Training, Variant};
use crate::ExampleError;
use hpmoe_core::cost::{CostProfile, TaskflowCost};
use hpmoe_core::model::Taskflow;
use hpmoe_host::moe::Pass;
use hpmoe_host::sim;
use hpmoe_host::trace::{Labels, chrome_trace};
use std::path::Path;
use std::time::Instant;

/// The EP whose simulated taskflow run is also written as a Chrome/Perfetto trace (one EP
/// only, to keep the run short and the folder small).
pub const TRACE_EP: u32 = 8;

/// The figures of one simulated comparison: taskflow, kernel-by-kernel baseline, bound.
#[derive(Clone, Debug)]
pub struct Figures {
    /// The kernel-by-kernel baseline's headline figures (simulated).
    pub baseline: sim::Summary,
    /// The taskflow's headline figures (simulated).
    pub taskflow: sim::Summary,
    /// The lower bound, ns.
    pub bound_ns: u64,
    /// Baseline makespan over taskflow makespan (> 1: the taskflow is faster).
    pub speedup: f64,
    /// Taskflow makespan over the bound (≥ 1).
    pub taskflow_over_bound: f64,
    /// Baseline makespan over the bound (≥ 1).
    pub baseline_over_bound: f64,
}

impl Figures {
    fn of(cmp: &sim::Comparison) -> Self {
        Figures {
            baseline: cmp.baseline.result.summary(),
            taskflow: cmp.taskflow.summary(),
            bound_ns: cmp.bound.ns(),
            speedup: cmp.speedup(),
            taskflow_over_bound: cmp.taskflow_over_bound(),
            baseline_over_bound: cmp.baseline_over_bound(),
        }
    }
}

/// One EP's figures.
#[derive(Clone, Debug)]
pub struct Row {
    /// Expert-parallel ranks of the layer.
    pub ep: u32,
    /// The kernel's name and file stem (`moe_ffn` for `moe_ffn.cpp`).
    pub kernel: String,
    /// Tile instances of all ranks (the schedule's nodes).
    pub instances: usize,
    /// Dependency edges between them.
    pub edges: usize,
    /// Dependency edges between different cores, before and after the sync reduction.
    pub cross_edges: (u64, u64),
    /// Counters the busiest rank uses.
    pub counters: u32,
    /// Bytes of the schedule table blob (`NAME_schedule.bin`).
    pub table_bytes: usize,
    /// Dependencies carried by the AIC → own-AIV hardware flag instead of a counter.
    pub flagged_edges: usize,
    /// Wall time of compiling (expansion, checks, schedule, table, flag plan), ms on this host.
    pub sched_ms: f64,
    /// Wall time of simulating the taskflow, its baseline and its bound, ms on this host.
    pub sim_ms: f64,
    /// The simulated figures.
    pub figures: Figures,
    /// The job's extra-table row for this EP, if it has an [`ExtraTable`](super::ExtraTable).
    pub extra: Option<String>,
    /// The same layer under the job's run-time routing, if it has one.
    pub routed: Option<RoutedRow>,
    /// Bytes each rank puts to other ranks and itself (every put: dispatch and combine).
    pub put_bytes_per_rank: u64,
    /// The job's variant (the main job's INT8 dispatch), if it has one.
    pub variant: Option<VariantRow>,
    /// The layer's backward and training step, if the job has them ([`super::Training`]).
    pub passes: Vec<PassRow>,
}

/// One EP of the job's variant (see [`super::Variant`]).
#[derive(Clone, Debug)]
pub struct VariantRow {
    /// The variant's kernel name (`moe_ffn_int8`).
    pub kernel: String,
    /// Tile instances of the variant's taskflow, all ranks.
    pub instances: usize,
    /// Bytes each rank puts (every put: dispatch and combine).
    pub put_bytes_per_rank: u64,
    /// Wall time of scheduling it, in ms.
    pub sched_ms: f64,
    /// Wall time of simulating it, in ms.
    pub sim_ms: f64,
    /// Its simulated figures beside its baseline and bound.
    pub figures: Figures,
}

/// One pass of the layer other than its forward (the backward, the training step) at one EP
/// (see [`super::Training`]).
#[derive(Clone, Debug)]
pub struct PassRow {
    /// Which pass.
    pub pass: Pass,
    /// Its kernel's name (`moe_ffn_backward`).
    pub kernel: String,
    /// Tile instances of its taskflow, all ranks.
    pub instances: usize,
    /// Wall time of scheduling it, in ms.
    pub sched_ms: f64,
    /// Wall time of simulating it, in ms.
    pub sim_ms: f64,
    /// Its simulated figures beside its own kernel-by-kernel baseline and bound.
    pub figures: Figures,
}

/// Bytes one rank's instances of `tf` put (each family's put bytes × its instances per rank).
fn put_bytes_per_rank(tf: &Taskflow, cost: &TaskflowCost) -> u64 {
    let grid = |f: &hpmoe_core::model::TileFamily| f.grid.iter().map(|d| d.extent).product::<u64>();
    tf.families.iter().zip(cost.traffic()).map(|(f, t)| t.remote_bytes * grid(f)).sum()
}

/// One EP of the layer under run-time routing (see [`super::Routed`]).
#[derive(Clone, Debug)]
pub struct RoutedRow {
    /// The kernel's name and file stem (`moe_ffn_natural` for `moe_ffn_natural.cpp`).
    pub kernel: String,
    /// Tile instances of all ranks.
    pub instances: usize,
    /// Guarded instances that skip their body in the run priced, all ranks.
    pub skipped: usize,
    /// Share of token choices the routing dropped for lack of capacity.
    pub dropped_share: f64,
    /// Wall time of compiling, ms on this host.
    pub sched_ms: f64,
    /// Wall time of simulating, ms on this host.
    pub sim_ms: f64,
    /// The simulated figures of the routed run priced (not the expected activity it was planned on).
    pub figures: Figures,
}

/// One EP's simulated run, as a job's [`ExtraTable`](super::ExtraTable) sees it.
#[derive(Clone, Copy, Debug)]
pub struct EpRun<'a> {
    /// Expert-parallel ranks.
    pub ep: u32,
    /// Tokens per rank.
    pub tokens: u64,
    /// The cost profile the run was priced with.
    pub profile: &'a CostProfile,
    /// The layer's taskflow at this EP.
    pub taskflow: &'a Taskflow,
    /// The simulated taskflow, baseline and bound.
    pub comparison: &'a sim::Comparison,
}

/// What the loop over EPs needs besides the job.
#[derive(Clone, Copy, Debug)]
pub struct Setup<'a> {
    /// Tokens per rank (`--tokens`).
    pub tokens: u64,
    /// The cost profile every EP is priced with (`--profile`).
    pub profile: &'a CostProfile,
    /// The folder the kernels and traces are written under (`--out`).
    pub out_dir: &'a Path,
    /// Also write the schedule table as JSON.
    pub json_tables: bool,
    /// Measure the job's routed layer at every EP, not only its default ones.
    pub routed_all: bool,
    /// When the job started, for the progress lines.
    pub started: Instant,
    /// The workspace, when the job's EP 8 timelines are the README's and it runs with the
    /// README's settings: their committed copies under it are refreshed
    /// ([`write_timeline`](super::write_timeline)).
    pub readme_assets: Option<&'a Path>,
}

/// A compiled layer and its simulated comparison, with the time each took.
struct Measured {
    compiled: hpmoe_core::Compiled,
    comparison: sim::Comparison,
    sched_ms: f64,
    sim_ms: f64,
}

/// Schedules `tf` under `plan` and simulates the table under `run` (the same costs, unless
/// a run-time routing makes some tiles skip their work).
fn schedule_and_simulate(tf: &Taskflow, plan: &TaskflowCost, run: &TaskflowCost) -> Result<Measured, ExampleError> {
    let t = Instant::now();
    // Planned as `hpmoe_core::plan` plans (hardware flags before the table), under the job's costs.
    let options = hpmoe_core::CompileOptions::default();
    let compiled = hpmoe_core::compile_with(tf, plan, &options).map_err(|d| ExampleError::plan(tf, d))?;
    let sched_ms = t.elapsed().as_secs_f64() * 1e3;
    let t = Instant::now();
    let comparison = sim::compare(&compiled, &tf.profile, run)
        .map_err(|error| ExampleError::Simulate { taskflow: tf.name.clone(), error })?;
    Ok(Measured { compiled, comparison, sched_ms, sim_ms: t.elapsed().as_secs_f64() * 1e3 })
}

/// Writes `tf`'s kernel files (and its table as JSON if asked) into `dir`.
fn write_kernel(
    emit: &hpmoe_ascendc::EmitOptions,
    tf: &Taskflow,
    compiled: &hpmoe_core::Compiled,
    dir: &Path,
    json_tables: bool,
) -> Result<hpmoe_ascendc::KernelFiles, ExampleError> {
    let kernel = hpmoe_ascendc::emit_with(tf, compiled, emit)
        .map_err(|errors| ExampleError::Emit { taskflow: tf.name.clone(), errors })?;
    kernel.write_to(dir).map_err(|e| ExampleError::io("write the kernel to", dir, e))?;
    if json_tables {
        let path = dir.join(format!("{}_schedule.json", kernel.name));
        std::fs::write(&path, kernel.table.to_json()).map_err(|e| ExampleError::io("write", &path, e))?;
    }
    Ok(kernel)
}

/// Measures `job` at expert parallelism `ep`, writing its files to `out_dir/epN/`; progress
/// goes to stderr, a whole line per layer measured (the backward may be measured on another
/// thread at the same time).
pub fn measure(job: &Job<'_>, ep: u32, setup: &Setup<'_>) -> Result<Row, ExampleError> {
    let tf = (job.taskflow)(ep, setup.tokens)?;
    let cost = TaskflowCost::new(&tf, setup.profile.clone());
    let Measured { compiled: c, comparison: cmp, sched_ms, sim_ms } = schedule_and_simulate(&tf, &cost, &cost)?;
    let extra = match &job.extra {
        Some(x) => {
            let run = EpRun { ep, tokens: setup.tokens, profile: setup.profile, taskflow: &tf, comparison: &cmp };
            Some((x.row)(&run)?)
        }
        None => None,
    };
    let dir = ep_dir(setup, ep)?;
    let kernel = write_kernel(&job.emit, &tf, &c, &dir, setup.json_tables)?;
    if ep == TRACE_EP {
        write_trace(&tf, &c, &cmp, &dir, &kernel.name, setup)?;
    }
    progress(ep, "", sched_ms, sim_ms, setup);
    let routed = match &job.routed {
        Some(r) if setup.routed_all || r.eps.contains(&ep) => Some(measure_routed(job, r, ep, setup, &dir)?),
        _ => None,
    };
    let variant = match &job.variant {
        Some(v) => Some(measure_variant(job, v, ep, setup, &dir)?),
        None => None,
    };
    Ok(Row {
        ep,
        kernel: kernel.name.clone(),
        instances: c.expanded.nodes(),
        edges: c.expanded.dag.edges(),
        cross_edges: (c.sync.cross_edges_before, c.sync.cross_edges_after),
        counters: c.sync.counters_per_rank.values().max().copied().unwrap_or(0),
        table_bytes: kernel.table_bin.len(),
        flagged_edges: kernel.flags.edges.len(),
        sched_ms,
        sim_ms,
        figures: Figures::of(&cmp),
        extra,
        routed,
        put_bytes_per_rank: put_bytes_per_rank(&tf, &cost),
        variant,
        passes: Vec::new(),
    })
}

/// `OUT/epN/`, created.
fn ep_dir(setup: &Setup<'_>, ep: u32) -> Result<std::path::PathBuf, ExampleError> {
    let dir = setup.out_dir.join(format!("ep{ep}"));
    std::fs::create_dir_all(&dir).map_err(|e| ExampleError::io("create", &dir, e))?;
    Ok(dir)
}

/// One progress line on stderr: `[ep 8] natural: scheduled in 1.2 s, simulated in 0.8 s (9.1 s)`.
fn progress(ep: u32, what: &str, sched_ms: f64, sim_ms: f64, setup: &Setup<'_>) {
    let what = if what.is_empty() { String::new() } else { format!(" {what}:") };
    eprintln!(
        "[ep {ep}]{what} scheduled in {:.1} s, simulated in {:.1} s, kernel written ({:.1} s)",
        sched_ms / 1e3,
        sim_ms / 1e3,
        setup.started.elapsed().as_secs_f64()
    );
}

/// Writes the simulated taskflow run of `tf` as a Chrome/Perfetto trace (`NAME_trace.json`) and
/// rank [`TIMELINE_RANK`](super::TIMELINE_RANK)'s SVG timeline above its kernel-by-kernel
/// baseline (`NAME_timeline.svg`) into `dir`, refreshing the README's copy if `setup` says so.
fn write_trace(
    tf: &Taskflow,
    c: &hpmoe_core::Compiled,
    cmp: &sim::Comparison,
    dir: &Path,
    name: &str,
    setup: &Setup<'_>,
) -> Result<(), ExampleError> {
    let labels = Labels::new(tf, &c.expanded);
    let path = dir.join(format!("{name}_trace.json"));
    std::fs::write(&path, chrome_trace(&cmp.taskflow, &labels)).map_err(|e| ExampleError::io("write", &path, e))?;
    let svg = super::timeline_svg(cmp, &labels, super::TIMELINE_RANK);
    if let Some(asset) = super::write_timeline(&svg, dir, name, setup.readme_assets)? {
        eprintln!("[ep {TRACE_EP}] redrew the README's {}", asset.display());
    }
    Ok(())
}

/// The layer's backward and training step at `ep` ([`Training`]), each scheduled and simulated
/// against its own kernel-by-kernel baseline and bound under the job's costs; their kernels go
/// into `OUT/epN/` (with the training step's trace and timeline at [`TRACE_EP`]).
pub fn measure_passes(
    emit: &hpmoe_ascendc::EmitOptions,
    training: &Training<'_>,
    ep: u32,
    setup: &Setup<'_>,
) -> Result<Vec<PassRow>, ExampleError> {
    let dir = ep_dir(setup, ep)?;
    [Pass::Backward, Pass::TrainingStep]
        .into_iter()
        .map(|pass| {
            let tf = (training.taskflow)(pass, ep, setup.tokens)?;
            let cost = TaskflowCost::new(&tf, setup.profile.clone());
            let m = schedule_and_simulate(&tf, &cost, &cost)?;
            let kernel = write_kernel(emit, &tf, &m.compiled, &dir, setup.json_tables)?;
            if ep == TRACE_EP && pass == Pass::TrainingStep {
                write_trace(&tf, &m.compiled, &m.comparison, &dir, &kernel.name, setup)?;
            }
            progress(ep, pass.name(), m.sched_ms, m.sim_ms, setup);
            Ok(PassRow {
                pass,
                kernel: kernel.name,
                instances: m.compiled.expanded.nodes(),
                sched_ms: m.sched_ms,
                sim_ms: m.sim_ms,
                figures: Figures::of(&m.comparison),
            })
        })
        .collect()
}

/// The job's variant at `ep`, scheduled and simulated under the job's costs; its kernel goes
/// into `dir`.
fn measure_variant(
    job: &Job<'_>,
    variant: &Variant<'_>,
    ep: u32,
    setup: &Setup<'_>,
    dir: &Path,
) -> Result<VariantRow, ExampleError> {
    let tf = (variant.taskflow)(ep, setup.tokens)?;
    let cost = TaskflowCost::new(&tf, setup.profile.clone());
    let m = schedule_and_simulate(&tf, &cost, &cost)?;
    let kernel = write_kernel(&job.emit, &tf, &m.compiled, dir, setup.json_tables)?;
    progress(ep, variant.name, m.sched_ms, m.sim_ms, setup);
    Ok(VariantRow {
        kernel: kernel.name,
        instances: m.compiled.expanded.nodes(),
        put_bytes_per_rank: put_bytes_per_rank(&tf, &cost),
        sched_ms: m.sched_ms,
        sim_ms: m.sim_ms,
        figures: Figures::of(&m.comparison),
    })
}

/// The layer under run-time routing at `ep`: scheduled on the routing distribution's
/// expected activity, simulated with one routing's activity; its kernel goes into `dir`.
fn measure_routed(
    job: &Job<'_>,
    routed: &Routed<'_>,
    ep: u32,
    setup: &Setup<'_>,
    dir: &Path,
) -> Result<RoutedRow, ExampleError> {
    let layer = (routed.layer)(ep, setup.tokens)?;
    let cost = TaskflowCost::new(&layer.taskflow, setup.profile.clone());
    let skipped = layer.run.skipped();
    let plan = cost.clone().with_expected_activity(layer.plan);
    let run = cost.with_activity(layer.run);
    let m = schedule_and_simulate(&layer.taskflow, &plan, &run)?;
    let kernel = write_kernel(&job.emit, &layer.taskflow, &m.compiled, dir, setup.json_tables)?;
    progress(ep, routed.name, m.sched_ms, m.sim_ms, setup);
    Ok(RoutedRow {
        kernel: kernel.name,
        instances: m.compiled.expanded.nodes(),
        skipped,
        dropped_share: layer.dropped_share,
        sched_ms: m.sched_ms,
        sim_ms: m.sim_ms,
        figures: Figures::of(&m.comparison),
    })
}
