//! The built-in ops of the MoE-FFN backward as AscendC: `matmul_nt`, `matmul_tn` and
//! `matmul_tn_accumulate` through the Matmul API with transposed operands, and
//! `swiglu_backward`, `scale_rows_repeat`, `row_dot_topk`, `sum_topk` on the vector API. Each
//! emulated kernel equals the host executor bitwise (the emulator's `Exp` is glibc's `expf`, as
//! the host's, and its ReduceSum adds in ascending order: assumptions 17 and 18 of its README),
//! on strided regions and on rows longer than one UB tile; and the backend refuses what the
//! runtime cannot do, with typed errors. Skipped, with a note, where g++ is missing.

mod common;

use hpmoe_ascendc::emulator::{EmulateError, Emulation};
use hpmoe_ascendc::{EmitErrorKind, KernelFiles, emit};
use hpmoe_core::model::{CoreKind::*, DType, MachineProfile, Taskflow};
use hpmoe_core::schedule::SimpleCost;
use hpmoe_host::exec::{Executor, Inputs, OpImpls, RunOptions};

fn kernel_of(tf: &Taskflow) -> (hpmoe_core::Compiled, KernelFiles) {
    let compiled = hpmoe_core::compile_with(tf, &SimpleCost::default(), &hpmoe_core::CompileOptions::default())
        .unwrap_or_else(|d| panic!("{}", d.render(&tf.sources)));
    let kernel = emit(tf, &compiled).unwrap_or_else(|e| panic!("{e}"));
    (compiled, kernel)
}

/// Runs `kernel` on the emulator; every tensor of every rank must equal the host executor's run.
fn equals_executor(tf: &Taskflow, compiled: &hpmoe_core::Compiled, kernel: &KernelFiles) -> Result<(), EmulateError> {
    let Some(options) = common::emulator_options() else { return Ok(()) };
    let inputs = Inputs::random(tf, 11);
    let run = Emulation::build(kernel, &options)?.run(tf, &inputs)?;
    let host = Executor::for_compiled(tf, compiled, &OpImpls::builtin()).unwrap();
    let host = host.run(&inputs, &RunOptions::default()).unwrap();
    if let Some(d) = run.first_difference(&host.snapshot) {
        panic!("{}: the emulated kernel and the host executor differ: {d}", tf.name);
    }
    Ok(())
}

/// The backward's AIC work on `aic` cores: `da[s] = dy[s] · w2ᵀ` per row block (`w2` a column
/// block of a wider tensor, so B's rows are strided), and the weight gradient
/// `dw = Σ_s a[s]ᵀ · dy[s]` — `matmul_tn` for block 0, then a chain of `matmul_tn_accumulate`
/// (`a[s]` a column block of a wider tensor: A's rows strided), plus a bf16 `matmul_tn`.
fn backward_matmuls(aic: u32) -> Taskflow {
    const S: u64 = 4;
    let mut tf = Taskflow::new(format!("bwd_mm_{aic}"), MachineProfile::small(aic, 1));
    let dy = tf.input("dy", DType::Bf16, &[S, 16, 48]);
    let w2 = tf.input("w2", DType::Bf16, &[32, 2 * 48]);
    let a = tf.input("a", DType::Bf16, &[S, 16, 2 * 32]);
    let da = tf.output("da", DType::Bf16, &[S, 16, 32]);
    let dw = tf.output("dw", DType::F32, &[32, 48]);
    let dw_bf16 = tf.output("dw_bf16", DType::Bf16, &[32, 48]);
    tf.tile("dgrad", Aic, |t| {
        let s = t.grid("s", S);
        // [16, 48] · ([32, 48])ᵀ: w2's rows 96 elements apart.
        t.op("matmul_nt", [dy.at(s.clone()), w2.whole().all(32).slice(48, 48), da.at(s)]);
    });
    // a[s] is [16, 32] (columns 32..64 of a [16, 64] block): aᵀ · dy = [32, 48].
    tf.tile("wgrad0", Aic, |t| t.op("matmul_tn", [a.at(0).all(16).slice(32, 32), dy.at(0), dw.whole()]));
    tf.tile("wgrad_bf16", Aic, |t| t.op("matmul_tn", [a.at(1).all(16).slice(32, 32), dy.at(1), dw_bf16.whole()]));
    for s in 1..S as i64 {
        tf.tile(&format!("wgrad{s}"), Aic, |t| {
            t.op("matmul_tn_accumulate", [a.at(s).all(16).slice(32, 32), dy.at(s), dw.whole()])
        });
    }
    tf
}

#[test]
fn transposed_matmuls_and_their_accumulation_chain_equal_the_executor() {
    for aic in [1, 3] {
        let tf = backward_matmuls(aic);
        let (compiled, kernel) = kernel_of(&tf);
        assert_eq!(kernel.cpp.matches("hpmoe::MatmulNtTile(").count(), 1);
        assert_eq!(kernel.cpp.matches("hpmoe::MatmulTnTile(").count(), 2);
        assert_eq!(kernel.cpp.matches("hpmoe::MatmulTnAccumulateTile(").count(), 3);
        // One Matmul object per (types, transposes): Bᵀ to bf16, Aᵀ to f32, Aᵀ to bf16.
        assert!(kernel.cpp.contains("CubeFormat::ND, bfloat16_t, true>"), "{}", kernel.cpp);
        assert_eq!(kernel.matmul_groups.len(), 3, "{:?}", kernel.matmul_groups);
        assert!(kernel.matmul_groups.iter().any(|g| g.trans_b && !g.trans_a && g.types() == "bf16 x bf16ᵀ -> bf16"));
        equals_executor(&tf, &compiled, &kernel).unwrap_or_else(|e| panic!("{aic} AICs: {e}"));
    }
}

/// The vector ops of the backward on `t` tokens, `k` choices, `h` columns and `w` SwiGLU
/// columns, reading bf16 and writing `out`; `dy` is a column block of a wider tensor (strided
/// rows).
fn backward_vector_ops(t: u64, k: u64, h: u64, w: u64, out: DType) -> Taskflow {
    let mut tf = Taskflow::new(format!("bwd_vec_{}", out.name()), MachineProfile::small(1, 2));
    let gate_up = tf.input("gate_up", DType::Bf16, &[t, 2 * w]);
    let d_act = tf.input("d_act", DType::Bf16, &[t, w]);
    let d_gate_up = tf.output("d_gate_up", out, &[t, 2 * w]);
    let dy = tf.input("dy", DType::Bf16, &[t, h + 16]);
    let weights = tf.input("weights", DType::F32, &[t, k]);
    let expert_out = tf.input("expert_out", DType::Bf16, &[t * k, h]);
    let repeated = tf.output("repeated", out, &[t * k, h]);
    let d_weights = tf.output("d_weights", out, &[t, k]);
    let summed = tf.output("summed", out, &[t, h]);
    let dy = || dy.whole().all(t).slice(16, h);
    tf.tile("swiglu_grad", Aiv, |tile| tile.op("swiglu_backward", [gate_up.whole(), d_act.whole(), d_gate_up.whole()]));
    tf.tile("combine_grad", Aiv, |tile| tile.op("scale_rows_repeat", [dy(), weights.whole(), repeated.whole()]));
    tf.tile("weight_grad", Aiv, |tile| tile.op("row_dot_topk", [dy(), expert_out.whole(), d_weights.whole()]));
    tf.tile("dispatch_grad", Aiv, |tile| tile.op("sum_topk", [expert_out.whole(), summed.whole()]));
    tf
}

#[test]
fn backward_vector_ops_equal_the_executor() {
    // Rows of 2100 columns take two column tiles in row_dot_topk (half tiles of 2048), SwiGLU rows
    // of 2080 two as well; small rows take many rows per tile.
    for (t, k, h, w, out) in [(5, 3, 2100, 2080, DType::F32), (9, 2, 40, 24, DType::Bf16)] {
        let tf = backward_vector_ops(t, k, h, w, out);
        let (compiled, kernel) = kernel_of(&tf);
        for call in ["SwigluBackward(", "ScaleRowsRepeat(", "RowDotTopk(", "SumTopk("] {
            assert_eq!(kernel.cpp.matches(call).count(), 1, "{call}");
        }
        equals_executor(&tf, &compiled, &kernel).unwrap_or_else(|e| panic!("{}: {e}", tf.name));
    }
}

/// The backend's refusals, each with its kind and the region named.
#[test]
fn what_the_runtime_cannot_do_is_refused_with_a_typed_error() {
    let mut tf = Taskflow::new("refused", MachineProfile::small(1, 1));
    let a = tf.input("a", DType::Bf16, &[16, 32]);
    let dy = tf.input("dy", DType::Bf16, &[16, 48]);
    let c = tf.output("c", DType::Bf16, &[32, 48]);
    tf.tile("first", Aic, |t| t.op("matmul_tn", [a.whole(), dy.whole(), c.whole()]));
    tf.tile("acc", Aic, |t| t.op("matmul_tn_accumulate", [a.whole(), dy.whole(), c.whole()]));
    let error = emit(&tf, &hpmoe_core::plan(&tf).unwrap()).unwrap_err();
    assert_eq!(error.errors[0].kind, EmitErrorKind::UnsupportedDType);
    assert!(error.to_string().contains("matmul_tn_accumulate adds into `c[:, :]`, which is bf16"), "{error}");

    let mut tf = Taskflow::new("refused_k", MachineProfile::small(1, 1));
    let src = tf.input("src", DType::F32, &[1, 8]);
    let weights = tf.input("weights", DType::F32, &[1, 513]);
    let dst = tf.output("dst", DType::F32, &[513, 8]);
    tf.tile("repeat", Aiv, |t| t.op("scale_rows_repeat", [src.whole(), weights.whole(), dst.whole()]));
    let error = emit(&tf, &hpmoe_core::plan(&tf).unwrap()).unwrap_err();
    assert_eq!(error.errors[0].kind, EmitErrorKind::TooManyRows);
    assert!(error.to_string().contains("k = 513"), "{error}");
}
