//! Scheduling cost at scale: MoE-shaped taskflows of about 10^3 … 10^6 tile instances
//! (all ranks) through the whole pipeline — checks, expansion, list scheduling, deadlock
//! proof, synchronisation, table — with the time of each stage and the table's size.
//!
//! `cargo bench -p hpmoe-core --bench schedule_scale` (add `-- --quick` to stop at 10^5).
//!
//! Times are wall-clock on whatever machine runs it; compare rows of one run, not runs on
//! different machines. The "n log n" column is time / (n · log2 n) in ns, normalised to
//! the first row: close to 1 all the way down means growth close to n log n.

use hpmoe_core::moe::MoeShape;
use hpmoe_core::schedule::SimpleCost;
use std::time::Instant;

/// A layer with DeepSeek-V3's hidden and intermediate sizes and tiling whose instance
/// count (all ranks) is nearest `target`, preferring more ranks on ties.
fn shape_near(target: u64) -> MoeShape {
    let mut best: Option<(u64, MoeShape)> = None;
    for ranks in [2u32, 4, 8, 16, 32, 64] {
        for experts in [16u64, 32, 64, 128, 256] {
            for tokens in (6..=16).map(|k| 1u64 << k) {
                let mut s = MoeShape::deepseek_v3(ranks, tokens);
                s.experts = experts;
                // 32 weighted-sum tiles (token blocks) per rank.
                s.sum_rows = (tokens / 32).max(1);
                if s.validate().is_err() {
                    continue;
                }
                let err = (s.instances_per_rank() * u64::from(ranks)).abs_diff(target);
                if best.as_ref().is_none_or(|(e, _)| err <= *e) {
                    best = Some((err, s));
                }
            }
        }
    }
    best.expect("some shape fits").1
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let targets: &[u64] = if quick { &[1_000, 10_000, 100_000] } else { &[1_000, 10_000, 100_000, 1_000_000] };
    println!(
        "{:>9} {:>5} {:>7} {:>7} {:>10} {:>9} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>12} {:>9} {:>8} {:>7}",
        "instances",
        "ranks",
        "experts",
        "tokens",
        "edges",
        "total_ms",
        "check",
        "expand",
        "list",
        "proof",
        "sync",
        "table",
        "instances/s",
        "waits",
        "B/entry",
        "nlogn"
    );
    let mut base = None;
    for &target in targets {
        let shape = shape_near(target);
        let tf = shape.taskflow().expect("valid shape");
        let t = Instant::now();
        let c = hpmoe_core::compile(&tf, &SimpleCost::default()).unwrap_or_else(|d| panic!("{d}"));
        let total = t.elapsed();
        let n = c.expanded.nodes() as f64;
        let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
        let per_nlogn = total.as_secs_f64() * 1e9 / (n * n.log2());
        let norm = per_nlogn / *base.get_or_insert(per_nlogn);
        let times = &c.times;
        println!(
            "{:>9} {:>5} {:>7} {:>7} {:>10} {:>9.1} {:>8.1} {:>8.1} {:>8.1} {:>8.1} {:>8.1} {:>8.1} {:>12.0} {:>9} {:>8.1} {:>7.2}",
            c.expanded.nodes(),
            shape.ranks,
            shape.experts,
            shape.tokens_per_rank,
            c.expanded.dag.edges(),
            ms(total),
            ms(times.structure + times.order_checks),
            ms(times.expand),
            ms(times.list_schedule),
            ms(times.deadlock_proof),
            ms(times.sync),
            ms(times.table),
            n / total.as_secs_f64(),
            c.sync.cross_edges_after,
            c.table.bytes_per_entry(),
            norm
        );
    }
}
