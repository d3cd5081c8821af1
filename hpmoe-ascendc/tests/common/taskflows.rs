//! Taskflows the emission tests share.

use hpmoe_core::model::{Affine, CoreKind, DType, MachineProfile, OpSpec, Param, Taskflow, WorkModel};

/// The snapshot taskflow: 2 ranks of one AIC and two AIVs; each rank puts its 16 rows to the
/// other rank in four blocks, multiplies what it received, applies SwiGLU and a user op.
pub fn small() -> Taskflow {
    let mut tf = Taskflow::new("small", MachineProfile::small(1, 2));
    tf.ops
        .register(
            OpSpec::new(
                "twice",
                CoreKind::Aiv,
                vec![Param::read("src"), Param::read_write("out")],
                WorkModel::Vector { flops_per_element: 2 },
                "out += 2 * src",
            )
            .with_emit("user_ops::Twice(vec, {src}, {out})"),
        )
        .unwrap();
    let x = tf.input("x", DType::Bf16, &[16, 32]);
    let w = tf.input("w", DType::Bf16, &[32, 64]);
    let recv = tf.symmetric("recv", DType::Bf16, &[16, 32]);
    let h = tf.scratch("h", DType::Bf16, &[16, 64]);
    let y = tf.output("y", DType::F32, &[16, 32]);
    tf.tile("send", CoreKind::Aiv, |t| {
        let b = t.grid("b", 4);
        let dst = (Affine::rank() + 1).modulo(2);
        t.put(x.slice(b.clone() * 4, 4), recv.on(dst).slice(b * 4, 4));
    });
    tf.tile("gmm", CoreKind::Aic, |t| {
        let m = t.grid("m", 2);
        t.op("matmul", [recv.slice(m.clone() * 8, 8), w.whole(), h.slice(m * 8, 8)]);
    });
    tf.tile("act", CoreKind::Aiv, |t| {
        let m = t.grid("m", 2);
        t.op("zero", [y.slice(m.clone() * 8, 8)]);
        t.op("swiglu", [h.slice(m.clone() * 8, 8), y.slice(m.clone() * 8, 8)]);
        t.op("twice", [x.slice(m.clone() * 8, 8), y.slice(m * 8, 8)]);
    });
    tf
}

/// Every built-in op at least once, on one rank.
pub fn all_ops() -> Taskflow {
    let mut tf = Taskflow::new("all_ops", MachineProfile::small(2, 1));
    let x = tf.input("x", DType::F32, &[16, 64]);
    let w = tf.input("w", DType::Bf16, &[64, 32]);
    let q = tf.scratch("q", DType::I8, &[16, 64]);
    let s = tf.scratch("s", DType::F32, &[16]);
    let d = tf.scratch("d", DType::Bf16, &[16, 64]);
    let c = tf.scratch("c", DType::F16, &[16, 64]);
    let c2 = tf.scratch("c2", DType::F16, &[16, 64]);
    let o = tf.output("o", DType::F32, &[16, 64]);
    let m = tf.output("m", DType::F32, &[16, 32]);
    let rows = |b: Affine| b * 8;
    tf.tile("quant", CoreKind::Aiv, |t| {
        let b = t.grid("b", 2);
        t.op("quantize", [x.slice(rows(b.clone()), 8), q.slice(rows(b.clone()), 8), s.slice(rows(b), 8)]);
    });
    tf.tile("dequant", CoreKind::Aiv, |t| {
        let b = t.grid("b", 2);
        t.op("dequantize", [q.slice(rows(b.clone()), 8), s.slice(rows(b.clone()), 8), d.slice(rows(b), 8)]);
    });
    tf.tile("narrow", CoreKind::Aiv, |t| {
        let b = t.grid("b", 2);
        t.op("cast", [d.slice(rows(b.clone()), 8), c.slice(rows(b.clone()), 8)]);
        t.op("copy", [c.slice(rows(b.clone()), 8), c2.slice(rows(b), 8)]);
    });
    tf.tile("scale", CoreKind::Aiv, |t| {
        let b = t.grid("b", 2);
        t.op("scale_rows", [c2.slice(rows(b.clone()), 8), s.slice(rows(b.clone()), 8), o.slice(rows(b.clone()), 8)]);
        t.op("accumulate", [x.slice(rows(b.clone()), 8), o.slice(rows(b), 8)]);
    });
    tf.tile("gmm", CoreKind::Aic, |t| {
        let b = t.grid("b", 2);
        t.op("matmul", [d.slice(rows(b.clone()), 8), w.whole(), m.slice(rows(b), 8)]);
    });
    tf
}

/// Natural routing in miniature, on 2 ranks of one AIC and two AIVs: each rank announces its
/// per-destination row counts with a put; dispatch, GMM and combine tiles are guarded by those
/// counts (`run_if_above`), blocks of 4 rows in a capacity of 8; the weighted sum gathers each
/// token's rows from the combine buffer by slot.
pub fn guarded() -> Taskflow {
    let mut tf = Taskflow::new("guarded", MachineProfile::small(1, 2));
    let sent = tf.input("send_counts", DType::I32, &[2]);
    let xs = tf.input("xs", DType::Bf16, &[16, 32]);
    let w = tf.input("w", DType::Bf16, &[32, 32]);
    let slot_of = tf.input("slot_of", DType::I32, &[8, 2]);
    let weights = tf.input("weights", DType::F32, &[8, 2]);
    let counts = tf.symmetric("recv_counts", DType::I32, &[2]);
    let recv = tf.symmetric("recv", DType::Bf16, &[16, 32]);
    let y = tf.scratch("y", DType::Bf16, &[16, 32]);
    let back = tf.symmetric("back", DType::Bf16, &[16, 32]);
    let out = tf.output("out", DType::Bf16, &[8, 32]);
    tf.tile("announce", CoreKind::Aiv, |t| {
        let dst = t.grid("dst", 2);
        t.put(sent.at(dst.clone()), counts.on(dst).at(Affine::rank()));
    });
    tf.tile("dispatch", CoreKind::Aiv, |t| {
        let dst = t.grid("dst", 2);
        let b = t.grid("b", 2);
        t.run_if_above(sent.at(dst.clone()), b.clone() * 4);
        t.put(xs.slice(dst.clone() * 8 + b.clone() * 4, 4), recv.on(dst).slice(Affine::rank() * 8 + b * 4, 4));
    });
    tf.tile("gmm", CoreKind::Aic, |t| {
        let src = t.grid("src", 2);
        let b = t.grid("b", 2);
        t.run_if_above(counts.at(src.clone()), b.clone() * 4);
        let rows = src * 8 + b * 4;
        t.op("matmul", [recv.slice(rows.clone(), 4), w.whole(), y.slice(rows, 4)]);
    });
    tf.tile("combine", CoreKind::Aiv, |t| {
        let src = t.grid("src", 2);
        let b = t.grid("b", 2);
        t.run_if_above(counts.at(src.clone()), b.clone() * 4);
        t.put(y.slice(src.clone() * 8 + b.clone() * 4, 4), back.on(src).slice(Affine::rank() * 8 + b * 4, 4));
    });
    tf.tile("weighted_sum", CoreKind::Aiv, |t| {
        let tok = t.grid("t", 2);
        let rows = |r: &hpmoe_core::model::TensorRef| r.slice(tok.clone() * 4, 4);
        t.op("zero", [rows(&out)]);
        t.op("gather_weighted_accumulate", [back.whole(), rows(&slot_of), rows(&weights), rows(&out)]);
    });
    tf
}
