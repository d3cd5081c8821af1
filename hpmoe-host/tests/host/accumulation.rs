//! Ordered accumulation on the host: `matmul_accumulate`'s arithmetic against a plain-Rust
//! reference, and a chain of accumulating tiles giving the same bytes under every schedule,
//! core count and run (with perturbed thread timing), priced by the simulator and the bound.

use hpmoe_core::cost::{CostProfile, TaskflowCost};
use hpmoe_core::model::{CoreKind::*, DType, IndexSel, MachineProfile, Taskflow};
use hpmoe_core::schedule::SimpleCost;
use hpmoe_host::exec::{Executor, HostTensor, Inputs, OpImpls, RunOptions, Snapshot, TileHook};
use hpmoe_host::sim::{lower_bound, simulate};
use std::sync::Arc;
use std::time::Duration;

const S: usize = 6;
const M: usize = 8;
const K: usize = 16;
const N: usize = 8;

/// A weight gradient: `c = Σ_s x[s] · w`, a plain matmul for `s = 0` and one accumulating
/// family per further `s`, so the sum runs in declaration order; beside it, on the AIVs, a chain
/// of `accumulate`s of the rows of `v` into `y`.
fn chain(profile: MachineProfile, c_type: DType) -> Taskflow {
    let mut tf = Taskflow::new("chain", profile);
    let x = tf.input("x", DType::Bf16, &[S as u64, M as u64, K as u64]);
    let w = tf.input("w", DType::Bf16, &[K as u64, N as u64]);
    let v = tf.input("v", DType::F32, &[S as u64, 64]);
    let c = tf.output("c", c_type, &[M as u64, N as u64]);
    let y = tf.output("y", DType::F32, &[64]);
    tf.tile("first", Aic, |t| t.op("matmul", [x.at(0), w.whole(), c.whole()]));
    tf.tile("vfirst", Aiv, |t| t.op("copy", [v.at(0), y.whole()]));
    for s in 1..S as i64 {
        tf.tile(&format!("acc{s}"), Aic, |t| t.op("matmul_accumulate", [x.at(s), w.whole(), c.whole()]));
        tf.tile(&format!("vacc{s}"), Aiv, |t| t.op("accumulate", [v.at(s), y.whole()]));
    }
    tf
}

/// Inputs whose partial sums differ in magnitude, so that the order of the sum shows in its bits.
fn inputs(tf: &Taskflow) -> Inputs {
    let mut inputs = Inputs::random(tf, 11);
    let x = inputs.get("x", 0).unwrap().to_f32();
    let scaled: Vec<f32> =
        x.iter().enumerate().map(|(i, v)| v * [1.0, 3e3, -7e-3, 1e2, -5.0, 2e-2][i / (M * K)]).collect();
    inputs.set_rank("x", 0, HostTensor::from_f32(DType::Bf16, &[S as u64, M as u64, K as u64], &scaled));
    let v = inputs.get("v", 0).unwrap().to_f32();
    let scaled: Vec<f32> = v.iter().enumerate().map(|(i, v)| v * [1.0, 1e4, -1e-3, 3e2, -7.0, 1e-2][i / 64]).collect();
    inputs.set_rank("v", 0, HostTensor::from_f32(DType::F32, &[S as u64, 64], &scaled));
    inputs
}

/// `x[s] · w` in f32, summed over `p` ascending from `+0.0` (written out apart from the executor).
fn product(x: &[f32], w: &[f32], s: usize) -> Vec<f32> {
    let mut out = vec![0.0f32; M * N];
    for i in 0..M {
        for j in 0..N {
            let mut acc = 0.0f32;
            for p in 0..K {
                acc += x[(s * M + i) * K + p] * w[p * N + j];
            }
            out[i * N + j] = acc;
        }
    }
    out
}

/// `c` after the chain, adding the products of `order` one after the other, each added in f32
/// and rounded into `c_type` once (the first one is a plain matmul: rounded from `+0.0 + p`).
fn reference_c(inputs: &Inputs, c_type: DType, order: &[usize]) -> Vec<u32> {
    let (x, w) = (inputs.get("x", 0).unwrap().to_f32(), inputs.get("w", 0).unwrap().to_f32());
    let round = |v: &[f32]| HostTensor::from_f32(c_type, &[(M * N) as u64], v);
    let mut c = round(&product(&x, &w, order[0]));
    for &s in &order[1..] {
        let sum: Vec<f32> = c.to_f32().iter().zip(product(&x, &w, s)).map(|(c, p)| c + p).collect();
        c = round(&sum);
    }
    c.bits().to_vec()
}

/// Every tile sleeps a few hundred microseconds picked from its node and the run number.
fn jitter(run: u64) -> RunOptions {
    let hook: TileHook = Arc::new(move |t| {
        let pick = (u64::from(t.node.raw()) + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(run) >> 54;
        std::thread::sleep(Duration::from_micros(pick % 400));
    });
    RunOptions { tile_hook: Some(hook), ..RunOptions::default() }
}

fn run(tf: &Taskflow, cost: &dyn hpmoe_core::schedule::CostModel, inputs: &Inputs, runs: u64) -> Vec<Snapshot> {
    let compiled = hpmoe_core::compile(tf, cost).unwrap_or_else(|d| panic!("{}", d.render(&tf.sources)));
    let exec = Executor::for_compiled(tf, &compiled, &OpImpls::builtin()).unwrap();
    (0..runs).map(|r| exec.run(inputs, &jitter(r)).unwrap().snapshot).collect()
}

#[test]
fn matmul_accumulate_adds_the_fp32_product_once_into_c() {
    for c_type in [DType::F32, DType::Bf16] {
        let tf = chain(MachineProfile::small(1, 1), c_type);
        let inputs = inputs(&tf);
        let out = &run(&tf, &SimpleCost::default(), &inputs, 1)[0];
        let order: Vec<usize> = (0..S).collect();
        assert_eq!(out.get(0, "c").unwrap().bits(), reference_c(&inputs, c_type, &order), "{}", c_type.name());
    }
}

#[test]
fn the_sums_are_bitwise_the_same_under_every_schedule_core_count_and_run() {
    let inputs = inputs(&chain(MachineProfile::small(1, 1), DType::F32));
    let chain_order: Vec<usize> = (0..S).collect();
    let reversed: Vec<usize> = (0..S).rev().collect();
    let expected = reference_c(&inputs, DType::F32, &chain_order);
    // The test can tell orders apart: summed the other way round, `c` has other bits.
    assert_ne!(expected, reference_c(&inputs, DType::F32, &reversed));
    let fast_cube = SimpleCost { aic_flops_per_s: 1_000_000_000_000_000, ..SimpleCost::default() };
    let slow_cube = SimpleCost { aic_flops_per_s: 1_000_000_000, ..SimpleCost::default() };
    let mut all: Vec<Snapshot> = Vec::new();
    for (aic, ranks) in [(1, 1), (2, 1), (4, 1), (3, 2)] {
        let tf = chain(MachineProfile::small(aic, ranks), DType::F32);
        let inputs = if ranks == 1 { inputs.clone() } else { spread(&inputs, &tf) };
        for cost in [&SimpleCost::default(), &fast_cube, &slow_cube] {
            for snapshot in run(&tf, cost, &inputs, 3) {
                for rank in 0..ranks {
                    assert_eq!(snapshot.get(rank, "c").unwrap().bits(), expected, "{aic} AICs, rank {rank}");
                }
                all.push(snapshot);
            }
        }
    }
    let y = all[0].get(0, "y").unwrap().bits().to_vec();
    assert!(all.iter().all(|s| (0..s.ranks()).all(|r| s.get(r, "y").unwrap().bits() == y)));
}

/// The same inputs on every rank of `tf`.
fn spread(inputs: &Inputs, tf: &Taskflow) -> Inputs {
    let mut out = Inputs::new();
    for name in ["x", "w", "v"] {
        for rank in 0..tf.profile.ranks {
            out.set_rank(name, rank, inputs.get(name, 0).unwrap().clone());
        }
    }
    out
}

#[test]
fn the_simulator_and_the_bound_price_the_chain_in_order() {
    let tf = chain(MachineProfile::small(4, 1), DType::F32);
    let cost = TaskflowCost::new(&tf, CostProfile::ascend910b());
    let compiled = hpmoe_core::compile(&tf, &cost).unwrap();
    let sim = simulate(&compiled, &cost).unwrap();
    let bound = lower_bound(&compiled.expanded, &tf.profile, &cost).unwrap();
    // The accumulating matmuls run one after the other, each at least its uncontended time.
    let aic_chain: u64 =
        (0..tf.families.len()).filter(|&f| tf.families[f].core == Aic).map(|f| cost.family(f).exec_ns).sum();
    assert!(bound.critical_path_ns >= aic_chain, "{bound:?} < {aic_chain}");
    assert!(sim.makespan_ns >= bound.ns());
}

/// The same weight gradient as one family chained on itself, `after(acc(s - 1))` (or `s + 1`):
/// `c` is zeroed, then the instances add their products in the chain's order, whatever the
/// core count; reversing the chain reverses the sum, and the bits show it.
#[test]
fn a_family_chained_on_itself_accumulates_in_the_chains_order() {
    let build = |profile: MachineProfile, step: i64| {
        let mut tf = Taskflow::new("family_chain", profile);
        let x = tf.input("x", DType::Bf16, &[S as u64, M as u64, K as u64]);
        let w = tf.input("w", DType::Bf16, &[K as u64, N as u64]);
        let c = tf.output("c", DType::F32, &[M as u64, N as u64]);
        tf.tile("init", Aiv, |t| t.op("zero", [c.whole()]));
        tf.tile("acc", Aic, |t| {
            let s = t.grid("s", S as u64);
            t.op("matmul_accumulate", [x.at(s.clone()), w.whole(), c.whole()]);
            t.after("acc", [IndexSel::At(s + step)]);
        });
        tf
    };
    let forward: Vec<usize> = (0..S).collect();
    let backward: Vec<usize> = (0..S).rev().collect();
    let mut seen = Vec::new();
    for (step, order) in [(-1, &forward), (1, &backward)] {
        for cores in [1, 3] {
            let tf = build(MachineProfile::small(cores, 1), step);
            // Scaled like `chain`'s x, so that the order shows in the bits.
            let mut inputs = Inputs::random(&tf, 11);
            let x = inputs.get("x", 0).unwrap().to_f32();
            let scaled: Vec<f32> =
                x.iter().enumerate().map(|(i, v)| v * [1.0, 3e3, -7e-3, 1e2, -5.0, 2e-2][i / (M * K)]).collect();
            inputs.set_rank("x", 0, HostTensor::from_f32(DType::Bf16, &[S as u64, M as u64, K as u64], &scaled));
            let expected = reference_c(&inputs, DType::F32, order);
            for out in run(&tf, &SimpleCost::default(), &inputs, 2) {
                assert_eq!(out.get(0, "c").unwrap().bits(), expected, "step {step}, {cores} cores");
            }
            seen.push(expected);
        }
    }
    assert_ne!(seen[0], seen[2], "the two chain directions sum in different orders");
}
