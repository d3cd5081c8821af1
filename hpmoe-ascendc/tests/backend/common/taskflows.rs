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

/// The backward's AIC work on `aic` cores: `da[s] = dy[s] · w2ᵀ` per row block (`w2` a column
/// block of a wider tensor, so B's rows are strided), and the weight gradient
/// `dw = Σ_s a[s]ᵀ · dy[s]` — `matmul_tn` for block 0, then a chain of `matmul_tn_accumulate`
/// (`a[s]` a column block of a wider tensor: A's rows strided), plus a bf16 `matmul_tn`.
pub fn backward_matmuls(aic: u32) -> Taskflow {
    const S: u64 = 4;
    let mut tf = Taskflow::new(format!("bwd_mm_{aic}"), MachineProfile::small(aic, 1));
    let dy = tf.input("dy", DType::Bf16, &[S, 16, 48]);
    let w2 = tf.input("w2", DType::Bf16, &[32, 2 * 48]);
    let a = tf.input("a", DType::Bf16, &[S, 16, 2 * 32]);
    let da = tf.output("da", DType::Bf16, &[S, 16, 32]);
    let dw = tf.output("dw", DType::F32, &[32, 48]);
    let dw_bf16 = tf.output("dw_bf16", DType::Bf16, &[32, 48]);
    tf.tile("dgrad", CoreKind::Aic, |t| {
        let s = t.grid("s", S);
        // [16, 48] · ([32, 48])ᵀ: w2's rows 96 elements apart.
        t.op("matmul_nt", [dy.at(s.clone()), w2.whole().all(32).slice(48, 48), da.at(s)]);
    });
    // a[s] is [16, 32] (columns 32..64 of a [16, 64] block): aᵀ · dy = [32, 48].
    tf.tile("wgrad0", CoreKind::Aic, |t| t.op("matmul_tn", [a.at(0).all(16).slice(32, 32), dy.at(0), dw.whole()]));
    tf.tile("wgrad_bf16", CoreKind::Aic, |t| {
        t.op("matmul_tn", [a.at(1).all(16).slice(32, 32), dy.at(1), dw_bf16.whole()])
    });
    for s in 1..S as i64 {
        tf.tile(&format!("wgrad{s}"), CoreKind::Aic, |t| {
            t.op("matmul_tn_accumulate", [a.at(s).all(16).slice(32, 32), dy.at(s), dw.whole()])
        });
    }
    tf
}

/// The vector ops of the backward on `t` tokens, `k` choices, `h` columns and `w` SwiGLU
/// columns, reading bf16 and writing `out`; `dy` is a column block of a wider tensor (strided
/// rows).
pub fn backward_vector_ops(t: u64, k: u64, h: u64, w: u64, out: DType) -> Taskflow {
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
    tf.tile("swiglu_grad", CoreKind::Aiv, |tile| {
        tile.op("swiglu_backward", [gate_up.whole(), d_act.whole(), d_gate_up.whole()])
    });
    tf.tile("combine_grad", CoreKind::Aiv, |tile| {
        tile.op("scale_rows_repeat", [dy(), weights.whole(), repeated.whole()])
    });
    tf.tile("weight_grad", CoreKind::Aiv, |tile| {
        tile.op("row_dot_topk", [dy(), expert_out.whole(), d_weights.whole()])
    });
    tf.tile("dispatch_grad", CoreKind::Aiv, |tile| tile.op("sum_topk", [expert_out.whole(), summed.whole()]));
    tf
}

/// The gathering forms of the backward's vector ops on `t` tokens, `k` choices and `h`
/// columns (natural routing's combine and dispatch backward): a table of `n` rows gathered by
/// i32 indices (inputs: random, folded into `-1..15` by the tests that run it, so some are
/// dropped), `dy` a column block of a wider tensor (strided rows).
pub fn backward_gather_ops(t: u64, k: u64, h: u64, n: u64, out: DType) -> Taskflow {
    let mut tf = Taskflow::new(format!("bwd_gather_{}", out.name()), MachineProfile::small(1, 2));
    let dy = tf.input("dy", DType::Bf16, &[t, h + 16]);
    let weights = tf.input("weights", DType::F32, &[t, k]);
    let choice_of = tf.input("choice_of", DType::I32, &[n]);
    let slot_of = tf.input("slot_of", DType::I32, &[t, k]);
    let table = tf.input("table", DType::Bf16, &[n, h]);
    let scattered = tf.output("scattered", out, &[n, h]);
    let d_weights = tf.output("d_weights", out, &[t, k]);
    let summed = tf.output("summed", out, &[t, h]);
    let dy = || dy.whole().all(t).slice(16, h);
    tf.tile("combine_grad", CoreKind::Aiv, |tile| {
        tile.op("gather_scale_rows_repeat", [dy(), choice_of.whole(), weights.whole(), scattered.whole()])
    });
    tf.tile("weight_grad", CoreKind::Aiv, |tile| {
        tile.op("gather_row_dot_topk", [table.whole(), slot_of.whole(), dy(), d_weights.whole()])
    });
    tf.tile("dispatch_grad", CoreKind::Aiv, |tile| {
        tile.op("gather_sum_topk", [table.whole(), slot_of.whole(), summed.whole()])
    });
    tf
}

/// INT8 quantisation across the vector ops' tiling: `wide`'s rows are longer than one UB tile
/// (three row blocks of two column tiles each), `tall` has more rows than one tile holds (ten
/// row blocks) and a bf16 scale.
pub fn quantize_blocks() -> Taskflow {
    let mut tf = Taskflow::new("quantize_blocks", MachineProfile::small(1, 1));
    let x = tf.input("x", DType::F32, &[3, 4128]);
    let q = tf.output("q", DType::I8, &[3, 4128]);
    let s = tf.output("s", DType::F32, &[3]);
    let y = tf.input("y", DType::Bf16, &[600, 64]);
    let p = tf.output("p", DType::I8, &[600, 64]);
    let r = tf.output("r", DType::Bf16, &[600]);
    tf.tile("wide", CoreKind::Aiv, |t| t.op("quantize", [x.whole(), q.whole(), s.whole()]));
    tf.tile("tall", CoreKind::Aiv, |t| t.op("quantize", [y.whole(), p.whole(), r.whole()]));
    tf
}
