//! The main job: schedule the DeepSeek-V3 routed-expert MoE-FFN layer (H 7168, I 2048,
//! 256 experts, top-8, 4096 tokens per rank) at EP 8, 16, 32 and 64, print what the
//! schedule looks like, simulate it against the kernel-by-kernel baseline, and write every
//! schedule table (binary, C header, JSON).
//!
//! ```sh
//! cargo run --release -p hpmoe-examples --example moe_ffn [-- --out DIR] [--tokens N] [--json-tables]
//!                                                          [--profile ascend_a3_die|ascend910b|FILE.toml|FILE.json]
//! ```
//!
//! Each EP gets `moe_ffn_schedule.bin` and `moe_ffn_schedule.h`; `--json-tables` adds the
//! JSON form too (large: about 350 bytes per tile instance).
//!
//! Times come from the cost-model simulator (`hpmoe_core::sim`) under the chosen cost
//! profile (default `ascend_a3_die`; its figures are sourced in hardware.md and several are
//! guesses, see `hpmoe_core::cost::GUESSES` and the `sensitivity` example). `bound_us` is
//! a true lower bound under the same costs (longest path, each core kind's work spread
//! over its cores, the busiest link's bytes at link bandwidth); `sim/bnd` and `base/bnd`
//! say how far each run is from it. The baseline runs the same tiles as one whole-device
//! kernel per step (dispatch, GMM1, SwiGLU, GMM2, combine, weighted sum).

use hpmoe_core::cost::{CostProfile, TaskflowCost};
use hpmoe_core::moe::MoeShape;
use hpmoe_core::sim;
use std::path::{Path, PathBuf};
use std::time::Instant;

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

/// A preset name or a TOML/JSON file (which may override a preset with `base = "..."`).
fn load_profile(spec: &str) -> Result<CostProfile, String> {
    if hpmoe_core::cost::PRESETS.contains(&spec) {
        CostProfile::preset(spec).map_err(|e| e.to_string())
    } else {
        CostProfile::load(Path::new(spec)).map_err(|e| e.to_string())
    }
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |flag: &str| args.iter().position(|a| a == flag).and_then(|i| args.get(i + 1)).cloned();
    let options = ["--out", "--tokens", "--json-tables", "--profile"];
    if let Some(bad) = args.iter().find(|a| a.starts_with("--") && !options.contains(&a.as_str())) {
        return Err(format!(
            "unknown option {bad}; options: --out DIR, --tokens N, --json-tables, --profile NAME|FILE"
        ));
    }
    let workspace = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("examples/ sits in the workspace");
    let out_dir =
        value("--out").map(PathBuf::from).unwrap_or_else(|| workspace.join("target").join("hpmoe").join("moe_ffn"));
    let tokens: u64 = match value("--tokens") {
        Some(t) => t.parse().map_err(|_| format!("--tokens takes a number, got {t}"))?,
        None => 4096,
    };
    let json_tables = args.iter().any(|a| a == "--json-tables");
    let profile = load_profile(&value("--profile").unwrap_or_else(|| "ascend_a3_die".into()))?;
    println!(
        "hpmoe: DeepSeek-V3 MoE-FFN layer, {tokens} tokens per rank, cost profile {}, schedules written to {}",
        profile.name,
        out_dir.display()
    );
    println!(
        "{:>4} {:>9} {:>10} {:>17} {:>9} {:>10} {:>9} | {:>9} {:>9} {:>7} {:>9} {:>8} {:>7} {:>8} {:>8} {:>8} {:>7}",
        "EP",
        "instances",
        "edges",
        "cross->waits",
        "counters",
        "table_KiB",
        "sched_ms",
        "sim_us",
        "bound_us",
        "sim/bnd",
        "base_us",
        "base/bnd",
        "speedup",
        "AIC_sim",
        "AIC_base",
        "exposed",
        "sim_ms"
    );
    for ep in [8u32, 16, 32, 64] {
        let shape = MoeShape::deepseek_v3(ep, tokens);
        let tf = shape.taskflow()?;
        let cost = TaskflowCost::new(&tf, profile.clone());
        let t = Instant::now();
        let c = hpmoe_core::compile(&tf, &cost).map_err(|d| d.render(&tf.sources))?;
        let sched_ms = t.elapsed().as_secs_f64() * 1e3;
        let t = Instant::now();
        let cmp = sim::compare(&c, &tf.profile, &cost).map_err(|e| e.to_string())?;
        let sim_ms = t.elapsed().as_secs_f64() * 1e3;
        let exp = &c.expanded;
        let dir = out_dir.join(format!("ep{ep}"));
        std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let write = |name: &str, bytes: &[u8]| {
            std::fs::write(dir.join(name), bytes).map_err(|e| format!("cannot write {}: {e}", dir.join(name).display()))
        };
        write("moe_ffn_schedule.bin", &c.table.to_bytes())?;
        write("moe_ffn_schedule.h", c.table.c_header("MOE_FFN").as_bytes())?;
        if json_tables {
            write("moe_ffn_schedule.json", c.table.to_json().as_bytes())?;
        }
        let (tf_sum, base_sum) = (cmp.taskflow.summary(), cmp.baseline.result.summary());
        let us = |ns: u64| ns as f64 / 1e3;
        println!(
            "{:>4} {:>9} {:>10} {:>17} {:>9} {:>10.0} {:>9.0} | {:>9.1} {:>9.1} {:>7.2} {:>9.1} {:>8.2} {:>6.2}x {:>7.0}% {:>7.0}% {:>7.0}% {:>7.0}",
            ep,
            exp.nodes(),
            exp.dag.edges(),
            format!("{}->{}", c.sync.cross_edges_before, c.sync.cross_edges_after),
            c.sync.counters_per_rank.iter().max().copied().unwrap_or(0),
            c.table.total_bytes() as f64 / 1024.0,
            sched_ms,
            us(tf_sum.makespan_ns),
            us(cmp.bound.ns()),
            cmp.taskflow_over_bound(),
            us(base_sum.makespan_ns),
            cmp.baseline_over_bound(),
            cmp.speedup(),
            100.0 * tf_sum.aic_utilisation,
            100.0 * base_sum.aic_utilisation,
            100.0 * tf_sum.exposed_comm_ns as f64 / tf_sum.comm_ns.max(1) as f64,
            sim_ms,
        );
    }
    println!("sim_us: simulated taskflow makespan (all ranks, link contention); base_us: kernel-by-kernel baseline;");
    println!("bound_us: no run under the same costs beats it; speedup = base_us / sim_us; AIC_*: AIC utilisation;");
    println!(
        "exposed: share of the taskflow's communication time (puts in flight) with no tile computing on the rank."
    );
    println!("Figures marked [U] in hardware.md are guesses: see `--example sensitivity` before quoting a speedup.");
    Ok(())
}
