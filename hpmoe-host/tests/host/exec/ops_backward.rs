//! The built-in ops of the MoE-FFN backward (`matmul_nt`, `matmul_tn`, `matmul_tn_accumulate`,
//! `swiglu_backward`, `scale_rows_repeat`, `row_dot_topk`, `sum_topk`, and the gathering
//! `gather_scale_rows_repeat`, `gather_row_dot_topk`, `gather_sum_topk`) against plain loops
//! written here, bitwise, on random shapes and data; the sums' orders on hand-made
//! cancellations; the SwiGLU gradient against a finite difference of the forward; and misshaped
//! arguments refused before the run.

use super::ops::run_both;
use hpmoe_core::model::{CoreKind, DType, MachineProfile, Taskflow};
use hpmoe_core::schedule::SimpleCost;
use hpmoe_host::exec::{Executor, HostTensor, Inputs, OpImpls, Snapshot};
use proptest::prelude::*;

/// `values` rounded into `dtype`, as the ops store their `f32` results.
fn rounded(dtype: DType, shape: &[u64], values: &[f32]) -> HostTensor {
    HostTensor::from_f32(dtype, shape, values)
}

fn input(inputs: &Inputs, name: &str) -> Vec<f32> {
    inputs.get(name, 0).unwrap().to_f32()
}

fn same(out: &Snapshot, name: &str, want: &HostTensor) {
    let got = out.get(0, name).unwrap();
    assert_eq!(got.first_difference(want), None, "`{name}`");
}

/// One AIC tile: `nt = a · btᵀ`, `tn = atᵀ · b`, `acc = init; acc += atᵀ · b` twice (two
/// instances of a chain would need a grid; two calls in one body are ordered by the body).
fn matmul_taskflow(m: u64, n: u64, k: u64, out: DType) -> Taskflow {
    let mut tf = Taskflow::new("mm_backward", MachineProfile::small(1, 1));
    let a = tf.input("a", DType::Bf16, &[m, k]);
    let bt = tf.input("bt", DType::Bf16, &[n, k]);
    let at = tf.input("at", DType::Bf16, &[k, m]);
    let b = tf.input("b", DType::Bf16, &[k, n]);
    let at2 = tf.input("at2", DType::Bf16, &[k, m]);
    let b2 = tf.input("b2", DType::Bf16, &[k, n]);
    let nt = tf.output("nt", out, &[m, n]);
    let tn = tf.output("tn", out, &[m, n]);
    let acc = tf.output("acc", out, &[m, n]);
    tf.tile("mm", CoreKind::Aic, |t| {
        t.op("matmul_nt", [a.whole(), bt.whole(), nt.whole()]);
        t.op("matmul_tn", [at.whole(), b.whole(), tn.whole()]);
        t.op("matmul_tn", [at.whole(), b.whole(), acc.whole()]);
        t.op("matmul_tn_accumulate", [at2.whole(), b2.whole(), acc.whole()]);
    });
    tf
}

/// `Σ_p x(p) · y(p)` in `f32` for `p = 0, 1, …` from `+0.0`.
fn dot(k: usize, x: impl Fn(usize) -> f32, y: impl Fn(usize) -> f32) -> f32 {
    let mut acc = 0.0f32;
    for p in 0..k {
        acc += x(p) * y(p);
    }
    acc
}

/// One AIV tile running the four vector ops on `t` tokens, `k` choices, `h` columns, `w`
/// SwiGLU columns.
fn vector_taskflow(t: u64, k: u64, h: u64, w: u64, out: DType) -> Taskflow {
    let mut tf = Taskflow::new("vec_backward", MachineProfile::small(1, 1));
    let gate_up = tf.input("gate_up", DType::Bf16, &[t, 2 * w]);
    let d_act = tf.input("d_act", DType::Bf16, &[t, w]);
    let d_gate_up = tf.output("d_gate_up", out, &[t, 2 * w]);
    let dy = tf.input("dy", DType::Bf16, &[t, h]);
    let weights = tf.input("weights", DType::F32, &[t, k]);
    let expert_out = tf.input("expert_out", DType::Bf16, &[t * k, h]);
    let repeated = tf.output("repeated", out, &[t * k, h]);
    let d_weights = tf.output("d_weights", out, &[t, k]);
    let summed = tf.output("summed", out, &[t, h]);
    tf.tile("v", CoreKind::Aiv, |tile| {
        tile.op("swiglu_backward", [gate_up.whole(), d_act.whole(), d_gate_up.whole()]);
        tile.op("scale_rows_repeat", [dy.whole(), weights.whole(), repeated.whole()]);
        tile.op("row_dot_topk", [dy.whole(), expert_out.whole(), d_weights.whole()]);
        tile.op("sum_topk", [expert_out.whole(), summed.whole()]);
    });
    tf
}

fn out_dtype() -> impl Strategy<Value = DType> {
    prop_oneof![Just(DType::F32), Just(DType::Bf16)]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn transposed_matmuls_equal_plain_loops_bitwise(
        m in 1u64..6, n in 1u64..6, k in 1u64..9, out in out_dtype(), seed in any::<u64>()
    ) {
        let tf = matmul_taskflow(m, n, k, out);
        let inputs = Inputs::random(&tf, seed);
        let result = run_both(&tf, &OpImpls::builtin(), &inputs);
        let (m, n, k) = (m as usize, n as usize, k as usize);
        let (a, bt, at, b) = (input(&inputs, "a"), input(&inputs, "bt"), input(&inputs, "at"), input(&inputs, "b"));
        let (at2, b2) = (input(&inputs, "at2"), input(&inputs, "b2"));
        let shape = [m as u64, n as u64];
        let nt: Vec<f32> = (0..m * n).map(|e| dot(k, |p| a[(e / n) * k + p], |p| bt[(e % n) * k + p])).collect();
        same(&result, "nt", &rounded(out, &shape, &nt));
        let tn: Vec<f32> = (0..m * n).map(|e| dot(k, |p| at[p * m + e / n], |p| b[p * n + e % n])).collect();
        let tn = rounded(out, &shape, &tn);
        same(&result, "tn", &tn);
        // The accumulation reads the first product back from `acc` (rounded into its type).
        let first = tn.to_f32();
        let acc: Vec<f32> =
            (0..m * n).map(|e| first[e] + dot(k, |p| at2[p * m + e / n], |p| b2[p * n + e % n])).collect();
        same(&result, "acc", &rounded(out, &shape, &acc));
    }

    #[test]
    fn backward_vector_ops_equal_plain_loops_bitwise(
        t in 1u64..5, k in 1u64..5, h in 1u64..9, w in 1u64..9, out in out_dtype(), seed in any::<u64>()
    ) {
        let tf = vector_taskflow(t, k, h, w, out);
        let inputs = Inputs::random(&tf, seed);
        let result = run_both(&tf, &OpImpls::builtin(), &inputs);
        let (t, k, h, w) = (t as usize, k as usize, h as usize, w as usize);

        let (gu, d) = (input(&inputs, "gate_up"), input(&inputs, "d_act"));
        let mut dgu = vec![0.0f32; t * 2 * w];
        for r in 0..t {
            for q in 0..w {
                let (g, u, d) = (gu[r * 2 * w + q], gu[r * 2 * w + w + q], d[r * w + q]);
                let s = 1.0f32 / (1.0 + (-g).exp());
                dgu[r * 2 * w + q] = d * u * s * (1.0 + g * (1.0 - s));
                dgu[r * 2 * w + w + q] = d * g * s;
            }
        }
        same(&result, "d_gate_up", &rounded(out, &[t as u64, 2 * w as u64], &dgu));

        let (dy, weights, o) = (input(&inputs, "dy"), input(&inputs, "weights"), input(&inputs, "expert_out"));
        let repeated: Vec<f32> = (0..t * k * h).map(|e| weights[e / h] * dy[(e / h / k) * h + e % h]).collect();
        same(&result, "repeated", &rounded(out, &[(t * k) as u64, h as u64], &repeated));
        let dw: Vec<f32> = (0..t * k).map(|r| dot(h, |x| dy[(r / k) * h + x], |x| o[r * h + x])).collect();
        same(&result, "d_weights", &rounded(out, &[t as u64, k as u64], &dw));
        let mut summed = vec![0.0f32; t * h];
        for tok in 0..t {
            for x in 0..h {
                for c in 0..k {
                    summed[tok * h + x] += o[(tok * k + c) * h + x];
                }
            }
        }
        same(&result, "summed", &rounded(out, &[t as u64, h as u64], &summed));
    }

    /// The gradient is the derivative of the forward: `swiglu_grad` against a central
    /// difference of `silu(g) · u` in f64, within a relative 1e-4 (f32 rounding and the
    /// difference's own error).
    #[test]
    fn the_swiglu_gradient_is_the_forward_derivative(g in -8.0f32..8.0, u in -4.0f32..4.0, d in -2.0f32..2.0) {
        let (dg, du) = hpmoe_host::exec::ops::swiglu_grad(g, u, d);
        let f = |g: f64, u: f64| g / (1.0 + (-g).exp()) * u * f64::from(d);
        let eps = 1e-5;
        let (g, u) = (f64::from(g), f64::from(u));
        let num_dg = (f(g + eps, u) - f(g - eps, u)) / (2.0 * eps);
        let num_du = (f(g, u + eps) - f(g, u - eps)) / (2.0 * eps);
        prop_assert!((f64::from(dg) - num_dg).abs() <= 1e-4 * (1.0 + num_dg.abs()), "dg {dg} vs {num_dg}");
        prop_assert!((f64::from(du) - num_du).abs() <= 1e-4 * (1.0 + num_du.abs()), "du {du} vs {num_du}");
    }
}

/// Cancellations that give 0 in the stated order and 1 in the reverse one.
#[test]
fn the_sums_run_in_the_stated_order() {
    let mut tf = Taskflow::new("order", MachineProfile::small(1, 2));
    let f = DType::F32;
    let [big, ones_row, ones_col] =
        [("big", [1, 3]), ("ones_row", [1, 3]), ("ones_col", [3, 1])].map(|(name, shape)| tf.input(name, f, &shape));
    let nt = tf.output("nt", f, &[1, 1]);
    let tn = tf.output("tn", f, &[1, 1]);
    let big_rows = tf.input("big_rows", f, &[3, 1]);
    let dw = tf.output("dw", f, &[1, 1]);
    let sum = tf.output("sum", f, &[1, 1]);
    tf.tile("mm", CoreKind::Aic, |t| {
        // Σ_p big[p] · 1 over K = 3, both as a · bᵀ and as aᵀ · b.
        t.op("matmul_nt", [big.whole(), ones_row.whole(), nt.whole()]);
        t.op("matmul_tn", [big_rows.whole(), ones_col.whole(), tn.whole()]);
    });
    tf.tile("v", CoreKind::Aiv, |t| {
        t.op("row_dot_topk", [ones_row.whole(), big.whole(), dw.whole()]);
        t.op("sum_topk", [big_rows.whole(), sum.whole()]);
    });
    let data = [1.0, 1e8, -1e8];
    let mut inputs = Inputs::new();
    inputs
        .set("big", HostTensor::from_f32(f, &[1, 3], &data))
        .set("big_rows", HostTensor::from_f32(f, &[3, 1], &data))
        .set("ones_row", HostTensor::filled(f, &[1, 3], 1.0))
        .set("ones_col", HostTensor::filled(f, &[3, 1], 1.0));
    let out = run_both(&tf, &OpImpls::builtin(), &inputs);
    for name in ["nt", "tn", "dw", "sum"] {
        assert_eq!(out.get(0, name).unwrap().bits(), &[0], "`{name}`: (1 + 1e8) - 1e8 is +0.0 in f32");
    }
}

/// A bf16 accumulation target is read as f32, added in f32 and rounded once: 1 + 3·2^-9
/// rounds to 1 + 2^-7 in bf16 (steps rounded one by one would stay at 1).
#[test]
fn matmul_tn_accumulate_adds_in_f32_and_rounds_once() {
    let mut tf = Taskflow::new("acc", MachineProfile::small(1, 1));
    let a = tf.input("a", DType::F32, &[3, 1]);
    let b = tf.input("b", DType::F32, &[3, 1]);
    let c = tf.output("c", DType::Bf16, &[1, 1]);
    let one = tf.input("one", DType::Bf16, &[1, 1]);
    tf.tile("v", CoreKind::Aiv, |t| t.op("copy", [one.whole(), c.whole()]));
    tf.tile("mm", CoreKind::Aic, |t| t.op("matmul_tn_accumulate", [a.whole(), b.whole(), c.whole()]));
    let mut inputs = Inputs::new();
    inputs
        .set("a", HostTensor::filled(DType::F32, &[3, 1], 1.0 / 512.0))
        .set("b", HostTensor::filled(DType::F32, &[3, 1], 1.0))
        .set("one", HostTensor::filled(DType::Bf16, &[1, 1], 1.0));
    let out = run_both(&tf, &OpImpls::builtin(), &inputs);
    assert_eq!(out.get(0, "c").unwrap().to_f32(), vec![1.0 + 1.0 / 128.0]);
}

/// The slot sum reads each slot to its count (rows past it are NaN here and must not be read),
/// sums in one f32 accumulator and adds into `grad` once: with `grad = 1`, rows `1e8`, `1`,
/// `-1e8` give `1 + ((1e8 + 1) - 1e8) = 1 + 0 = 1`; adding per row or per slot into `grad`
/// would give 0.
#[test]
fn matmul_tn_slots_accumulate_sums_to_the_counts_once() {
    let mut tf = Taskflow::new("slots", MachineProfile::small(1, 1));
    let x = tf.input("x", DType::F32, &[6, 1]);
    let g = tf.input("g", DType::F32, &[6, 1]);
    let counts = tf.input("counts", DType::I32, &[3]);
    let one = tf.input("one", DType::F32, &[1, 1]);
    let grad = tf.output("grad", DType::F32, &[1, 1]);
    tf.tile("v", CoreKind::Aiv, |t| t.op("copy", [one.whole(), grad.whole()]));
    tf.tile("mm", CoreKind::Aic, |t| {
        t.op("matmul_tn_slots_accumulate", [x.whole(), g.whole(), grad.whole(), counts.whole()])
    });
    let nan = f32::NAN;
    // Slots of C = 2 rows: slot 0 counts 1, slot 1 none, slot 2 more than C (both rows).
    let mut inputs = Inputs::new();
    inputs
        .set("x", HostTensor::from_f32(DType::F32, &[6, 1], &[1.0, nan, nan, nan, 1.0, 1.0]))
        .set("g", HostTensor::from_f32(DType::F32, &[6, 1], &[1e8, nan, nan, nan, 1.0, -1e8]))
        .set("counts", HostTensor::from_f32(DType::I32, &[3], &[1.0, 0.0, 5.0]))
        .set("one", HostTensor::filled(DType::F32, &[1, 1], 1.0));
    let out = run_both(&tf, &OpImpls::builtin(), &inputs);
    assert_eq!(out.get(0, "grad").unwrap().to_f32(), vec![1.0]);
}

/// The writing slot sum: the same FP32 sum, written over `grad` (NaN before it, never read):
/// counts (1, 0, 1) give `1e8 · 1 + 1 · 1`, rounded in f32 to `1e8`; counts of no row give
/// `+0.0` (its bits, not `-0.0`), and so does a sum that cancels, `(1e8 + 1) - 1e8`.
#[test]
fn matmul_tn_slots_writes_the_sum_without_reading_grad() {
    let mut tf = Taskflow::new("slots", MachineProfile::small(1, 1));
    let x = tf.input("x", DType::F32, &[6, 1]);
    let g = tf.input("g", DType::F32, &[6, 1]);
    let counts = tf.input("counts", DType::I32, &[3]);
    let nan = tf.input("nan", DType::F32, &[1, 1]);
    let grad = tf.output("grad", DType::F32, &[1, 1]);
    tf.tile("v", CoreKind::Aiv, |t| t.op("copy", [nan.whole(), grad.whole()]));
    tf.tile("mm", CoreKind::Aic, |t| {
        t.op("matmul_tn_slots", [x.whole(), g.whole(), grad.whole(), counts.whole()]);
        t.after("v", []);
    });
    let nan = f32::NAN;
    for (slot_counts, want) in [([1.0, 0.0, 1.0], 1e8f32), ([0.0, -3.0, 0.0], 0.0), ([1.0, 0.0, 5.0], 0.0)] {
        let mut inputs = Inputs::new();
        inputs
            .set("x", HostTensor::from_f32(DType::F32, &[6, 1], &[1.0, nan, nan, nan, 1.0, 1.0]))
            .set("g", HostTensor::from_f32(DType::F32, &[6, 1], &[1e8, nan, nan, nan, 1.0, -1e8]))
            .set("counts", HostTensor::from_f32(DType::I32, &[3], &slot_counts))
            .set("nan", HostTensor::filled(DType::F32, &[1, 1], nan));
        let out = run_both(&tf, &OpImpls::builtin(), &inputs);
        let got = out.get(0, "grad").unwrap().to_f32();
        assert_eq!(got[0].to_bits(), want.to_bits(), "counts {slot_counts:?}: {got:?}");
    }
}

/// Rows that are not whole slots, one per count, are refused before the run.
#[test]
fn matmul_tn_slots_accumulate_refuses_rows_that_are_not_whole_slots() {
    let mut tf = Taskflow::new("slots", MachineProfile::small(1, 1));
    let x = tf.input("x", DType::F32, &[5, 1]);
    let g = tf.input("g", DType::F32, &[5, 1]);
    let counts = tf.input("counts", DType::I32, &[2]);
    let grad = tf.output("grad", DType::F32, &[1, 1]);
    tf.tile("z", CoreKind::Aiv, |t| t.op("zero", [grad.whole()]));
    tf.tile("t", CoreKind::Aic, |t| {
        t.op("matmul_tn_slots_accumulate", [x.whole(), g.whole(), grad.whole(), counts.whole()])
    });
    let compiled = hpmoe_core::compile(&tf, &SimpleCost::default()).unwrap();
    let err = Executor::new(&tf, &compiled.table, &OpImpls::builtin()).unwrap_err().to_string();
    assert!(err.contains("op `matmul_tn_slots_accumulate` in tile `t`") && err.contains("slots of C"), "{err}");
}

/// Each misshaped call is refused when the executor is built, naming the op and the shapes.
#[test]
fn misshaped_arguments_are_refused_before_the_run() {
    /// (op, core, (name, shape) of each argument, a phrase of the error)
    type Case = (&'static str, CoreKind, [(&'static str, &'static [u64]); 3], &'static str);
    let cases: [Case; 7] = [
        ("matmul_nt", CoreKind::Aic, [("a", &[2, 3]), ("b", &[4, 2]), ("c", &[2, 4])], "do not multiply"),
        ("matmul_tn", CoreKind::Aic, [("a", &[3, 2]), ("b", &[2, 4]), ("c", &[2, 4])], "do not multiply"),
        ("matmul_tn_accumulate", CoreKind::Aic, [("a", &[3, 2]), ("b", &[3, 4]), ("c", &[3, 4])], "do not multiply"),
        ("swiglu_backward", CoreKind::Aiv, [("a", &[2, 6]), ("b", &[2, 2]), ("c", &[2, 6])], "twice its columns"),
        ("scale_rows_repeat", CoreKind::Aiv, [("a", &[2, 4]), ("b", &[2, 2]), ("c", &[5, 4])], "k times the rows"),
        ("row_dot_topk", CoreKind::Aiv, [("a", &[2, 4]), ("b", &[4, 4]), ("c", &[2, 3])], "one element per row"),
        ("sum_topk", CoreKind::Aiv, [("a", &[4, 3]), ("b", &[2, 4]), ("c", &[1])], "k times the rows"),
    ];
    for (op, core, args, want) in cases {
        let mut tf = Taskflow::new("bad", MachineProfile::small(1, 1));
        let n = if op == "sum_topk" { 2 } else { 3 };
        let refs: Vec<_> = args[..n]
            .iter()
            .enumerate()
            .map(
                |(i, (name, shape))| {
                    if i + 1 < n { tf.input(name, DType::F32, shape) } else { tf.output(name, DType::F32, shape) }
                },
            )
            .collect();
        if op == "matmul_tn_accumulate" {
            tf.tile("z", CoreKind::Aiv, |t| t.op("zero", [refs[2].whole()]));
        }
        tf.tile("t", core, |t| t.op(op, refs.iter().map(|r| r.whole()).collect::<Vec<_>>()));
        let compiled = hpmoe_core::compile(&tf, &SimpleCost::default()).unwrap();
        let err = Executor::new(&tf, &compiled.table, &OpImpls::builtin()).unwrap_err().to_string();
        assert!(err.contains(&format!("op `{op}` in tile `t`")) && err.contains(want), "{op}: {err}");
    }
}

/// One AIV tile running the three gathering ops on `t` tokens, `k` choices, `h` columns and a
/// table of `n` rows, with the given choice indices (`n` of them, in `-1..t·k`) and slot
/// indices (`t·k`, in `-1..n`).
fn gather_taskflow(t: u64, k: u64, h: u64, n: u64, out: DType) -> Taskflow {
    let mut tf = Taskflow::new("gather_backward", MachineProfile::small(1, 1));
    let dy = tf.input("dy", DType::Bf16, &[t, h]);
    let weights = tf.input("weights", DType::F32, &[t, k]);
    let choice_of = tf.input("choice_of", DType::I32, &[n]);
    let slot_of = tf.input("slot_of", DType::I32, &[t, k]);
    let table = tf.input("table", DType::Bf16, &[n, h]);
    let scattered = tf.output("scattered", out, &[n, h]);
    let d_weights = tf.output("d_weights", out, &[t, k]);
    let summed = tf.output("summed", out, &[t, h]);
    tf.tile("v", CoreKind::Aiv, |tile| {
        tile.op("gather_scale_rows_repeat", [dy.whole(), choice_of.whole(), weights.whole(), scattered.whole()]);
        tile.op("gather_row_dot_topk", [table.whole(), slot_of.whole(), dy.whole(), d_weights.whole()]);
        tile.op("gather_sum_topk", [table.whole(), slot_of.whole(), summed.whole()]);
    });
    tf
}

fn indices(values: &[i32]) -> HostTensor {
    HostTensor::from_bits(DType::I32, &[values.len() as u64], values.iter().map(|&v| v as u32).collect())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn gathering_ops_equal_plain_loops_bitwise(
        t in 1u64..5, k in 1u64..4, h in 1u64..40, n in 1u64..9, out in out_dtype(), seed in any::<u64>(),
        picks in proptest::collection::vec(any::<u32>(), 64)
    ) {
        let tf = gather_taskflow(t, k, h, n, out);
        let mut inputs = Inputs::random(&tf, seed);
        let (tu, ku, hu, nu) = (t as usize, k as usize, h as usize, n as usize);
        // Indices in -1..range, about one in (range + 1) dropped.
        let pick = |i: usize, range: usize| (picks[i % picks.len()] % (range as u32 + 1)) as i32 - 1;
        let choice_of: Vec<i32> = (0..nu).map(|j| pick(j, tu * ku)).collect();
        let slot_of: Vec<i32> = (0..tu * ku).map(|i| pick(i + 17, nu)).collect();
        inputs.set_rank("choice_of", 0, indices(&choice_of));
        inputs.set_rank("slot_of", 0, HostTensor::from_bits(DType::I32, &[t, k], slot_of.iter().map(|&v| v as u32).collect()));
        let result = run_both(&tf, &OpImpls::builtin(), &inputs);
        let (dy, w, table) = (input(&inputs, "dy"), input(&inputs, "weights"), input(&inputs, "table"));
        let mut scattered = vec![0.0f32; nu * hu];
        for (j, &i) in choice_of.iter().enumerate() {
            if let Ok(i) = usize::try_from(i) {
                for c in 0..hu {
                    scattered[j * hu + c] = w[i] * dy[(i / ku) * hu + c];
                }
            }
        }
        let mut d_weights = vec![0.0f32; tu * ku];
        let mut summed = vec![0.0f32; tu * hu];
        for (i, &s) in slot_of.iter().enumerate() {
            let Ok(s) = usize::try_from(s) else { continue };
            d_weights[i] = dot(hu, |c| dy[(i / ku) * hu + c], |c| table[s * hu + c]);
            for c in 0..hu {
                summed[(i / ku) * hu + c] += table[s * hu + c];
            }
        }
        same(&result, "scattered", &rounded(out, &[n, h], &scattered));
        same(&result, "d_weights", &rounded(out, &[t, k], &d_weights));
        same(&result, "summed", &rounded(out, &[t, h], &summed));
    }
}

#[test]
fn gathering_ops_refuse_indices_past_their_table() {
    for (choice, slot, want) in [(4, 0, "index[0] = 4 is out of range"), (0, 2, "index[0, 0] = 2 is out of range")] {
        let tf = gather_taskflow(2, 2, 3, 2, DType::F32);
        let mut inputs = Inputs::random(&tf, 1);
        inputs.set_rank("choice_of", 0, indices(&[choice, -1]));
        inputs.set_rank("slot_of", 0, HostTensor::from_bits(DType::I32, &[2, 2], vec![slot as u32, 0, 1, u32::MAX]));
        let compiled = hpmoe_core::compile(&tf, &SimpleCost::default()).unwrap();
        let exec = Executor::new(&tf, &compiled.table, &OpImpls::builtin()).unwrap();
        let err = exec.run(&inputs, &hpmoe_host::exec::RunOptions::default()).unwrap_err().to_string();
        assert!(err.contains(want), "{err}");
    }
}
