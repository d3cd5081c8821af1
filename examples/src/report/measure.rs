//! One EP of a job: schedule, simulate against the kernel-by-kernel baseline, write the
//! kernel (and the EP 8 trace), and keep the figures the table prints.

use super::Job;
use hpmoe_core::cost::{CostProfile, TaskflowCost};
use hpmoe_core::model::Taskflow;
use hpmoe_core::sim;
use hpmoe_core::trace::{Labels, chrome_trace};
use std::path::Path;
use std::time::Instant;

/// The EP whose simulated taskflow run is also written as a Chrome/Perfetto trace (one EP
/// only, to keep the run short and the folder small).
pub const TRACE_EP: u32 = 8;

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
    pub baseline: sim::Summary,
    pub taskflow: sim::Summary,
    pub bound_ns: u64,
    pub speedup: f64,
    pub taskflow_over_bound: f64,
    pub baseline_over_bound: f64,
    /// The job's extra-table row for this EP, if it has an [`ExtraTable`](super::ExtraTable).
    pub extra: Option<String>,
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
    /// When the job started, for the progress lines.
    pub started: Instant,
}

/// Measures `job` at expert parallelism `ep`, writing its files to `out_dir/epN/`; progress
/// goes to stderr.
pub fn measure(job: &Job<'_>, ep: u32, setup: &Setup<'_>) -> Result<Row, String> {
    eprint!("[ep {ep}] scheduling…");
    let tf = (job.taskflow)(ep, setup.tokens)?;
    let cost = TaskflowCost::new(&tf, setup.profile.clone());
    let t = Instant::now();
    let c = hpmoe_core::compile(&tf, &cost).map_err(|d| d.render(&tf.sources))?;
    let sched_ms = t.elapsed().as_secs_f64() * 1e3;
    eprint!(" simulating…");
    let t = Instant::now();
    let cmp = sim::compare(&c, &tf.profile, &cost).map_err(|e| e.to_string())?;
    let sim_ms = t.elapsed().as_secs_f64() * 1e3;
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
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let kernel =
        hpmoe_ascendc::emit_with(&tf, &c, &job.emit).map_err(|e| format!("EP {ep}: cannot emit the kernel: {e}"))?;
    kernel.write_to(&dir).map_err(|e| format!("cannot write the kernel to {}: {e}", dir.display()))?;
    let write = |name: &str, bytes: &[u8]| {
        std::fs::write(dir.join(name), bytes).map_err(|e| format!("cannot write {}: {e}", dir.join(name).display()))
    };
    if setup.json_tables {
        write(&format!("{}_schedule.json", kernel.name), kernel.table.to_json().as_bytes())?;
    }
    if ep == TRACE_EP {
        eprint!(" writing trace…");
        let labels = Labels::new(&tf, &c.expanded);
        write(&format!("{}_trace.json", kernel.name), chrome_trace(&cmp.taskflow, &labels).as_bytes())?;
    }
    eprintln!(" done ({:.1} s)", setup.started.elapsed().as_secs_f64());
    Ok(Row {
        ep,
        kernel: kernel.name.clone(),
        instances: c.expanded.nodes(),
        edges: c.expanded.dag.edges(),
        cross_edges: (c.sync.cross_edges_before, c.sync.cross_edges_after),
        counters: c.sync.counters_per_rank.iter().max().copied().unwrap_or(0),
        table_bytes: kernel.table_bin.len(),
        flagged_edges: kernel.flags.edges.len(),
        sched_ms,
        sim_ms,
        baseline: cmp.baseline.result.summary(),
        taskflow: cmp.taskflow.summary(),
        bound_ns: cmp.bound.ns(),
        speedup: cmp.speedup(),
        taskflow_over_bound: cmp.taskflow_over_bound(),
        baseline_over_bound: cmp.baseline_over_bound(),
        extra,
    })
}
