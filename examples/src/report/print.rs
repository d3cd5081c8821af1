//! The results on stdout: the per-EP tables with their notes and the host-check verdict, or
//! the same figures as one JSON array (one object per EP).

use super::measure::{Figures, Row, TRACE_EP};
use super::network::{self, AllToAllRow};
use super::{HostOutcome, REFERENCE_SPEEDUP};
use hpmoe_core::cost::CostProfile;
use hpmoe_host::moe::Pass;
use serde_json::json;
use std::path::Path;

/// What every printed form needs.
#[derive(Debug)]
pub struct Results<'a> {
    /// `DeepSeek-V3 MoE-FFN layer`.
    pub title: &'a str,
    /// Tokens per rank.
    pub tokens: u64,
    /// The cost profile's name (`ascend_a3_die`, or the file given to `--profile`).
    pub profile: &'a str,
    /// The folder the kernels and traces were written under.
    pub out_dir: &'a Path,
    /// Whether the schedule tables were also written as JSON (`--json-tables`).
    pub json_tables: bool,
    /// Lines printed after the list of files written (none for the main job).
    pub notes: &'a [&'a str],
    /// One row per EP measured, in order.
    pub rows: &'a [Row],
    /// The all-to-all alone at each EP of `rows`.
    pub network: &'a [AllToAllRow],
    /// The cost profile itself (`profile` is its name).
    pub profile_figures: &'a CostProfile,
    /// The job's extra table's header and footer (its rows are in `rows`), if it has one.
    pub extra: Option<(&'a [&'a str], &'a [&'a str])>,
    /// The run-time routing's name and header lines (its rows are in `rows`), if any.
    pub routed: Option<(&'a str, &'a [&'a str])>,
    /// The variant's name and header lines (its rows are in `rows`), if any.
    pub variant: Option<(&'a str, &'a [&'a str])>,
    /// The backward and training step's header lines (their rows are in `rows`), if any.
    pub training: Option<&'a [&'a str]>,
    /// The host executor's checks.
    pub host: &'a HostOutcome,
    /// The generated kernels on the CPU emulator.
    pub emulator: &'a HostOutcome,
}

fn us(ns: u64) -> f64 {
    ns as f64 / 1e3
}

fn share(part: u64, whole: u64) -> f64 {
    part as f64 / whole.max(1) as f64
}

/// The JSON array: one object per EP, each with the host check's verdict.
pub fn json(r: &Results<'_>) -> Result<String, crate::ExampleError> {
    let host = json!({
        "configs": r.host.names,
        "passed": r.host.failure.is_none(),
        "error": r.host.failure,
    });
    let emulator = json!({
        "configs": r.emulator.names,
        "passed": r.emulator.failure.is_none() && r.emulator.not_run.is_none(),
        "ran": r.emulator.not_run.is_none(),
        "error": r.emulator.failure.as_ref().or(r.emulator.not_run.as_ref()),
    });
    let objects: Vec<_> = r
        .rows
        .iter()
        .map(|row| {
            let mut object = figures_json(&row.figures);
            let fields = json!({
                "ep": row.ep,
                "tokens_per_rank": r.tokens,
                "profile": r.profile,
                "simulated": true,
                "reference_speedup": [REFERENCE_SPEEDUP.0, REFERENCE_SPEEDUP.1],
                "instances": row.instances,
                "edges": row.edges,
                "schedule_table_bytes": row.table_bytes,
                "schedule_ms": row.sched_ms,
                "simulate_ms": row.sim_ms,
                "dir": r.out_dir.join(format!("ep{}", row.ep)),
                "host_check": host,
                "emulator_check": emulator,
            });
            merge(&mut object, fields);
            if let Some(a2a) = r.network.iter().find(|a| a.ep == row.ep) {
                merge(&mut object, json!({ "all_to_all": a2a.to_json() }));
            }
            if let (Some(routed), Some((name, _))) = (&row.routed, r.routed) {
                let mut inner = figures_json(&routed.figures);
                merge(
                    &mut inner,
                    json!({
                        "kernel": routed.kernel,
                        "instances": routed.instances,
                        "skipped_instances": routed.skipped,
                        "dropped_share": routed.dropped_share,
                        "schedule_ms": routed.sched_ms,
                        "simulate_ms": routed.sim_ms,
                    }),
                );
                merge(&mut object, json!({ name: inner }));
            }
            merge(&mut object, json!({ "put_bytes_per_rank": row.put_bytes_per_rank }));
            if let (Some(variant), Some((name, _))) = (&row.variant, r.variant) {
                let mut inner = figures_json(&variant.figures);
                merge(
                    &mut inner,
                    json!({
                        "kernel": variant.kernel,
                        "instances": variant.instances,
                        "put_bytes_per_rank": variant.put_bytes_per_rank,
                        "taskflow_speedup_over_main": share(row.figures.taskflow.makespan_ns, variant.figures.taskflow.makespan_ns),
                        "schedule_ms": variant.sched_ms,
                        "simulate_ms": variant.sim_ms,
                    }),
                );
                merge(&mut object, json!({ name: inner }));
            }
            for pass in &row.passes {
                let mut inner = figures_json(&pass.figures);
                merge(
                    &mut inner,
                    json!({
                        "kernel": pass.kernel,
                        "instances": pass.instances,
                        "schedule_ms": pass.sched_ms,
                        "simulate_ms": pass.sim_ms,
                    }),
                );
                merge(&mut object, json!({ pass.pass.name(): inner }));
            }
            object
        })
        .collect();
    serde_json::to_string_pretty(&objects).map_err(|e| crate::ExampleError::Json(std::sync::Arc::new(e)))
}

/// The comparison's figures under the keys scripts read (`baseline_us`, `taskflow_us`, …).
fn figures_json(f: &Figures) -> serde_json::Value {
    json!({
        "baseline_us": us(f.baseline.makespan_ns),
        "taskflow_us": us(f.taskflow.makespan_ns),
        "speedup": f.speedup,
        "bound_us": us(f.bound_ns),
        "bound_ratio": f.taskflow_over_bound,
        "baseline_bound_ratio": f.baseline_over_bound,
        "aic_util_taskflow": f.taskflow.aic_utilisation,
        "aic_util_baseline": f.baseline.aic_utilisation,
        "comm_taskflow_us": us(f.taskflow.comm_ns),
        "comm_baseline_us": us(f.baseline.comm_ns),
        "exposed_comm_taskflow_us": us(f.taskflow.exposed_comm_ns),
        "exposed_comm_baseline_us": us(f.baseline.exposed_comm_ns),
        "exposed_comm_taskflow_share": share(f.taskflow.exposed_comm_ns, f.taskflow.comm_ns),
        "exposed_comm_baseline_share": share(f.baseline.exposed_comm_ns, f.baseline.comm_ns),
    })
}

/// Adds `more`'s keys to the object `into`.
fn merge(into: &mut serde_json::Value, more: serde_json::Value) {
    if let (Some(into), serde_json::Value::Object(more)) = (into.as_object_mut(), more) {
        into.extend(more);
    }
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
    network::table(r.network, r.profile_figures, &mut line);
    line(String::new());
    if let Some((_, header)) = r.routed {
        routed_table(r, header, &mut line);
        line(String::new());
    }
    if let Some((_, header)) = r.variant {
        variant_table(r, header, &mut line);
        line(String::new());
    }
    if let Some(header) = r.training {
        training_table(r, header, &mut line);
        line(String::new());
    }
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
    if !r.emulator.names.is_empty() {
        match (&r.emulator.failure, &r.emulator.not_run) {
            (Some(e), _) => line(format!("emulator check: FAIL: {e}")),
            (None, Some(why)) => line(format!("emulator check: NOT RUN: {why}")),
            (None, None) => line(format!(
                "emulator check: PASS ({}: the generated AscendC kernels on the CPU emulation of the device API, {} \
                 output values bitwise equal to the naive reference)",
                r.emulator.descriptions.join(", "),
                r.emulator.elements
            )),
        }
    }
    out
}

fn results_table(r: &Results<'_>, line: &mut impl FnMut(String)) {
    line(format!(
        "hpmoe: {}, {} tokens per rank, cost profile {} — all latencies simulated",
        r.title, r.tokens, r.profile
    ));
    line(figures_heading(""));
    for row in r.rows {
        line(figures_line(row.ep, &row.figures, ""));
    }
    let (lo, hi) = speedup_range(r.rows.iter().map(|row| row.figures.speedup));
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

/// The column headings of a figures table, then `more`.
fn figures_heading(more: &str) -> String {
    format!(
        "{:>4} {:>9} {:>9} {:>8} {:>9} {:>8} {:>8} {:>8} {:>15} {:>15}{more}",
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
    )
}

/// One EP's figures as a table line, then `more`.
fn figures_line(ep: u32, f: &Figures, more: &str) -> String {
    format!(
        "{:>4} {:>9.1} {:>9.1} {:>7.2}x {:>9.1} {:>8.2} {:>7.0}% {:>7.0}% {:>8.1} ({:>3.0}%) {:>8.1} ({:>3.0}%){more}",
        ep,
        us(f.baseline.makespan_ns),
        us(f.taskflow.makespan_ns),
        f.speedup,
        us(f.bound_ns),
        f.taskflow_over_bound,
        100.0 * f.taskflow.aic_utilisation,
        100.0 * f.baseline.aic_utilisation,
        us(f.taskflow.exposed_comm_ns),
        100.0 * share(f.taskflow.exposed_comm_ns, f.taskflow.comm_ns),
        us(f.baseline.exposed_comm_ns),
        100.0 * share(f.baseline.exposed_comm_ns, f.baseline.comm_ns),
    )
}

fn speedup_range(speedups: impl Iterator<Item = f64>) -> (f64, f64) {
    speedups.fold((f64::MAX, 0.0f64), |(lo, hi), s| (lo.min(s), hi.max(s)))
}

/// The layer under run-time routing: the same columns, plus what the routing skipped and dropped.
fn routed_table(r: &Results<'_>, header: &[&str], line: &mut impl FnMut(String)) {
    header.iter().for_each(|h| line(h.to_string()));
    line(figures_heading(&format!(" {:>8} {:>8}", "skipped", "dropped")));
    for row in r.rows {
        if let Some(routed) = &row.routed {
            let skipped = 100.0 * routed.skipped as f64 / routed.instances.max(1) as f64;
            let more = format!(" {:>7.0}% {:>7.1}%", skipped, 100.0 * routed.dropped_share);
            line(figures_line(row.ep, &routed.figures, &more));
        }
    }
    let (lo, hi) = speedup_range(r.rows.iter().filter_map(|row| row.routed.as_ref()).map(|x| x.figures.speedup));
    line(format!("speedup {lo:.2}–{hi:.2}x (simulated); skipped: tile instances past their run-time count (they"));
    line(
        "still wait and signal); dropped: token choices past their expert's capacity (both runs drop the same).".into(),
    );
}

/// The variant: the same columns, plus its taskflow against the job's layer's and what each
/// puts on the network.
fn variant_table(r: &Results<'_>, header: &[&str], line: &mut impl FnMut(String)) {
    header.iter().for_each(|h| line(h.to_string()));
    line(figures_heading(&format!(" {:>8} {:>15}", "vs_main", "put_MB/rank")));
    for row in r.rows {
        if let Some(v) = &row.variant {
            let faster = share(row.figures.taskflow.makespan_ns, v.figures.taskflow.makespan_ns);
            let mb = |bytes: u64| bytes as f64 / 1e6;
            let puts = format!("{:.0}->{:.0}", mb(row.put_bytes_per_rank), mb(v.put_bytes_per_rank));
            line(figures_line(row.ep, &v.figures, &format!(" {faster:>7.2}x {puts:>15}")));
        }
    }
    let (lo, hi) = speedup_range(r.rows.iter().filter_map(|row| row.variant.as_ref()).map(|x| x.figures.speedup));
    line(format!(
        "speedup {lo:.2}–{hi:.2}x (simulated; its baseline runs the same INT8 tiles); vs_main: the first table's"
    ));
    line(
        "taskflow time over this one's; put_MB/rank: bytes each rank puts (dispatch and combine), first table -> this."
            .into(),
    );
}

/// The backward and the training step beside the forward, per EP: the same columns, each pass
/// against its own kernel-by-kernel baseline and bound.
fn training_table(r: &Results<'_>, header: &[&str], line: &mut impl FnMut(String)) {
    header.iter().for_each(|h| line(h.to_string()));
    line(format!("{:<14}{}", "pass", figures_heading("")));
    for row in r.rows.iter().filter(|row| !row.passes.is_empty()) {
        line(format!("{:<14}{}", "forward", figures_line(row.ep, &row.figures, "")));
        for pass in &row.passes {
            line(format!("{:<14}{}", pass.pass.name(), figures_line(row.ep, &pass.figures, "")));
        }
    }
    for pass in [Pass::Backward, Pass::TrainingStep] {
        let figures = r.rows.iter().flat_map(|row| &row.passes).filter(|p| p.pass == pass).map(|p| &p.figures);
        let (speedups, ratios): (Vec<f64>, Vec<f64>) = figures.map(|f| (f.speedup, f.taskflow_over_bound)).unzip();
        if speedups.is_empty() {
            continue;
        }
        let (lo, hi) = speedup_range(speedups.into_iter());
        let (blo, bhi) = speedup_range(ratios.into_iter());
        line(format!("{}: speedup {lo:.2}–{hi:.2}x, {blo:.2}–{bhi:.2}x its bound (simulated)", pass.name()));
    }
    line(
        "Each pass against its own kernel-by-kernel baseline (the backward's kernels in a framework's order: the"
            .into(),
    );
    line(
        "all-to-all, the grouped matmuls, the SwiGLU gradient, the grouped matmuls, the all-to-all back and the".into(),
    );
    line("top-k sum; the training step: the forward's kernels, then the backward's) and its own lower bound.".into());
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
        "wrote {}/ep{{{}}}/: AscendC kernel ({k}.cpp, {k}_schedule.h), its launcher ({k}_launch.cpp), schedule blobs",
        r.out_dir.display(),
        eps.join(",")
    ));
    line(format!(
        "({k}_schedule.bin, {k}_flags.bin{}), runtime headers in include/; Chrome trace and SVG timeline (rank 0",
        if r.json_tables { format!(", {k}_schedule.json") } else { String::new() }
    ));
    line(format!(
        "above its baseline) of the simulated EP {TRACE_EP} taskflow run: ep{TRACE_EP}/{k}_trace.json, ep{TRACE_EP}/{k}_timeline.svg (EP {TRACE_EP} only; open the"
    ));
    line("trace in ui.perfetto.dev).".into());
    let routed: Vec<(u32, &str)> =
        r.rows.iter().filter_map(|row| row.routed.as_ref().map(|x| (row.ep, x.kernel.as_str()))).collect();
    if let (Some((_, k)), Some((name, _))) = (routed.first(), r.routed) {
        let eps: Vec<String> = routed.iter().map(|(ep, _)| ep.to_string()).collect();
        line(format!(
            "The {name} layer's kernel is beside it in ep{{{}}}/: {k}.cpp, {k}_schedule.h, {k}_schedule.bin, {k}_flags.bin, {k}_launch.cpp.",
            eps.join(",")
        ));
    }
    let variant: Vec<&str> = r.rows.iter().filter_map(|row| row.variant.as_ref().map(|x| x.kernel.as_str())).collect();
    if let (Some(k), Some((name, _))) = (variant.first(), r.variant) {
        line(format!(
            "The {name} layer's kernel is beside it in every ep folder: {k}.cpp, {k}_schedule.h, {k}_schedule.bin, {k}_flags.bin, {k}_launch.cpp."
        ));
    }
    let with_passes: Vec<&Row> = r.rows.iter().filter(|row| !row.passes.is_empty()).collect();
    let kernels = with_passes.first().map(|row| (row.passes.first(), row.passes.last()));
    if let Some((Some(b), Some(t))) = kernels {
        let eps: Vec<String> = with_passes.iter().map(|row| row.ep.to_string()).collect();
        let (b, t) = (&b.kernel, &t.kernel);
        line(format!(
            "The backward's and the training step's kernels are beside it in ep{{{}}}/ ({b}.cpp, {t}.cpp, with their",
            eps.join(",")
        ));
        line(format!(
            "headers, launchers and blobs); the training step's trace and timeline: ep{TRACE_EP}/{t}_trace.json, ep{TRACE_EP}/{t}_timeline.svg."
        ));
    }
    line(
        "The kernels are sources: not compiled with a CANN toolkit nor run on an NPU here (the tiny layers' kernels run \
         on the CPU emulator below)."
            .into(),
    );
    for note in r.notes {
        line(note.to_string());
    }
}
