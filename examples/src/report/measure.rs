//! One EP of a job: schedule, simulate against the kernel-by-kernel baseline, write the
//! kernel (and the EP 8 trace), and keep the figures the table prints.

use super::{Job, Routed};
use crate::ExampleError;
use hpmoe_core::cost::{CostProfile, TaskflowCost};
use hpmoe_core::model::Taskflow;
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
    pub baseline: sim::Summary,
    pub taskflow: sim::Summary,
    pub bound_ns: u64,
    pub speedup: f64,
    pub taskflow_over_bound: f64,
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
    pub ep: u32,
    /// The kernel's name and file stem (`moe_ffn` for `moe_ffn.cpp`).
    pub kernel: String,
    pub instances: usize,
    pub edges: usize,
    pub cross_edges: (u64, u64),
    pub counters: u32,
    pub table_bytes: usize,
    pub flagged_edges: usize,
    pub sched_ms: f64,
    pub sim_ms: f64,
    pub figures: Figures,
    /// The job's extra-table row for this EP, if it has an [`ExtraTable`](super::ExtraTable).
    pub extra: Option<String>,
    /// The same layer under the job's run-time routing, if it has one.
    pub routed: Option<RoutedRow>,
}

/// One EP of the layer under run-time routing (see [`super::Routed`]).
#[derive(Clone, Debug)]
pub struct RoutedRow {
    pub kernel: String,
    pub instances: usize,
    /// Guarded instances that skip their body in the run priced, all ranks.
    pub skipped: usize,
    /// Share of token choices the routing dropped for lack of capacity.
    pub dropped_share: f64,
    pub sched_ms: f64,
    pub sim_ms: f64,
    pub figures: Figures,
}

/// One EP's simulated run, as a job's [`ExtraTable`](super::ExtraTable) sees it.
#[derive(Clone, Copy, Debug)]
pub struct EpRun<'a> {
    pub ep: u32,
    pub tokens: u64,
    pub profile: &'a CostProfile,
    pub taskflow: &'a Taskflow,
    pub comparison: &'a sim::Comparison,
}

/// What the loop over EPs needs besides the job.
#[derive(Clone, Copy, Debug)]
pub struct Setup<'a> {
    pub tokens: u64,
    pub profile: &'a CostProfile,
    pub out_dir: &'a Path,
    /// Also write the schedule table as JSON.
    pub json_tables: bool,
    /// Measure the job's routed layer at every EP, not only its default ones.
    pub routed_all: bool,
    /// When the job started, for the progress lines.
    pub started: Instant,
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
    eprint!(" simulating…");
    let t = Instant::now();
    let comparison = sim::compare(&compiled, &tf.profile, run)
        .map_err(|error| ExampleError::Simulate { taskflow: tf.name.clone(), error })?;
    Ok(Measured { compiled, comparison, sched_ms, sim_ms: t.elapsed().as_secs_f64() * 1e3 })
}

/// Writes `tf`'s kernel files (and its table as JSON if asked) into `dir`.
fn write_kernel(
    job: &Job<'_>,
    tf: &Taskflow,
    compiled: &hpmoe_core::Compiled,
    dir: &Path,
    json_tables: bool,
) -> Result<hpmoe_ascendc::KernelFiles, ExampleError> {
    let kernel = hpmoe_ascendc::emit_with(tf, compiled, &job.emit)
        .map_err(|errors| ExampleError::Emit { taskflow: tf.name.clone(), errors })?;
    kernel.write_to(dir).map_err(|e| ExampleError::io("write the kernel to", dir, e))?;
    if json_tables {
        let path = dir.join(format!("{}_schedule.json", kernel.name));
        std::fs::write(&path, kernel.table.to_json()).map_err(|e| ExampleError::io("write", &path, e))?;
    }
    Ok(kernel)
}

/// Measures `job` at expert parallelism `ep`, writing its files to `out_dir/epN/`; progress
/// goes to stderr.
pub fn measure(job: &Job<'_>, ep: u32, setup: &Setup<'_>) -> Result<Row, ExampleError> {
    eprint!("[ep {ep}] scheduling…");
    let tf = (job.taskflow)(ep, setup.tokens)?;
    let cost = TaskflowCost::new(&tf, setup.profile.clone());
    let Measured { compiled: c, comparison: cmp, sched_ms, sim_ms } = schedule_and_simulate(&tf, &cost, &cost)?;
    let extra = match &job.extra {
        Some(x) => {
            eprint!(" {}…", x.progress);
            let run = EpRun { ep, tokens: setup.tokens, profile: setup.profile, taskflow: &tf, comparison: &cmp };
            Some((x.row)(&run)?)
        }
        None => None,
    };
    eprint!(" writing kernel…");
    let dir = setup.out_dir.join(format!("ep{ep}"));
    std::fs::create_dir_all(&dir).map_err(|e| ExampleError::io("create", &dir, e))?;
    let kernel = write_kernel(job, &tf, &c, &dir, setup.json_tables)?;
    if ep == TRACE_EP {
        eprint!(" writing trace…");
        let labels = Labels::new(&tf, &c.expanded);
        let path = dir.join(format!("{}_trace.json", kernel.name));
        std::fs::write(&path, chrome_trace(&cmp.taskflow, &labels)).map_err(|e| ExampleError::io("write", &path, e))?;
    }
    let routed = match &job.routed {
        Some(r) if setup.routed_all || r.eps.contains(&ep) => Some(measure_routed(job, r, ep, setup, &dir)?),
        _ => None,
    };
    eprintln!(" done ({:.1} s)", setup.started.elapsed().as_secs_f64());
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
    eprint!(" | {}: routing…", routed.name);
    let layer = (routed.layer)(ep, setup.tokens)?;
    let cost = TaskflowCost::new(&layer.taskflow, setup.profile.clone());
    let skipped = layer.run.skipped();
    let plan = cost.clone().with_expected_activity(layer.plan);
    let run = cost.with_activity(layer.run);
    eprint!(" scheduling…");
    let m = schedule_and_simulate(&layer.taskflow, &plan, &run)?;
    eprint!(" writing kernel…");
    let kernel = write_kernel(job, &layer.taskflow, &m.compiled, dir, setup.json_tables)?;
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
