//! Simulates the DeepSeek-V3 MoE-FFN layer and its kernel-by-kernel baseline and writes
//! their traces: Chrome/Perfetto JSON of each run (open in ui.perfetto.dev) and an SVG
//! timeline of one rank with the taskflow above the baseline on one time axis.
//!
//! ```sh
//! cargo run --release -p hpmoe-examples --example timeline [-- --ep N] [--tokens N] [--rank R]
//!                                                           [--profile NAME|FILE] [--out DIR] [--tiny]
//! ```
//!
//! `--tiny` uses `MoeShape::tiny(ep)` instead: a trace small enough to read tile by tile.

use hpmoe_core::cost::TaskflowCost;
use hpmoe_examples::cli::Options;
use hpmoe_host::moe::MoeShape;
use hpmoe_host::sim;
use hpmoe_host::trace::{Labels, Panel, chrome_trace, svg_timeline};
use std::path::{Path, PathBuf};

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let options = ["--ep", "--tokens", "--rank", "--profile", "--out", "--tiny"];
    let opts = Options::from_env(&options, &options.join(", "))?;
    let number = |flag: &str, default: u64| opts.number(flag, default);
    let ep = u32::try_from(number("--ep", 8)?).map_err(|_| "--ep is too large".to_string())?;
    let tokens = number("--tokens", 4096)?;
    let rank = u32::try_from(number("--rank", 0)?).map_err(|_| "--rank is too large".to_string())?;
    if rank >= ep {
        return Err(format!("--rank {rank} is not a rank of EP {ep}"));
    }
    let profile = opts.profile()?;
    let tiny = opts.flag("--tiny");
    let out = opts.value("--out").map(PathBuf::from).unwrap_or_else(|| {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .expect("examples/ sits in the workspace")
            .join("target")
            .join("hpmoe")
            .join("timeline")
    });

    let shape = if tiny { MoeShape::tiny(ep) } else { MoeShape::deepseek_v3(ep, tokens) };
    let tf = shape.taskflow()?;
    let cost = TaskflowCost::new(&tf, profile);
    let compiled = hpmoe_core::compile(&tf, &cost).map_err(|d| d.render(&tf.sources))?;
    let cmp = sim::compare(&compiled, &tf.profile, &cost).map_err(|e| e.to_string())?;
    let labels = Labels::new(&tf, &compiled.expanded);

    std::fs::create_dir_all(&out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let write = |name: &str, text: &str| {
        let path = out.join(name);
        std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        println!("wrote {} ({} KiB)", path.display(), text.len() / 1024);
        Ok::<(), String>(())
    };
    write("taskflow_trace.json", &chrome_trace(&cmp.taskflow, &labels))?;
    write("baseline_trace.json", &chrome_trace(&cmp.baseline.result, &labels))?;
    let panels = [Panel::taskflow(&cmp.taskflow), Panel::baseline(&cmp.baseline, &labels)];
    write("timeline.svg", &svg_timeline(&panels, rank, &labels))?;
    println!(
        "taskflow {:.1} us, kernel by kernel {:.1} us ({:.2}x), bound {:.1} us ({})",
        cmp.taskflow.makespan_ns as f64 / 1e3,
        cmp.baseline.result.makespan_ns as f64 / 1e3,
        cmp.speedup(),
        cmp.bound.ns() as f64 / 1e3,
        cmp.bound.binding()
    );
    Ok(())
}
