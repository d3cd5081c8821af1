//! Simulates the DeepSeek-V3 MoE-FFN layer (its forward, backward or training step) and its
//! kernel-by-kernel baseline and writes their traces: Chrome/Perfetto JSON of each run (open in
//! ui.perfetto.dev) and an SVG timeline of one rank with the taskflow above the baseline on one
//! time axis.
//!
//! ```sh
//! cargo run --release -p hpmoe-examples --example timeline [-- --ep N] [--tokens N] [--rank R]
//!                                                           [--pass forward|backward|training_step]
//!                                                           [--profile NAME|FILE] [--out DIR] [--tiny]
//! ```
//!
//! `--tiny` uses `MoeShape::tiny(ep)` instead: a trace small enough to read tile by tile. The
//! README's two timelines (the forward's and the training step's at EP 8, rank 0) are drawn the
//! same way by the main job, which refreshes their committed copies in `examples/assets/`.

use hpmoe_core::cost::TaskflowCost;
use hpmoe_examples::ExampleError;
use hpmoe_examples::cli::Options;
use hpmoe_examples::report::timeline_svg;
use hpmoe_host::moe::MoeShape;
use hpmoe_host::sim;
use hpmoe_host::trace::{Labels, chrome_trace};
use std::path::{Path, PathBuf};

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), ExampleError> {
    let options = ["--ep", "--tokens", "--rank", "--pass", "--profile", "--out", "--tiny"];
    let opts = Options::from_env(&options, &options.join(", "))?;
    let ep = opts.number_u32("--ep", 8)?;
    let tokens = opts.number("--tokens", 4096)?;
    let rank = opts.number_u32("--rank", 0)?;
    if rank >= ep {
        return Err(ExampleError::RankOutOfRange { rank, ranks: ep });
    }
    let profile = opts.profile()?;
    let tiny = opts.flag("--tiny");
    let pass = opts.pass()?;
    let out = opts.value("--out").map(PathBuf::from).unwrap_or_else(|| {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .expect("examples/ sits in the workspace")
            .join("target")
            .join("hpmoe")
            .join("timeline")
    });

    let shape = if tiny { MoeShape::tiny(ep) } else { MoeShape::deepseek_v3(ep, tokens) };
    let tf = shape.pass_taskflow(pass).map_err(ExampleError::Shape)?;
    let cost = TaskflowCost::new(&tf, profile);
    let compiled = hpmoe_core::compile(&tf, &cost).map_err(|d| ExampleError::plan(&tf, d))?;
    let cmp = sim::compare(&compiled, &tf.profile, &cost)
        .map_err(|error| ExampleError::Simulate { taskflow: tf.name.clone(), error })?;
    let labels = Labels::new(&tf, &compiled.expanded);

    std::fs::create_dir_all(&out).map_err(|e| ExampleError::io("create", &out, e))?;
    let write = |name: &str, text: &str| {
        let path = out.join(name);
        std::fs::write(&path, text).map_err(|e| ExampleError::io("write", &path, e))?;
        println!("wrote {} ({} KiB)", path.display(), text.len() / 1024);
        Ok::<(), ExampleError>(())
    };
    write("taskflow_trace.json", &chrome_trace(&cmp.taskflow, &labels))?;
    write("baseline_trace.json", &chrome_trace(&cmp.baseline.result, &labels))?;
    write("timeline.svg", &timeline_svg(&cmp, &labels, rank))?;
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
