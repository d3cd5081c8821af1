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
