//! The built-in ops of the MoE-FFN backward as AscendC: `matmul_nt`, `matmul_tn` and
//! `matmul_tn_accumulate` through the Matmul API with transposed operands, and
//! `swiglu_backward`, `scale_rows_repeat`, `row_dot_topk`, `sum_topk` on the vector API. Each
//! emulated kernel equals the host executor bitwise (the emulator's `Exp` is glibc's `expf`, as
//! the host's, and its ReduceSum adds in ascending order: assumptions 17 and 18 of its README),
//! on strided regions and on rows longer than one UB tile; and the backend refuses what the
//! runtime cannot do, with typed errors. Skipped, with a note, where g++ is missing.

use crate::common;

use common::emulated::{self, kernel_of};
use common::taskflows::{backward_gather_ops, backward_matmuls, backward_vector_ops};
use hpmoe_ascendc::emulator::EmulateError;
use hpmoe_ascendc::{EmitErrorKind, KernelFiles, emit};
use hpmoe_core::model::{CoreKind::*, DType, MachineProfile, Taskflow};

/// [`emulated::equals_executor`] with this file's input seed.
fn equals_executor(tf: &Taskflow, compiled: &hpmoe_core::Compiled, kernel: &KernelFiles) -> Result<(), EmulateError> {
    emulated::equals_executor(tf, compiled, kernel, 11)
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

#[test]
fn backward_gathering_ops_equal_the_executor() {
    // 16 table rows and indices in -1..15: every index in range, some dropped (-1);
    // rows of 2100 columns take two column tiles in gather_row_dot_topk.
    for (t, k, h, out) in [(8, 2, 2100, DType::F32), (6, 3, 40, DType::Bf16)] {
        let tf = backward_gather_ops(t, k, h, 16, out);
        let (compiled, kernel) = kernel_of(&tf);
        for call in ["GatherScaleRowsRepeat(", "GatherRowDotTopk(", "GatherSumTopk("] {
            assert_eq!(kernel.cpp.matches(call).count(), 1, "{call}");
        }
        let mut inputs = hpmoe_host::exec::Inputs::random(&tf, 11);
        for (name, step) in [("choice_of", 5), ("slot_of", 7)] {
            let decl = tf.tensor(name).unwrap();
            let n = decl.shape.iter().product::<u64>();
            let indices: Vec<u32> = (0..n).map(|j| ((j * step + 1) % 17) as i32 - 1).map(|i| i as u32).collect();
            assert!(indices.contains(&u32::MAX), "{name}: some index is -1");
            for rank in 0..tf.profile.ranks {
                let tensor = hpmoe_host::exec::HostTensor::from_bits(DType::I32, &decl.shape, indices.clone());
                inputs.set_rank(name, rank, tensor);
            }
        }
        emulated::equals_executor_on(&tf, &compiled, &kernel, &inputs).unwrap_or_else(|e| panic!("{}: {e}", tf.name));
    }
}

/// A chain of on-chip slot sums whose first link writes (`matmul_tn_slots`, then
/// `matmul_tn_slots_accumulate` after it), over a gradient first filled with other data that the
/// write must not read: per expert two groups of two slots of 8 rows, counts that fill some slots
/// past their rows, leave others empty, and give expert 1's first group no row at all (its
/// blocks written +0.0 by the scalar unit) and expert 0's second group none (nothing added).
#[test]
fn a_slot_sum_chain_whose_first_link_writes_equals_the_executor() {
    use hpmoe_core::model::IndexSel;
    let mut tf = Taskflow::new("slot_chain", MachineProfile::small(1, 1));
    let x = tf.input("x", DType::Bf16, &[2, 32, 32]);
    let g = tf.input("g", DType::Bf16, &[2, 32, 64]);
    let counts = tf.input("counts", DType::I32, &[4, 2]);
    let before = tf.input("before", DType::F32, &[2, 32, 64]);
    let grad = tf.output("grad", DType::F32, &[2, 32, 64]);
    let args = |e: hpmoe_core::model::Affine, group: hpmoe_core::model::Affine| {
        [
            x.at(e.clone()).slice(group.clone() * 16, 16),
            g.at(e.clone()).slice(group.clone() * 16, 16),
            grad.at(e.clone()),
            counts.slice(group * 2, 2).slice(e, 1),
        ]
    };
    tf.tile("fill", Aiv, |t| t.op("copy", [before.whole(), grad.whole()]));
    tf.tile("first", Aic, |t| {
        let e = t.grid("e", 2);
        t.op("matmul_tn_slots", args(e, hpmoe_core::model::Affine::constant(0)));
        t.after("fill", []);
    });
    tf.tile("acc", Aic, |t| {
        let (e, m) = (t.grid("e", 2), t.grid("m", 1));
        t.op("matmul_tn_slots_accumulate", args(e.clone(), m.clone() + 1));
        t.after("acc", [IndexSel::At(e), IndexSel::At(m - 1)]);
    });
    let (compiled, kernel) = kernel_of(&tf);
    assert_eq!(kernel.cpp.matches("hpmoe::MatmulTnSlotsTile<true>(").count(), 1, "{}", kernel.cpp);
    assert_eq!(kernel.cpp.matches("hpmoe::MatmulTnSlotsTile<false>(").count(), 1);
    let mut inputs = hpmoe_host::exec::Inputs::random(&tf, 11);
    // counts[src, e]: expert 0 (3, 8 | 0, 0), expert 1 (0, -1 | 9, 2).
    let values = [3.0, 0.0, 8.0, -1.0, 0.0, 9.0, 0.0, 2.0];
    inputs.set("counts", hpmoe_host::exec::HostTensor::from_f32(DType::I32, &[4, 2], &values));
    emulated::equals_executor_on(&tf, &compiled, &kernel, &inputs).unwrap_or_else(|e| panic!("{e}"));
    // Expert 1's gradient is exactly its second group's sum: the first link's +0.0 under it.
    let host = hpmoe_host::exec::Executor::for_compiled(&tf, &compiled, &hpmoe_host::exec::OpImpls::builtin())
        .unwrap()
        .run(&inputs, &hpmoe_host::exec::RunOptions::default())
        .unwrap();
    let got = host.snapshot.get(0, "grad").unwrap().to_f32();
    assert!(got[32 * 64..].iter().any(|v| *v != 0.0) && got.iter().all(|v| v.is_finite()));
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

/// The on-chip slot sum's refusals: counts that are not a local i32 row or column, and a
/// gradient no base block of whole fractals fitting L0C tiles (40 rows: no multiple of 16
/// divides it).
#[test]
fn the_slot_sum_refuses_unreadable_counts_and_blocks_that_do_not_fit_l0c() {
    // (rows of the gradient, the counts' element type and shape, the kind expected)
    let cases: [(u64, DType, &[u64], EmitErrorKind); 3] = [
        (32, DType::F32, &[2], EmitErrorKind::BadSlotCounts),
        (32, DType::I32, &[2, 2], EmitErrorKind::BadSlotCounts),
        (40, DType::I32, &[2], EmitErrorKind::NoL0cBlock),
    ];
    for (m, counts_type, counts_shape, kind) in cases {
        let mut tf = Taskflow::new("slots", MachineProfile::small(1, 1));
        let x = tf.input("x", DType::Bf16, &[16, m]);
        let g = tf.input("g", DType::Bf16, &[16, 32]);
        let counts = tf.input("counts", counts_type, counts_shape);
        let grad = tf.output("grad", DType::F32, &[m, 32]);
        tf.tile("zero", Aiv, |t| t.op("zero", [grad.whole()]));
        tf.tile("sum", Aic, |t| {
            t.op("matmul_tn_slots_accumulate", [x.whole(), g.whole(), grad.whole(), counts.whole()])
        });
        let error = emit(&tf, &hpmoe_core::plan(&tf).unwrap()).unwrap_err();
        assert_eq!(error.errors[0].kind, kind, "{m} rows, counts {counts_type:?} {counts_shape:?}: {error}");
    }
}
