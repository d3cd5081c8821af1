//! Host-executor cost: the per-tile overhead of the threaded executor on empty tiles (with
//! and without cross-core waits), and a scaled-down MoE layer on the executor against the
//! same ops run sequentially on one thread and against the loop-nest reference.
//!
//! `cargo bench -p hpmoe-host --bench executor` (add `-- --quick` for fewer repetitions).
//!
//! Every time is the median of the repetitions, wall-clock, on whatever machine runs it
//! (the executor starts one thread per core with entries, however many CPUs there are).
//! "us/tile" is the run's time *after* the worker threads have started (their start-up is
//! its own column) divided by the tiles run: for empty tiles, the cost of a table entry —
//! wait (spin, park, unpark), dispatch, signal.

use hpmoe_core::model::{CoreKind, IndexSel, MachineProfile, Taskflow};
use hpmoe_core::schedule::SimpleCost;
use hpmoe_host::exec::moe_reference::{moe_inputs, moe_reference};
use hpmoe_host::exec::{Executor, Inputs, OpImpls, RunOptions, SequentialRunner};
use hpmoe_host::moe::MoeShape;
use std::time::{Duration, Instant};

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort_unstable();
    times[times.len() / 2]
}

/// `families` families of `per_family` empty tiles on every rank; with `chained`, tile `i`
/// of family `k` runs after tile `i` of family `k - 1`, alternating AIC and AIV families so
/// that every dependency crosses cores and needs a counter.
fn empty_tiles(profile: MachineProfile, families: usize, per_family: u64, chained: bool) -> Taskflow {
    let mut tf = Taskflow::new("empty", profile);
    for k in 0..families {
        let core = if k % 2 == 0 { CoreKind::Aiv } else { CoreKind::Aic };
        tf.tile(&format!("f{k}"), core, |t| {
            let i = t.grid("i", per_family);
            if chained && k > 0 {
                t.after(&format!("f{}", k - 1), [IndexSel::At(i)]);
            }
        });
    }
    tf
}

fn overhead_row(label: &str, tf: &Taskflow, reps: usize) {
    let compiled = hpmoe_core::compile(tf, &SimpleCost::default()).expect("the benchmark taskflow compiles");
    let impls = OpImpls::builtin();
    let exec = Executor::new(tf, &compiled.table, &impls).unwrap();
    let seq = SequentialRunner::new(tf, &impls).unwrap();
    let inputs = Inputs::new();
    let options = RunOptions::default();
    let tiles = compiled.table.entries().len();
    let waits = compiled.sync.waits.values().flatten().count();
    let runs: Vec<_> = (0..reps).map(|_| exec.run(&inputs, &options).unwrap().stats).collect();
    let threads = runs[0].threads;
    let startup = median(runs.iter().map(|s| s.startup).collect());
    let exec_t = median(runs.iter().map(|s| s.elapsed - s.startup).collect());
    let seq_t = median((0..reps).map(|_| seq.run(&inputs).unwrap().stats.elapsed).collect());
    let per = |d: Duration| d.as_nanos() as f64 / tiles as f64 / 1000.0;
    println!(
        "{label:<38} {tiles:>6} {waits:>6} {threads:>7} {:>10.2} {:>10.2} {:>9.2} {:>9.3} {:>9.3}",
        startup.as_secs_f64() * 1e3,
        exec_t.as_secs_f64() * 1e3,
        per(exec_t),
        seq_t.as_secs_f64() * 1e3,
        per(seq_t)
    );
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let reps = if quick { 3 } else { 9 };
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("host executor benchmark: {cpus} CPUs, median of {reps} runs\n");

    println!("per-tile overhead, empty tiles");
    println!(
        "{:<38} {:>6} {:>6} {:>7} {:>10} {:>10} {:>9} {:>9} {:>9}",
        "taskflow", "tiles", "waits", "threads", "start_ms", "exec_ms", "us/tile", "seq_ms", "us/tile"
    );
    for (label, profile) in [
        ("small 2 ranks x 6 cores", MachineProfile::small(2, 2)),
        ("910B 2 ranks x 72 cores", MachineProfile::ascend910b(2)),
    ] {
        overhead_row(&format!("{label}, independent"), &empty_tiles(profile.clone(), 8, 1024, false), reps);
        overhead_row(&format!("{label}, chained"), &empty_tiles(profile, 8, 1024, true), reps);
    }

    let shape = MoeShape {
        ranks: 2,
        aic_per_rank: 4,
        tokens_per_rank: 128,
        hidden: 256,
        intermediate: 128,
        experts: 8,
        top_k: 2,
        row_block: 16,
        gmm1_cols: 64,
        gmm2_cols: 64,
        sum_rows: 32,
        wgrad_rows: 16,
        wgrad_source_groups: 1,
        relay: false,
        routing: hpmoe_host::moe::Routing::Balanced,
        dispatch: hpmoe_host::moe::DispatchPrecision::Bf16,
    };
    let tf = shape.taskflow().unwrap();
    let compiled = hpmoe_core::compile(&tf, &SimpleCost::default()).unwrap();
    let impls = OpImpls::builtin();
    let exec = Executor::new(&tf, &compiled.table, &impls).unwrap();
    let seq = SequentialRunner::new(&tf, &impls).unwrap();
    let inputs = moe_inputs(&shape, 1);
    let reference = moe_reference(&shape, &inputs).unwrap();
    let options = RunOptions::default();

    let mut threads = 0;
    let mut startup = Vec::new();
    let exec_t = median(
        (0..reps)
            .map(|_| {
                let out = exec.run(&inputs, &options).unwrap();
                for (rank, want) in reference.iter().enumerate() {
                    assert_eq!(out.snapshot.get(rank as u32, "out"), Some(want), "executor differs from the reference");
                }
                threads = out.stats.threads;
                startup.push(out.stats.startup);
                out.stats.elapsed
            })
            .collect(),
    );
    let seq_t = median(
        (0..reps)
            .map(|_| {
                let out = seq.run(&inputs).unwrap();
                assert_eq!(
                    out.snapshot.get(0, "out"),
                    Some(&reference[0]),
                    "sequential run differs from the reference"
                );
                out.stats.elapsed
            })
            .collect(),
    );
    let ref_t = median(
        (0..reps)
            .map(|_| {
                let t = Instant::now();
                std::hint::black_box(moe_reference(&shape, &inputs).unwrap());
                t.elapsed()
            })
            .collect(),
    );
    let tiles = compiled.table.entries().len();
    println!(
        "\nscaled-down MoE layer: {} ranks, {} tokens/rank, H {}, I {}, {} experts, top-{}, {} tiles, {} threads",
        shape.ranks,
        shape.tokens_per_rank,
        shape.hidden,
        shape.intermediate,
        shape.experts,
        shape.top_k,
        tiles,
        threads
    );
    println!("{:<44} {:>10} {:>9}", "run", "ms", "vs seq");
    let row = |label: &str, d: Duration| {
        println!("{label:<44} {:>10.2} {:>8.2}x", d.as_secs_f64() * 1e3, seq_t.as_secs_f64() / d.as_secs_f64());
    };
    row("executor (threads, schedule table)", exec_t);
    println!("  of which starting {threads} threads: {:.2} ms", median(startup).as_secs_f64() * 1e3);
    row("sequential runner (same ops, one thread)", seq_t);
    row("loop-nest reference (one thread)", ref_t);
    println!("(outputs of all three are bitwise equal)");
}
