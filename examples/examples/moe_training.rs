//! The DeepSeek-V3 MoE-FFN layer's forward, backward and training step (forward and backward
//! as one taskflow), each scheduled and simulated against its kernel-by-kernel baseline and its
//! lower bound at EP 8, 16, 32 and 64 (issue 12 item 5), then the backward and the training
//! step of the tiny layers run on the host executor against the plain-loop gradient reference.
//! The main job (`moe_ffn`) prints the same backward and training-step figures at every EP of
//! its sweep (and runs these host checks, and the emulator's); this example is the quick way to
//! look at one EP (`--ep 8` takes seconds) or at the three passes side by side.
//!
//! ```sh
//! cargo run --release -p hpmoe-examples --example moe_training [-- --ep N] [--tokens N] [--json]
//!                                                               [--profile ascend_a3_die|ascend910b|FILE]
//!                                                               [--natural] [--wgrad-groups N]
//! ```
//!
//! `--natural` measures the layer under natural routing instead
//! (`MoeShape::deepseek_v3_natural`: capacity padding, guarded tiles), as the main job measures
//! its natural forward: each pass scheduled on the expected activity of sampled routings and
//! simulated under routing seed 42, with the share of tile instances that skip their work —
//! at EP 8, 16 and 32 by default (the natural backward sums each expert's weight gradients in
//! a chain of tiles per column block, one slot sum per group of source ranks, the first written
//! with `matmul_tn_slots`, the others added with `matmul_tn_slots_accumulate`; EP 64 only with
//! `--ep 64`).
//!
//! Every latency is simulated by the cost model (`hpmoe_host::sim`) under the chosen profile,
//! whose constants are sourced or guessed as the main job's are (`hpmoe_core::cost::GUESSES`):
//! no NPU is involved. The baseline runs the same tiles as one whole-device kernel per family
//! in dependency order — for the backward: the output gradient scaled and put to the experts
//! (an all-to-all), the grouped data- and weight-gradient matmuls, the SwiGLU gradient, the
//! GMM1 gradients, the all-to-all back and the top-k sum, with the routing-weight gradient
//! where its inputs allow — and the training step as the forward's kernels followed by the
//! backward's. The bound is the simulator's lower bound (longest path, each core kind's work
//! spread over its cores, the busiest rank's bytes at its link, cross-server and HBM
//! bandwidths). Exposed communication: time on the busiest rank with a put in flight and no
//! tile computing.
//!
//! The DeepSeek-V3 backward sums each expert's weight gradient in one tile per column block
//! (`MoeShape::with_whole_expert_wgrad`): per-block accumulation re-writes the F32 gradients
//! once per row block and is HBM-bound at these sizes. `--wgrad-groups N` sums each expert's
//! rows in `N` groups instead (`MoeShape::with_wgrad_groups`; groups of whole source ranks'
//! rows go in the order the rows arrive, `MoeShape::wgrad_group`), to measure the trade; with
//! `--natural` it sets the natural layer's groups of source ranks
//! (`MoeShape::wgrad_source_groups`, default one per 16-die server). The host check runs `tiny(2)` and
//! `tiny(4)`, whose weight gradients are chained over four row groups (with `--natural`,
//! `tiny_natural(2)` and `tiny_natural(4)`).

use hpmoe_core::cost::TaskflowCost;
use hpmoe_examples::cli::Options;
use hpmoe_examples::report::{PLAN_SAMPLES, ROUTING_SEED, RoutedLayer};
use hpmoe_examples::{ExampleError, moe_backward_host_check};
use hpmoe_host::moe::{MoeShape, Pass};
use hpmoe_host::sim;
use std::process::ExitCode;
use std::time::Instant;

const USAGE: &str = "--ep N (one EP instead of 8, 16, 32, 64; with --natural, of 8, 16, 32), --tokens N (default 4096), --json, --profile NAME|FILE, --natural, \
     --wgrad-groups N (default 1; with --natural, the shape's: a group of sources per 16-die server)";

/// One pass at one EP.
struct Row {
    ep: u32,
    pass: Pass,
    instances: usize,
    baseline: sim::Summary,
    taskflow: sim::Summary,
    bound_ns: u64,
    binding: &'static str,
    /// Under natural routing: the tile instances that skip their work in the simulated run.
    skipped: Option<usize>,
}

impl Row {
    fn speedup(&self) -> f64 {
        self.baseline.makespan_ns as f64 / self.taskflow.makespan_ns.max(1) as f64
    }

    fn over_bound(&self) -> f64 {
        self.taskflow.makespan_ns as f64 / self.bound_ns.max(1) as f64
    }

    fn json(&self) -> serde_json::Value {
        let us = |ns: u64| ns as f64 / 1e3;
        serde_json::json!({
            "instances": self.instances,
            "baseline_us": us(self.baseline.makespan_ns),
            "taskflow_us": us(self.taskflow.makespan_ns),
            "speedup": self.speedup(),
            "bound_us": us(self.bound_ns),
            "bound_ratio": self.over_bound(),
            "bound_binding": self.binding,
            "aic_utilisation": self.taskflow.aic_utilisation,
            "baseline_aic_utilisation": self.baseline.aic_utilisation,
            "exposed_comm_us": us(self.taskflow.exposed_comm_ns),
            "baseline_exposed_comm_us": us(self.baseline.exposed_comm_ns),
            "skipped_instances": self.skipped,
        })
    }
}

/// The DeepSeek-V3 layer at `ep`, each expert's weight gradient summed in `groups` groups.
fn shape(ep: u32, tokens: u64, groups: u64) -> MoeShape {
    MoeShape::deepseek_v3(ep, tokens).with_wgrad_groups(groups)
}

fn measure(
    ep: u32,
    tokens: u64,
    pass: Pass,
    profile: &hpmoe_core::cost::CostProfile,
    natural: bool,
    groups: Option<u64>,
) -> Result<Row, ExampleError> {
    // Natural routing: planned on the expected activity of sampled routings, run under one.
    let (tf, plan, run, skipped) = if natural {
        let shape = MoeShape::deepseek_v3_natural(ep, tokens);
        let shape = match groups {
            Some(g) => shape.with_wgrad_groups(g),
            None => shape,
        };
        let layer = RoutedLayer::natural_pass(&shape, pass, ROUTING_SEED, PLAN_SAMPLES)?;
        let cost = TaskflowCost::new(&layer.taskflow, profile.clone());
        let skipped = layer.run.skipped();
        let (plan, run) = (cost.clone().with_expected_activity(layer.plan), cost.with_activity(layer.run));
        (layer.taskflow, plan, run, Some(skipped))
    } else {
        let tf = shape(ep, tokens, groups.unwrap_or(1)).pass_taskflow(pass).map_err(ExampleError::Shape)?;
        let cost = TaskflowCost::new(&tf, profile.clone());
        (tf, cost.clone(), cost, None)
    };
    let compiled = hpmoe_core::compile_with(&tf, &plan, &hpmoe_core::CompileOptions::default())
        .map_err(|d| ExampleError::plan(&tf, d))?;
    let cmp = sim::compare(&compiled, &tf.profile, &run)
        .map_err(|error| ExampleError::Simulate { taskflow: tf.name.clone(), error })?;
    Ok(Row {
        ep,
        pass,
        instances: compiled.expanded.nodes(),
        baseline: cmp.baseline.result.summary(),
        taskflow: cmp.taskflow.summary(),
        bound_ns: cmp.bound.ns(),
        binding: cmp.bound.binding(),
        skipped,
    })
}

fn run() -> Result<bool, ExampleError> {
    let options =
        Options::from_env(&["--ep", "--tokens", "--json", "--profile", "--natural", "--wgrad-groups"], USAGE)?;
    let natural = options.flag("--natural");
    // Balanced: one group (the whole expert) unless asked; natural: the shape's own default
    // (`MoeShape::wgrad_source_groups`) unless asked.
    let groups = options.value("--wgrad-groups").map(|_| options.number("--wgrad-groups", 1)).transpose()?;
    let tokens = options.number("--tokens", 4096)?;
    let profile = options.profile()?;
    let eps: Vec<u32> = match options.value("--ep") {
        Some(_) => vec![options.number_u32("--ep", 8)?],
        // The natural layer's planning (8 sampled routings per pass) grows with the EP: the
        // sweep stops at EP 32 to stay within minutes.
        None if natural => vec![8, 16, 32],
        None => vec![8, 16, 32, 64],
    };
    let started = Instant::now();
    let mut rows = Vec::new();
    for &ep in &eps {
        for pass in Pass::ALL {
            eprint!("[ep {ep}] {}…", pass.name());
            rows.push(measure(ep, tokens, pass, &profile, natural, groups)?);
            eprintln!(" done ({:.1} s)", started.elapsed().as_secs_f64());
        }
    }
    let mut checks = Vec::new();
    for ranks in [2, 4] {
        for pass in [Pass::Backward, Pass::TrainingStep] {
            let (name, tiny) = if natural {
                (format!("tiny_natural({ranks})"), MoeShape::tiny_natural(ranks))
            } else {
                (format!("tiny({ranks})"), MoeShape::tiny(ranks))
            };
            eprint!("[host] {name} {}…", pass.name());
            // The main job's check: every gradient (and the training step's `out`) bitwise.
            let check = moe_backward_host_check(&tiny, pass, &profile, 7)?;
            let ok = check.passed();
            eprintln!(" {}", if ok { "PASS" } else { "FAIL" });
            checks.push((format!("{name} {}", pass.name()), ok));
        }
    }
    if options.flag("--json") {
        let per_ep: Vec<serde_json::Value> = eps
            .iter()
            .map(|&ep| {
                let mut object = serde_json::Map::new();
                object.insert("ep".into(), ep.into());
                for row in rows.iter().filter(|r| r.ep == ep) {
                    object.insert(row.pass.name().into(), row.json());
                }
                serde_json::Value::Object(object)
            })
            .collect();
        let host: serde_json::Map<String, serde_json::Value> =
            checks.iter().map(|(name, ok)| (name.clone(), (*ok).into())).collect();
        let routing = if natural { "natural" } else { "balanced" };
        let doc = serde_json::json!({ "tokens_per_rank": tokens, "profile": profile.name, "routing": routing, "eps": per_ep, "host_check": host });
        println!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
    } else {
        print_table(&rows, tokens, &profile.name, natural);
        for (name, ok) in &checks {
            println!(
                "host check {name}: {} (gradients bitwise equal to moe_backward_reference, and the training step's out to moe_reference)",
                verdict(*ok)
            );
        }
    }
    Ok(checks.iter().all(|(_, ok)| *ok))
}

fn verdict(ok: bool) -> &'static str {
    if ok { "PASS" } else { "FAIL" }
}

fn print_table(rows: &[Row], tokens: u64, profile: &str, natural: bool) {
    let routing = if natural {
        format!(
            "natural routing (deepseek_v3_natural, routing seed {ROUTING_SEED}, planned on {PLAN_SAMPLES} other routings)"
        )
    } else {
        "balanced routing".to_string()
    };
    println!("DeepSeek-V3 MoE-FFN layer, {tokens} tokens per rank, {routing}, cost profile {profile} (simulated)");
    println!(
        "{:>3} {:>14} {:>9} {:>9} {:>8} {:>9} {:>8} {:>14} {:>8} {:>8} {:>16} {:>8}",
        "EP",
        "pass",
        "base_us",
        "sim_us",
        "speedup",
        "bound_us",
        "sim/bnd",
        "binding",
        "AIC_sim",
        "AIC_base",
        "exposed_us(s/b)",
        "skipped"
    );
    for r in rows {
        println!(
            "{:>3} {:>14} {:>9.0} {:>9.0} {:>7.2}x {:>9.0} {:>8.2} {:>14} {:>7.0}% {:>7.0}% {:>7.0}/{:<8.0} {:>8}",
            r.ep,
            r.pass.name(),
            r.baseline.makespan_ns as f64 / 1e3,
            r.taskflow.makespan_ns as f64 / 1e3,
            r.speedup(),
            r.bound_ns as f64 / 1e3,
            r.over_bound(),
            r.binding,
            r.taskflow.aic_utilisation * 100.0,
            r.baseline.aic_utilisation * 100.0,
            r.taskflow.exposed_comm_ns as f64 / 1e3,
            r.baseline.exposed_comm_ns as f64 / 1e3,
            r.skipped.map_or("-".to_string(), |s| format!("{:.0}%", 100.0 * s as f64 / r.instances.max(1) as f64)),
        );
    }
}

fn main() -> ExitCode {
    match run() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => {
            eprintln!("a host check failed");
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
