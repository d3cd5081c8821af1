//! The certificate check at scale: the DeepSeek-V3 layer's planned tables (4096 tokens per
//! rank, hardware flags on) at EP 8, 16, 32 and 64 (or its natural-routing form) through `hpmoe_core::certify::verify`, with
//! its time and the memory it adds at its peak.
//!
//! `cargo bench -p hpmoe-core --bench certify_scale` (add `-- --ep N` for one EP, `-- --natural`
//! for the natural-routing layer, `MoeShape::deepseek_v3_natural`).
//!
//! Columns: `cpu_s` is the CPU time of the check on its thread (the honest figure on a shared
//! machine; `n/a` off Linux), `wall_s` its wall-clock time; `peak_extra_mib` is how far the
//! process's peak resident memory rose above its resident memory just before the check (Linux:
//! the peak is reset through `/proc/self/clear_refs`; `n/a` where that is not allowed), i.e.
//! the check's own working memory, the table and taskflow it reads excluded.

use hpmoe_core::certify::{FlagSync, verify};
use hpmoe_host::moe::MoeShape;
use std::time::Instant;

/// A field of `/proc/self/status`, in KiB.
fn status_kib(key: &str) -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    s.lines().find(|l| l.starts_with(key))?.split_whitespace().nth(1)?.parse().ok()
}

/// CPU time of this thread, in seconds.
fn thread_cpu_s() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    Some(s.split_whitespace().next()?.parse::<f64>().ok()? / 1e9)
}

fn show(x: Option<f64>, digits: usize) -> String {
    x.map_or("n/a".into(), |x| format!("{x:.digits$}"))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let eps: Vec<u32> = match args.iter().position(|a| a == "--ep") {
        Some(i) => vec![args.get(i + 1).and_then(|a| a.parse().ok()).expect("--ep takes a number")],
        None => vec![8, 16, 32, 64],
    };
    println!(
        "{:>3} {:>8} {:>13} {:>10} {:>8} {:>8} {:>7} {:>15}",
        "EP", "nodes", "dependencies", "hb_edges", "cpu_s", "wall_s", "passes", "peak_extra_mib"
    );
    for ep in eps {
        let natural = args.iter().any(|a| a == "--natural");
        let shape = if natural { MoeShape::deepseek_v3_natural(ep, 4096) } else { MoeShape::deepseek_v3(ep, 4096) };
        let tf = shape.taskflow().expect("valid shape");
        let c = hpmoe_core::plan(&tf).unwrap_or_else(|d| panic!("{d}"));
        let reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
        let before = status_kib("VmRSS:");
        let (cpu, wall) = (thread_cpu_s(), Instant::now());
        let cert = verify(&tf, &c.expanded, c.table.view(), Some(FlagSync::from(&c.flags)))
            .unwrap_or_else(|e| panic!("EP {ep}: {e}"));
        let wall = wall.elapsed().as_secs_f64();
        let cpu = cpu.zip(thread_cpu_s()).map(|(a, b)| b - a);
        let peak = before.zip(status_kib("VmHWM:")).filter(|_| reset).map(|(b, p)| p.saturating_sub(b) as f64 / 1024.0);
        println!(
            "{:>3} {:>8} {:>13} {:>10} {:>8} {:>8.3} {:>7} {:>15}",
            ep,
            c.expanded.nodes(),
            cert.dependencies,
            cert.happens_before_edges,
            show(cpu, 3),
            wall,
            cert.clock_passes,
            show(peak, 0)
        );
    }
}
