//! Honesty checks for the simulator's headline, the taskflow/baseline speedup:
//!
//! 1. where the time goes at EP 8 (baseline kernel by kernel, the bound's terms);
//! 2. how the speedup moves as each guessed constant of the cost profile sweeps its range
//!    (`hpmoe_core::cost::GUESSES`), one at a time, then all at once at the ends that favour
//!    the baseline and at the ends that favour the taskflow;
//! 3. the simulated effective dispatch and combine bandwidth of isolated all-to-alls
//!    (4096 tokens/rank, H 7168, top-8, INT8 dispatch, BF16 combine) at EP 8–128, beside
//!    the measured A3 figures from hardware.md, which the A3 profile's injection and
//!    cross-server bandwidths are fitted to (`hpmoe_core::cost::FITTED`); then how that
//!    bandwidth moves as each network parameter sweeps its range.
//!
//! The network parameters (injection, ejection, cross-server bandwidth and latency, put
//! setup) and the HBM bandwidth are among the swept constants of part 2.
//!
//! ```sh
//! cargo run --release -p hpmoe-examples --example sensitivity [-- --profile NAME|FILE] [--ep N]
//! ```

use hpmoe_core::cost::{CostProfile, GUESSES, MEASURED_A3_ALL_TO_ALL, TaskflowCost};
use hpmoe_core::model::{DType, Taskflow};
use hpmoe_examples::ExampleError;
use hpmoe_examples::cli::Options;
use hpmoe_host::moe::MoeShape;
use hpmoe_host::sim;

const TOKENS: u64 = 4096;

/// The network parameters whose effect on the all-to-all bandwidth part 3 sweeps.
const NETWORK: [&str; 5] =
    ["link_gb_per_s", "ejection_gb_per_s", "cross_server_gb_per_s", "cross_server_latency_ns", "put_setup_ns"];

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), ExampleError> {
    let opts = Options::from_env(&["--profile", "--ep"], "--profile NAME|FILE, --ep N")?;
    let base = opts.profile()?;
    let ep = opts.number_u32("--ep", 8)?;
    let shape = MoeShape::deepseek_v3(ep, TOKENS);
    let tf = shape.taskflow().map_err(ExampleError::Shape)?;
    let layer = TaskflowCost::new(&tf, base.clone());

    println!("== DeepSeek-V3 MoE-FFN layer, EP {ep}, {TOKENS} tokens/rank, profile {} ==", base.name);
    let default = evaluate(&tf, &layer)?;
    breakdown(&tf, &default);

    println!();
    println!("== Sensitivity: taskflow/baseline speedup as each guessed constant sweeps its range ==");
    println!(
        "{:<24} {:<8} {:>10} {:>12} {:>12} {:>8} {:>8} {:>8}",
        "constant", "source", "value", "taskflow_us", "baseline_us", "speedup", "tf/bnd", "base/bnd"
    );
    let row = |name: &str, marker: &str, value: String, o: &Outcome| {
        println!(
            "{:<24} {:<8} {:>10} {:>12.1} {:>12.1} {:>7.2}x {:>8.2} {:>8.2}",
            name, marker, value, o.taskflow_us, o.baseline_us, o.speedup, o.tf_over_bound, o.base_over_bound
        );
    };
    row("(all at default)", "", String::new(), &default.outcome);
    let (mut worst, mut best) = (base.clone(), base.clone());
    let (mut lo_speedup, mut hi_speedup) = (f64::MAX, f64::MIN);
    for g in GUESSES {
        let current = base.field(g.field).ok_or_else(|| ExampleError::UnknownProfileField { field: g.field.into() })?;
        let mut ends = Vec::new();
        for v in sweep(g.low, current, g.high) {
            let p = base.with_field(g.field, v)?;
            let o = evaluate(&tf, &layer.with_profile(p))?.outcome;
            let label = if v == current { format!("{v} (def)") } else { format!("{v}") };
            row(g.field, g.marker, label, &o);
            lo_speedup = lo_speedup.min(o.speedup);
            hi_speedup = hi_speedup.max(o.speedup);
            ends.push((v, o.speedup));
        }
        // The end that favours the baseline goes into `worst`, the other into `best`.
        let (low, high) = (ends[0], ends[ends.len() - 1]);
        let (w, b) = if low.1 <= high.1 { (low.0, high.0) } else { (high.0, low.0) };
        worst = worst.with_field(g.field, w)?;
        best = best.with_field(g.field, b)?;
        println!();
    }
    let o_worst = evaluate(&tf, &layer.with_profile(worst))?.outcome;
    let o_best = evaluate(&tf, &layer.with_profile(best))?.outcome;
    row("ALL at baseline's ends", "", String::new(), &o_worst);
    row("ALL at taskflow's ends", "", String::new(), &o_best);
    println!(
        "one constant at a time the speedup stays within {lo_speedup:.2}x..{hi_speedup:.2}x; all at once {:.2}x..{:.2}x",
        o_worst.speedup, o_best.speedup
    );

    println!();
    println!("== Effective all-to-all bandwidth, {TOKENS} tokens/rank, H 7168, top-8 (INT8 dispatch, BF16 combine) ==");
    println!(
        "bytes a rank sends (tokens x top-8 rows, its own share included) / time until the last has landed, as the baseline's all-to-all kernels run; profile {}",
        base.name
    );
    println!(
        "{:>4} | {:>9} {:>9} {:>9} | {:>9} {:>9} {:>9}",
        "EP", "disp_sim", "disp_meas", "sim/meas", "comb_sim", "comb_meas", "sim/meas"
    );
    for (ep, measured_dispatch, measured_combine) in MEASURED_A3_ALL_TO_ALL {
        let dispatch = all_to_all_gb_per_s(ep, DType::I8, &base)?;
        let combine = all_to_all_gb_per_s(ep, DType::Bf16, &base)?;
        println!(
            "{:>4} | {:>9.1} {:>9.1} {:>9.2} | {:>9.1} {:>9.1} {:>9.2}",
            ep,
            dispatch,
            measured_dispatch,
            dispatch / measured_dispatch,
            combine,
            measured_combine,
            combine / measured_combine
        );
    }
    println!(
        "injection {} GB/s and cross-server {} GB/s per die (fitted), {} dies per server; the model moves INT8 and BF16",
        base.link_gb_per_s,
        base.cross_server_gb_per_s,
        base.dies_per_server()
    );
    println!("rows at the same rate, so it cannot follow the measured gap between dispatch and combine at EP 64-128");
    println!();
    println!("== Effective all-to-all bandwidth (BF16) as each network parameter sweeps its range, EP 16 and 64 ==");
    println!("{:<24} {:>10} | {:>9} {:>9}", "parameter", "value", "EP16_GBps", "EP64_GBps");
    for field in NETWORK {
        let unknown = || ExampleError::UnknownProfileField { field: field.into() };
        let g = GUESSES.iter().find(|g| g.field == field).ok_or_else(unknown)?;
        let current = base.field(field).ok_or_else(unknown)?;
        for v in sweep(g.low, current, g.high) {
            let p = base.with_field(field, v)?;
            let label = if v == current { format!("{v} (def)") } else { format!("{v}") };
            let at = |ep| all_to_all_gb_per_s(ep, DType::Bf16, &p);
            println!("{:<24} {:>10} | {:>9.1} {:>9.1}", field, label, at(16)?, at(64)?);
        }
    }
    Ok(())
}

/// The values a constant is swept over: its range's ends and its default, each once (a
/// default may sit at an end, as a sourced figure swept only downwards does).
fn sweep(low: f64, current: f64, high: f64) -> Vec<f64> {
    let mut values = vec![low, current, high];
    values.dedup();
    values
}

/// Headline figures of one evaluation.
struct Outcome {
    taskflow_us: f64,
    baseline_us: f64,
    speedup: f64,
    tf_over_bound: f64,
    base_over_bound: f64,
}

struct Evaluation {
    outcome: Outcome,
    cmp: sim::Comparison,
}

/// Schedules `tf` under `cost` (the scheduler's priorities follow the swept profile too),
/// simulates it and its baseline.
fn evaluate(tf: &Taskflow, cost: &TaskflowCost) -> Result<Evaluation, ExampleError> {
    let c = hpmoe_core::compile(tf, cost).map_err(|d| ExampleError::plan(tf, d))?;
    let cmp = sim::compare(&c, &tf.profile, cost)
        .map_err(|error| ExampleError::Simulate { taskflow: tf.name.clone(), error })?;
    let outcome = Outcome {
        taskflow_us: cmp.taskflow.makespan_ns as f64 / 1e3,
        baseline_us: cmp.baseline.result.makespan_ns as f64 / 1e3,
        speedup: cmp.speedup(),
        tf_over_bound: cmp.taskflow_over_bound(),
        base_over_bound: cmp.baseline_over_bound(),
    };
    Ok(Evaluation { outcome, cmp })
}

/// Prints the baseline's kernels, the bound's terms and the taskflow's figures.
fn breakdown(tf: &Taskflow, e: &Evaluation) {
    let us = |ns: u64| ns as f64 / 1e3;
    let cmp = &e.cmp;
    println!("kernel-by-kernel baseline:");
    println!(
        "  {:<13} {:>4} {:>10} {:>6} {:>10} {:>10} {:>10}",
        "kernel", "core", "tiles/rank", "waves", "launch_us", "hostsync_us", "run_us"
    );
    for k in &cmp.baseline.kernels {
        println!(
            "  {:<13} {:>4} {:>10} {:>6} {:>10.1} {:>10.1} {:>10.1}",
            tf.families[k.family].name,
            k.core.name(),
            k.instances_per_rank,
            k.waves,
            us(k.launch_ns),
            us(k.host_sync_ns),
            us(k.end_ns - k.start_ns)
        );
    }
    let (t, b) = (cmp.taskflow.summary(), cmp.baseline.result.summary());
    let bound = &cmp.bound;
    println!(
        "bound {:.1} us = max(critical path {:.1}, AIC work {:.1}, AIV work {:.1}, injection {:.1}, ejection {:.1}, \
         cross-server {:.1}, HBM {:.1}) -> {}",
        us(bound.ns()),
        us(bound.critical_path_ns),
        us(bound.aic_work_per_core_ns),
        us(bound.aiv_work_per_core_ns),
        us(bound.link_ns),
        us(bound.ejection_ns),
        us(bound.cross_server_ns),
        us(bound.hbm_ns),
        bound.binding()
    );
    for (name, s) in [("taskflow", t), ("baseline", b)] {
        println!(
            "{name:<9} {:>9.1} us ({:.2}x bound)  AIC util {:>3.0}%  AIV util {:>3.0}%  link busy {:>7.1} us  comm {:>7.1} us, exposed {:>7.1} us ({:.0}%)",
            us(s.makespan_ns),
            s.makespan_ns as f64 / bound.ns().max(1) as f64,
            100.0 * s.aic_utilisation,
            100.0 * s.aiv_utilisation,
            us(s.link_busy_ns),
            us(s.comm_ns),
            us(s.exposed_comm_ns),
            100.0 * s.exposed_comm_ns as f64 / s.comm_ns.max(1) as f64
        );
    }
    print!("taskflow family spans, first start..last end (us):");
    for (f, family) in tf.families.iter().enumerate() {
        if let Some(s) = cmp.taskflow.family_span(f) {
            print!(" {} {:.0}..{:.0};", family.name, us(s.start_ns), us(s.delivered_ns));
        }
    }
    println!();
    println!("speedup (baseline / taskflow): {:.2}x", cmp.speedup());
}

/// An all-to-all alone, laid out as the MoE layer's dispatch (`dtype` rows of H 7168 from
/// each rank to every expert's rank) or, with BF16, as its combine (the same rows back),
/// run as the baseline runs its all-to-all kernels (`hpmoe_host::sim::all_to_all_bandwidth`).
/// Returns GB/s per rank.
fn all_to_all_gb_per_s(ep: u32, dtype: DType, profile: &CostProfile) -> Result<f64, ExampleError> {
    let a2a = sim::all_to_all_bandwidth(&MoeShape::deepseek_v3(ep, TOKENS), dtype, profile)
        .map_err(|error| ExampleError::Simulate { taskflow: "all_to_all".into(), error })?;
    Ok(a2a.gb_per_s())
}
