//! The forward layer's taskflow: its tensors and tile families for every routing and dispatch
//! precision ([`MoeShape::taskflow`]; the layout is in the [parent module's docs](super)).

use super::backward::{LayerTensors, NaturalTensors};
use super::{DispatchPrecision, MoeShape, Routing, ShapeError};
use hpmoe_core::model::{CoreKind, DType, MachineProfile, Taskflow};

impl MoeShape {
    /// The taskflow of the forward layer.
    ///
    /// # Errors
    /// If the shape is invalid ([`MoeShape::validate`]).
    pub fn taskflow(&self) -> Result<Taskflow, ShapeError> {
        self.validate()?;
        let natural = matches!(self.routing, Routing::Natural { .. });
        let name = match (natural, self.dispatch == DispatchPrecision::Int8) {
            (false, false) => "moe_ffn",
            (true, false) => "moe_ffn_natural",
            (false, true) => "moe_ffn_int8",
            (true, true) => "moe_ffn_natural_int8",
        };
        let mut tf = self.empty_taskflow(name);
        self.add_forward(&mut tf);
        Ok(tf)
    }

    /// A taskflow with no tensors or tiles yet, on this shape's machine.
    pub(super) fn empty_taskflow(&self, name: &str) -> Taskflow {
        let profile =
            MachineProfile { name: "moe".into(), aic_per_rank: self.aic_per_rank, aiv_per_aic: 2, ranks: self.ranks };
        Taskflow::new(name, profile)
    }

    /// Declares the forward layer's tensors and tiles in `tf` (a validated shape), returning
    /// the tensors the backward reads.
    pub(super) fn add_forward(&self, tf: &mut Taskflow) -> LayerTensors {
        let (r, e, t, k) = (u64::from(self.ranks), self.local_experts(), self.tokens_per_rank, self.top_k);
        let (h, i, b, c) = (self.hidden, self.intermediate, self.row_block, self.slot_rows());
        let natural = matches!(self.routing, Routing::Natural { .. });
        let slots = r * e * c; // rows of `xs` and `back`
        let int8 = self.dispatch == DispatchPrecision::Int8;
        let bf = DType::Bf16;
        let xs = tf.input("xs", bf, &[slots, h]);
        let w13 = tf.input("w13", bf, &[e, h, 2 * i]);
        let w2 = tf.input("w2", bf, &[e, i, h]);
        let weights = tf.input("topk_weights", DType::F32, &[t, k]);
        let counts = natural.then(|| {
            let send = tf.input("send_counts", DType::I32, &[r * e]);
            let slot_of = tf.input("slot_of", DType::I32, &[t, k]);
            let recv = tf.symmetric("recv_counts", DType::I32, &[r, e]);
            (send, slot_of, recv)
        });
        // INT8 dispatch: the quantised send buffer and its scales, the received scales, and
        // the dequantised rows GMM1 reads (`xin`); BF16 dispatch: GMM1 reads `recv` itself.
        let quantised = int8.then(|| {
            let xq = tf.scratch("xq", DType::I8, &[slots, h]);
            let xq_scale = tf.scratch("xq_scale", DType::F32, &[slots]);
            (xq, xq_scale)
        });
        let recv = tf.symmetric("recv", if int8 { DType::I8 } else { bf }, &[e, r * c, h]);
        let received = int8.then(|| {
            let recv_scale = tf.symmetric("recv_scale", DType::F32, &[e, r * c]);
            let xin = tf.scratch("xin", bf, &[e, r * c, h]);
            (recv_scale, xin)
        });
        let hbuf = tf.scratch("h", bf, &[e, r * c, 2 * i]);
        let act = tf.scratch("act", bf, &[e, r * c, i]);
        let ybuf = tf.scratch("y", bf, &[e, r * c, h]);
        let back = tf.symmetric("back", bf, &[slots, h]);
        let out = tf.output("out", bf, &[t, h]);
        let rank = hpmoe_core::model::Affine::rank;

        if let Some((send, _, recv_counts)) = &counts {
            tf.tile("announce", CoreKind::Aiv, |tb| {
                let dst = tb.grid("dst", r);
                tb.put(send.slice(dst.clone() * e as i64, e), recv_counts.on(dst).at(rank()));
            });
        }
        // Dispatch and its quantisation cover one block: `b` rows of the slot of (dst, e),
        // guarded by the slot's run-time count under natural routing.
        let send_block = |tb: &mut hpmoe_core::model::TileBuilder<'_>| {
            let dst = tb.grid("dst", r);
            let ex = tb.grid("e", e);
            let blk = tb.grid("b", c / b);
            let expert = dst.clone() * e as i64 + ex.clone();
            if let Some((send, ..)) = &counts {
                tb.run_if_above(send.at(expert.clone()), blk.clone() * b as i64);
            }
            let src_row = expert * c as i64 + blk.clone() * b as i64;
            let dst_row = rank() * c as i64 + blk * b as i64;
            (dst, ex, src_row, dst_row)
        };
        if let Some((xq, xq_scale)) = &quantised {
            tf.tile("quantize", CoreKind::Aiv, |tb| {
                let (_, _, src_row, _) = send_block(tb);
                let rows = |t: &hpmoe_core::model::TensorRef| t.slice(src_row.clone(), b);
                tb.op("quantize", [rows(&xs), rows(xq), rows(xq_scale)]);
            });
        }
        tf.tile("dispatch", CoreKind::Aiv, |tb| {
            let (dst, ex, src_row, dst_row) = send_block(tb);
            match (&quantised, &received) {
                (Some((xq, xq_scale)), Some((recv_scale, _))) => {
                    tb.put(xq.slice(src_row.clone(), b), recv.on(dst.clone()).at(ex.clone()).slice(dst_row.clone(), b));
                    tb.put(xq_scale.slice(src_row, b), recv_scale.on(dst).at(ex).slice(dst_row, b));
                }
                _ => tb.put(xs.slice(src_row, b), recv.on(dst).at(ex).slice(dst_row, b)),
            }
        });
        // GMM1, SwiGLU and GMM2 tiles each cover `b` rows of one expert's received rows:
        // block `m` of them under balanced routing, block `blk` of source `src`'s slot
        // (guarded by its run-time count) under natural routing.
        let rows_of = |tb: &mut hpmoe_core::model::TileBuilder<'_>| {
            let ex = tb.grid("e", e);
            let rows = match &counts {
                None => tb.grid("m", r * c / b) * b as i64,
                Some((_, _, recv_counts)) => {
                    let src = tb.grid("src", r);
                    let blk = tb.grid("b", c / b);
                    tb.run_if_above(recv_counts.at(src.clone()).at(ex.clone()), blk.clone() * b as i64);
                    src * c as i64 + blk * b as i64
                }
            };
            (ex, rows)
        };
        if let Some((recv_scale, xin)) = &received {
            tf.tile("dequantize", CoreKind::Aiv, |tb| {
                let (ex, rows) = rows_of(tb);
                let block = |t: &hpmoe_core::model::TensorRef| t.at(ex.clone()).slice(rows.clone(), b);
                tb.op("dequantize", [block(&recv), block(recv_scale), block(xin)]);
            });
        }
        let gmm1_input = received.as_ref().map_or(&recv, |(_, xin)| xin);
        let (n1, n2) = (self.gmm1_cols, self.gmm2_cols);
        tf.tile("gmm1", CoreKind::Aic, |tb| {
            let (ex, rows) = rows_of(tb);
            let n = tb.grid("n", 2 * i / n1);
            let a = gmm1_input.at(ex.clone()).slice(rows.clone(), b);
            let out = hbuf.at(ex.clone()).slice(rows, b).slice(n.clone() * n1 as i64, n1);
            tb.op("matmul", [a, w13.at(ex).all(h).slice(n * n1 as i64, n1), out]);
        });
        tf.tile("swiglu", CoreKind::Aiv, |tb| {
            let (ex, rows) = rows_of(tb);
            let n = tb.grid("n", 2 * i / n1);
            let gate_up = hbuf.at(ex.clone()).slice(rows.clone(), b).slice(n.clone() * n1 as i64, n1);
            tb.op("swiglu", [gate_up, act.at(ex).slice(rows, b).slice(n * (n1 / 2) as i64, n1 / 2)]);
        });
        tf.tile("gmm2", CoreKind::Aic, |tb| {
            let (ex, rows) = rows_of(tb);
            let n = tb.grid("n", h / n2);
            let a = act.at(ex.clone()).slice(rows.clone(), b);
            let out = ybuf.at(ex.clone()).slice(rows, b).slice(n.clone() * n2 as i64, n2);
            tb.op("matmul", [a, w2.at(ex).all(i).slice(n * n2 as i64, n2), out]);
        });
        tf.tile("combine", CoreKind::Aiv, |tb| {
            let src = tb.grid("src", r);
            let ex = tb.grid("e", e);
            let blk = tb.grid("b", c / b);
            if let Some((_, _, recv_counts)) = &counts {
                tb.run_if_above(recv_counts.at(src.clone()).at(ex.clone()), blk.clone() * b as i64);
            }
            let y_row = src.clone() * c as i64 + blk.clone() * b as i64;
            let back_row = (rank() * e as i64 + ex.clone()) * c as i64 + blk * b as i64;
            tb.put(ybuf.at(ex).slice(y_row, b), back.on(src).slice(back_row, b));
        });
        // Natural routing: every weighted sum gathers from anywhere in `back`, so each waits
        // for every combine put landing on its rank. With a relay, one tile per rank waits for
        // them all and is what the sums wait for (a fence on `back`): a put signals one
        // counter, not one per core running sums.
        if counts.is_some() && self.relay {
            tf.tile("relay", CoreKind::Aiv, |tb| {
                tb.op("fence", [back.whole()]);
            });
        }
        tf.tile("weighted_sum", CoreKind::Aiv, |tb| {
            let tblk = tb.grid("t", t / self.sum_rows);
            let rows = self.sum_rows;
            let mine = |tensor: &hpmoe_core::model::TensorRef| tensor.slice(tblk.clone() * rows as i64, rows);
            tb.op("zero", [mine(&out)]);
            match &counts {
                // Token t's top-k rows are slots t·k .. t·k + k of `back`, in choice order.
                None => tb.op(
                    "weighted_accumulate",
                    [back.slice(tblk.clone() * (rows * k) as i64, rows * k), mine(&weights), mine(&out)],
                ),
                // Each choice's row is wherever the routing put it (`slot_of`).
                Some((_, slot_of, _)) => {
                    tb.op("gather_weighted_accumulate", [back.whole(), mine(slot_of), mine(&weights), mine(&out)])
                }
            }
        });
        // The backward multiplies the rows GMM1 multiplied: the dequantised ones under INT8 dispatch.
        let recv = gmm1_input.clone();
        let natural =
            counts.map(|(send_counts, slot_of, recv_counts)| NaturalTensors { send_counts, slot_of, recv_counts });
        LayerTensors { w13, w2, weights, recv, h: hbuf, act, back, natural }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hpmoe_core::ids::{NodeId, RankId};

    #[test]
    fn tiny_and_deepseek_shapes_are_valid_and_analyse() {
        let int8 = |s: MoeShape| s.with_dispatch(DispatchPrecision::Int8);
        let shapes = [1, 2, 4].into_iter().flat_map(|r| {
            [MoeShape::tiny(r), MoeShape::tiny_natural(r), int8(MoeShape::tiny(r)), int8(MoeShape::tiny_natural(r))]
        });
        for shape in shapes {
            let tf = shape.taskflow().unwrap();
            let e = hpmoe_core::analyse(&tf).unwrap_or_else(|d| panic!("{}", d.render(&tf.sources)));
            assert_eq!(e.nodes() as u64, shape.instances_per_rank() * u64::from(shape.ranks));
        }
        for ep in [8, 16, 32, 64] {
            for tokens in [1024, 2048, 4096] {
                MoeShape::deepseek_v3(ep, tokens).validate().unwrap();
                MoeShape::deepseek_v3_natural(ep, tokens).validate().unwrap();
            }
        }
        assert_eq!(MoeShape::deepseek_v3(8, 1024).row_block, 32);
        assert_eq!(MoeShape::deepseek_v3_natural(8, 4096).slot_rows(), 192);
        assert_eq!(MoeShape::tiny_natural(2).slot_rows(), 12);
    }

    #[test]
    fn natural_tiles_past_the_count_are_guarded_and_the_sum_waits_for_every_combine() {
        let shape = MoeShape::tiny_natural(2); // 2 local experts, slots of 12 rows, 3 blocks
        let tf = shape.taskflow().unwrap();
        let guarded: Vec<&str> = tf.families.iter().filter(|f| f.guard.is_some()).map(|f| f.name.as_str()).collect();
        assert_eq!(guarded, ["dispatch", "gmm1", "swiglu", "gmm2", "combine"]);
        let e = hpmoe_core::analyse(&tf).unwrap();
        let name = |n: NodeId| hpmoe_core::check::node_name(&tf, &e.space, n);
        // gmm1(e=0, src=1, b=2, n=0) on rank 0 waits for rank 1's counts and the block's put.
        let (src, blk, column_blocks) = (1, 2, 2);
        let gmm1 = e.space.families[2].first + (src * 3 + blk) * column_blocks;
        let preds: Vec<String> = e.dag.pred.row(e.space.node(RankId::new(0), gmm1)).iter().map(|&p| name(p)).collect();
        assert_eq!(preds, ["announce(dst=0) on rank 1", "dispatch(dst=0, e=0, b=2) on rank 1"]);
        // The weighted sum gathers from anywhere in `back`: every combine landing here.
        let sum = e.space.families[6].first;
        let combines = e.dag.pred.row(e.space.node(RankId::new(0), sum)).len();
        assert_eq!(combines as u64, u64::from(shape.ranks) * shape.local_experts() * 3);
    }

    #[test]
    fn with_a_relay_the_sum_waits_for_the_relay_alone_and_it_for_every_combine() {
        let shape = MoeShape::tiny_natural(2).with_relay();
        let tf = shape.taskflow().unwrap();
        let e = hpmoe_core::analyse(&tf).unwrap();
        assert_eq!(e.nodes() as u64, shape.instances_per_rank() * u64::from(shape.ranks));
        let name = |n: NodeId| hpmoe_core::check::node_name(&tf, &e.space, n);
        let family = |n: &str| tf.families.iter().position(|f| f.name == n).unwrap();
        let (relay, sum) = (family("relay"), family("weighted_sum"));
        assert_eq!(relay + 1, sum);
        let preds = |f: usize| -> Vec<NodeId> {
            e.dag.pred.row(e.space.node(RankId::new(0), e.space.families[f].first)).to_vec()
        };
        let combines = preds(relay);
        assert_eq!(combines.len() as u64, u64::from(shape.ranks) * shape.local_experts() * 3);
        assert!(combines.iter().all(|&p| name(p).starts_with("combine(")));
        let relay_on_0 = e.space.node(RankId::new(0), e.space.families[relay].first);
        assert_eq!(preds(sum), [relay_on_0], "the sum waits for the relay alone");
    }

    #[test]
    fn gmm1_waits_only_for_the_puts_carrying_its_rows() {
        let shape = MoeShape::tiny(2);
        let tf = shape.taskflow().unwrap();
        let e = hpmoe_core::analyse(&tf).unwrap();
        let gmm1 = e.space.families[1].first;
        let preds: Vec<String> = e
            .dag
            .pred
            .row(e.space.node(RankId::new(0), gmm1))
            .iter()
            .map(|&p| hpmoe_core::check::node_name(&tf, &e.space, p))
            .collect();
        // rows 0..4 of recv[0] on rank 0 come from rank 0's block 0 (S = 8 rows per source).
        assert_eq!(preds, vec!["dispatch(dst=0, e=0, b=0) on rank 0"]);
    }

    #[test]
    fn int8_dispatch_halves_the_put_bytes_and_each_tile_waits_only_for_its_block() {
        for natural in [false, true] {
            let bf16 = if natural { MoeShape::tiny_natural(2) } else { MoeShape::tiny(2) };
            let int8 = bf16.clone().with_dispatch(DispatchPrecision::Int8);
            let (tf16, tf8) = (bf16.taskflow().unwrap(), int8.taskflow().unwrap());
            // Every put of the dispatch family: INT8 rows and their FP32 scales, H + 4 bytes a row.
            let put_bytes = |tf: &Taskflow| {
                let traffic = hpmoe_core::cost::family_traffic(tf);
                let f = tf.families.iter().position(|f| f.name == "dispatch").unwrap();
                traffic[f].remote_bytes
            };
            let rows = bf16.row_block;
            assert_eq!(put_bytes(&tf16), rows * DispatchPrecision::Bf16.row_bytes(bf16.hidden));
            assert_eq!(put_bytes(&tf8), rows * (bf16.hidden + 4));
            assert_eq!(put_bytes(&tf8), rows * DispatchPrecision::Int8.row_bytes(bf16.hidden));
            // The quantisation runs on the AIV, priced there.
            let quantize = tf8.families.iter().find(|f| f.name == "quantize").unwrap();
            assert_eq!(quantize.core, CoreKind::Aiv);
            let guarded = tf8.families.iter().filter(|f| f.guard.is_some()).count();
            assert_eq!(guarded, if natural { 7 } else { 0 }, "quantize and dequantize guarded like their blocks");

            let e = hpmoe_core::analyse(&tf8).unwrap_or_else(|d| panic!("{}", d.render(&tf8.sources)));
            let name = |n: NodeId| hpmoe_core::check::node_name(&tf8, &e.space, n);
            let family = |name: &str| tf8.families.iter().position(|f| f.name == name).unwrap();
            let preds = |f: usize| -> Vec<String> {
                e.dag
                    .pred
                    .row(e.space.node(RankId::new(0), e.space.families[f].first))
                    .iter()
                    .map(|&p| name(p))
                    .collect()
            };
            // The first GMM1 tile of rank 0 waits for the dequantisation of its block alone,
            // which waits for the one put carrying it (and, under natural routing, both read
            // the block's run-time count).
            let announce: &[&str] = if natural { &["announce(dst=0) on rank 0"] } else { &[] };
            let with_count = |tile: &str| -> Vec<String> {
                announce.iter().map(|s| s.to_string()).chain([format!("{tile} on rank 0")]).collect()
            };
            let block = if natural { "e=0, src=0, b=0" } else { "e=0, m=0" };
            assert_eq!(preds(family("gmm1")), with_count(&format!("dequantize({block})")));
            assert_eq!(preds(family("dequantize")), with_count("dispatch(dst=0, e=0, b=0)"));
            assert_eq!(preds(family("dispatch")), ["quantize(dst=0, e=0, b=0) on rank 0"]);
        }
    }
}
