//! The main job: schedule the DeepSeek-V3 routed-expert MoE-FFN layer (H 7168, I 2048,
//! 256 experts, top-8, 4096 tokens per rank) at EP 8, 16, 32 and 64, print what the
//! schedule looks like, and write every schedule table (binary, C header, JSON).
//!
//! ```sh
//! cargo run --release -p hpmoe-examples --example moe_ffn [-- --out DIR] [--tokens N] [--json-tables]
//! ```
//!
//! Each EP gets `moe_ffn_schedule.bin` and `moe_ffn_schedule.h`; `--json-tables` adds the
//! JSON form too (large: about 350 bytes per tile instance).
//!
//! Times in the table are the list scheduler's own estimates under `SimpleCost`, whose
//! rates come from hardware.md (several are guesses, marked [U] in its docs); they show
//! the schedule's shape, not a measured latency. The bound is a true lower bound under
//! the same costs (longest path, and each core kind's work spread over its cores).

use hpmoe_core::model::CoreKind;
use hpmoe_core::moe::MoeShape;
use hpmoe_core::schedule::{SimpleCost, lower_bound, node_costs};
use std::path::PathBuf;
use std::time::Instant;

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |flag: &str| args.iter().position(|a| a == flag).and_then(|i| args.get(i + 1)).cloned();
    if let Some(bad) =
        args.iter().find(|a| a.starts_with("--") && !["--out", "--tokens", "--json-tables"].contains(&a.as_str()))
    {
        return Err(format!("unknown option {bad}; options: --out DIR, --tokens N, --json-tables"));
    }
    let workspace = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("examples/ sits in the workspace");
    let out_dir =
        value("--out").map(PathBuf::from).unwrap_or_else(|| workspace.join("target").join("hpmoe").join("moe_ffn"));
    let tokens: u64 = match value("--tokens") {
        Some(t) => t.parse().map_err(|_| format!("--tokens takes a number, got {t}"))?,
        None => 4096,
    };
    let json_tables = args.iter().any(|a| a == "--json-tables");
    let cost = SimpleCost::default();
    println!("hpmoe: DeepSeek-V3 MoE-FFN layer, {tokens} tokens per rank, schedules written to {}", out_dir.display());
    println!(
        "{:>4} {:>9} {:>10} {:>13} {:>9} {:>11} {:>10} {:>9} {:>8} {:>9} {:>10}",
        "EP",
        "instances",
        "edges",
        "cross->waits",
        "counters",
        "table_KiB",
        "est_us",
        "bound_us",
        "est/bnd",
        "AIC_busy",
        "sched_ms"
    );
    for ep in [8u32, 16, 32, 64] {
        let shape = MoeShape::deepseek_v3(ep, tokens);
        let tf = shape.taskflow()?;
        let t = Instant::now();
        let c = hpmoe_core::compile(&tf, &cost).map_err(|d| d.render(&tf.sources))?;
        let elapsed = t.elapsed();
        let exp = &c.expanded;
        let bound = lower_bound(exp, &tf.profile, &cost);
        let costs = node_costs(exp, &cost);
        let aic_work: u64 =
            (0..exp.nodes() as u32).filter(|&n| exp.core_kind(n) == CoreKind::Aic).map(|n| costs[n as usize]).sum();
        let aic_capacity = c.placement.makespan_ns as f64 * f64::from(tf.profile.aic_per_rank * ep);
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
        println!(
            "{:>4} {:>9} {:>10} {:>13} {:>9} {:>11.0} {:>10.1} {:>9.1} {:>8.2} {:>8.0}% {:>10.0}",
            ep,
            exp.nodes(),
            exp.dag.edges(),
            format!("{}->{}", c.sync.cross_edges_before, c.sync.cross_edges_after),
            c.sync.counters_per_rank.iter().max().copied().unwrap_or(0),
            c.table.total_bytes() as f64 / 1024.0,
            c.placement.makespan_ns as f64 / 1e3,
            bound.ns() as f64 / 1e3,
            c.placement.makespan_ns as f64 / bound.ns().max(1) as f64,
            100.0 * aic_work as f64 / aic_capacity.max(1.0),
            elapsed.as_secs_f64() * 1e3,
        );
    }
    println!("est_us: the list scheduler's makespan estimate under SimpleCost (hardware.md figures, some guessed);");
    println!("bound_us: no schedule can beat it under the same costs. The cost-model simulator is not written yet.");
    Ok(())
}
