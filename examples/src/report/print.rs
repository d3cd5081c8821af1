//! The results on stdout: the per-EP tables with their notes and the host-check verdict, or
//! the same figures as one JSON array (one object per EP).

use super::measure::{Row, TRACE_EP};
use super::{HostOutcome, REFERENCE_SPEEDUP};
use serde_json::json;
use std::path::Path;

/// What every printed form needs.
#[derive(Debug)]
pub struct Results<'a> {
    /// `DeepSeek-V3 MoE-FFN layer`.
    pub title: &'a str,
    pub tokens: u64,
    pub profile: &'a str,
    pub out_dir: &'a Path,
    pub json_tables: bool,
    /// Lines printed after the list of files written (none for the main job).
    pub notes: &'a [&'a str],
    pub rows: &'a [Row],
    /// The job's extra table's header and footer (its rows are in `rows`), if it has one.
    pub extra: Option<(&'a [&'a str], &'a [&'a str])>,
    pub host: &'a HostOutcome,
}

fn us(ns: u64) -> f64 {
    ns as f64 / 1e3
}

fn share(part: u64, whole: u64) -> f64 {
    part as f64 / whole.max(1) as f64
}

/// The JSON array: one object per EP, each with the host check's verdict.
pub fn json(r: &Results<'_>) -> Result<String, String> {
    let host = json!({
        "configs": r.host.names,
        "passed": r.host.failure.is_none(),
        "error": r.host.failure,
    });
    let objects: Vec<_> = r
        .rows
        .iter()
        .map(|row| {
            json!({
                "ep": row.ep,
                "tokens_per_rank": r.tokens,
                "profile": r.profile,
                "simulated": true,
                "baseline_us": us(row.baseline.makespan_ns),
                "taskflow_us": us(row.taskflow.makespan_ns),
                "speedup": row.speedup,
                "reference_speedup": [REFERENCE_SPEEDUP.0, REFERENCE_SPEEDUP.1],
                "bound_us": us(row.bound_ns),
                "bound_ratio": row.taskflow_over_bound,
                "baseline_bound_ratio": row.baseline_over_bound,
                "aic_util_taskflow": row.taskflow.aic_utilisation,
                "aic_util_baseline": row.baseline.aic_utilisation,
                "comm_taskflow_us": us(row.taskflow.comm_ns),
                "comm_baseline_us": us(row.baseline.comm_ns),
                "exposed_comm_taskflow_us": us(row.taskflow.exposed_comm_ns),
                "exposed_comm_baseline_us": us(row.baseline.exposed_comm_ns),
                "exposed_comm_taskflow_share": share(row.taskflow.exposed_comm_ns, row.taskflow.comm_ns),
                "exposed_comm_baseline_share": share(row.baseline.exposed_comm_ns, row.baseline.comm_ns),
                "instances": row.instances,
                "edges": row.edges,
                "schedule_table_bytes": row.table_bytes,
                "schedule_ms": row.sched_ms,
                "simulate_ms": row.sim_ms,
                "dir": r.out_dir.join(format!("ep{}", row.ep)),
                "host_check": host,
            })
        })
        .collect();
    serde_json::to_string_pretty(&objects).map_err(|e| e.to_string())
}

/// The text form: the results table, the schedules table, the files written and the host
/// check's verdict.
pub fn text(r: &Results<'_>) -> String {
    let mut out = String::new();
    let mut line = |s: String| {
        out.push_str(&s);
        out.push('\n');
    };
    results_table(r, &mut line);
    line(String::new());
    schedules_table(r, &mut line);
    line(String::new());
    if let Some((header, footer)) = r.extra {
        header.iter().for_each(|h| line(h.to_string()));
        r.rows.iter().filter_map(|row| row.extra.clone()).for_each(&mut line);
        footer.iter().for_each(|f| line(f.to_string()));
        line(String::new());
    }
    files(r, &mut line);
    line(String::new());
    match &r.host.failure {
        None => line(format!(
            "host check: PASS ({} on the host executor, {} output values bitwise equal to the naive reference)",
            r.host.descriptions.join(", "),
            r.host.elements
        )),
        Some(e) => line(format!("host check: FAIL: {e}")),
    }
    out
}

fn results_table(r: &Results<'_>, line: &mut impl FnMut(String)) {
    line(format!(
        "hpmoe: {}, {} tokens per rank, cost profile {} — all latencies simulated",
        r.title, r.tokens, r.profile
    ));
    line(format!(
        "{:>4} {:>9} {:>9} {:>8} {:>9} {:>8} {:>8} {:>8} {:>15} {:>15}",
        "EP",
        "base_us",
        "sim_us",
        "speedup",
        "bound_us",
        "sim/bnd",
        "AIC_sim",
        "AIC_base",
        "exposed_sim_us",
        "exposed_base_us"
    ));
    for row in r.rows {
        line(format!(
            "{:>4} {:>9.1} {:>9.1} {:>7.2}x {:>9.1} {:>8.2} {:>7.0}% {:>7.0}% {:>8.1} ({:>3.0}%) {:>8.1} ({:>3.0}%)",
            row.ep,
            us(row.baseline.makespan_ns),
            us(row.taskflow.makespan_ns),
            row.speedup,
            us(row.bound_ns),
            row.taskflow_over_bound,
            100.0 * row.taskflow.aic_utilisation,
            100.0 * row.baseline.aic_utilisation,
            us(row.taskflow.exposed_comm_ns),
            100.0 * share(row.taskflow.exposed_comm_ns, row.taskflow.comm_ns),
            us(row.baseline.exposed_comm_ns),
            100.0 * share(row.baseline.exposed_comm_ns, row.baseline.comm_ns),
        ));
    }
    let (lo, hi) = r.rows.iter().fold((f64::MAX, 0.0f64), |(lo, hi), r| (lo.min(r.speedup), hi.max(r.speedup)));
    line(format!(
        "speedup {lo:.2}–{hi:.2}x (simulated) beside the reference system's {:.2}–{:.2}x (reported, on hardware)",
        REFERENCE_SPEEDUP.0, REFERENCE_SPEEDUP.1
    ));
    for note in [
        "base_us: kernel-by-kernel baseline; sim_us: taskflow; speedup = base_us / sim_us; bound_us: no run",
        "under the same costs beats it; AIC_*: AIC utilisation; exposed_*: time on the busiest rank with a put",
        "in flight and no tile computing (share of its communication time), measured on both simulated runs;",
        "the baseline's is all of it by construction: its all-to-alls are kernels of their own.",
        "Figures marked [U] in hardware.md are guesses: see `--example sensitivity` before quoting a speedup.",
    ] {
        line(note.to_string());
    }
}

fn schedules_table(r: &Results<'_>, line: &mut impl FnMut(String)) {
    line(format!(
        "{:>4} {:>9} {:>10} {:>17} {:>9} {:>8} {:>10} {:>9} {:>7}",
        "EP", "instances", "edges", "cross->waits", "counters", "flagged", "table_KiB", "sched_ms", "sim_ms"
    ));
    for row in r.rows {
        line(format!(
            "{:>4} {:>9} {:>10} {:>17} {:>9} {:>8} {:>10.0} {:>9.0} {:>7.0}",
            row.ep,
            row.instances,
            row.edges,
            format!("{}->{}", row.cross_edges.0, row.cross_edges.1),
            row.counters,
            row.flagged_edges,
            row.table_bytes as f64 / 1024.0,
            row.sched_ms,
            row.sim_ms
        ));
    }
    line("cross->waits: cross-core dependencies before and after sync reduction; flagged: of those, carried by".into());
    line("the AIC->AIV hardware flag instead of a counter; table_KiB: the table the kernel walks.".into());
}

fn files(r: &Results<'_>, line: &mut impl FnMut(String)) {
    let k = r.rows.first().map_or("", |row| row.kernel.as_str());
    let eps: Vec<String> = r.rows.iter().map(|row| row.ep.to_string()).collect();
    line(format!(
        "wrote {}/ep{{{}}}/: AscendC kernel ({k}.cpp, {k}_schedule.h), schedule blobs",
        r.out_dir.display(),
        eps.join(",")
    ));
    line(format!(
        "({k}_schedule.bin, {k}_flags.bin{}), runtime headers in include/; Chrome trace of the",
        if r.json_tables { format!(", {k}_schedule.json") } else { String::new() }
    ));
    line(format!(
        "simulated EP {TRACE_EP} taskflow run: ep{TRACE_EP}/{k}_trace.json (EP {TRACE_EP} only; open in ui.perfetto.dev)."
    ));
    line("The kernels are sources: not compiled with a CANN toolkit nor run on an NPU here.".into());
    for note in r.notes {
        line(note.to_string());
    }
}
