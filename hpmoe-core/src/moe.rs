//! A DeepSeek-style MoE-FFN taskflow built with the builder API, at any size.
//!
//! dispatch (AIV puts of row blocks to the rank owning each expert) → GMM1 (AIC, fused
//! gate+up, per expert × row block × column block) → SwiGLU (AIV) → GMM2 (AIC, down) →
//! combine (AIV puts back to the source rank) → weighted sum (AIV).
//!
//! Balanced routing: every local expert receives exactly `rows_per_expert` rows, `S` from
//! each source rank, landing in `recv[e]` grouped by source rank, so a GMM1 tile waits only
//! for the puts carrying its rows. The send buffer `xs` holds the routed token rows in
//! send order (`(dst, e, slot)`), as the routing step that precedes dispatch produces it.
//! Which token fills which slot is run-time data and never changes which regions a tile
//! touches. The weighted sum reads every returned row of its rank (a token's top-k rows may
//! come back from any expert), so it runs after the last combine put arrives.
//!
//! GMM1's output columns are laid out as `[gate_j | up_j]` per column block, so a SwiGLU
//! tile needs exactly one GMM1 tile.

use crate::cost::{CostProfile, FamilyTraffic, Reads, TaskflowCost};
use crate::model::{CoreKind, DType, MachineProfile, Taskflow};

/// Sizes of one MoE-FFN layer and its tiling.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MoeShape {
    pub ranks: u32,
    /// AIC cores per rank (AIV = 2×).
    pub aic_per_rank: u32,
    pub tokens_per_rank: u64,
    pub hidden: u64,
    /// Expert intermediate size (gate and up are each this wide).
    pub intermediate: u64,
    pub experts: u64,
    pub top_k: u64,
    /// Rows per block for dispatch, GMM and combine tiles.
    pub row_block: u64,
    /// Output columns per GMM1 tile (a `[gate | up]` pair of half this width each).
    pub gmm1_cols: u64,
    /// Output columns per GMM2 tile.
    pub gmm2_cols: u64,
    /// Token rows per weighted-sum tile.
    pub sum_rows: u64,
}

impl MoeShape {
    /// DeepSeek-V3's routed-expert layer (H 7168, I 2048, 256 experts, top-8) at expert
    /// parallelism `ranks` with `tokens_per_rank` tokens, on 910B-sized dies.
    pub fn deepseek_v3(ranks: u32, tokens_per_rank: u64) -> Self {
        MoeShape {
            ranks,
            aic_per_rank: 24,
            tokens_per_rank,
            hidden: 7168,
            intermediate: 2048,
            experts: 256,
            top_k: 8,
            row_block: 128,
            gmm1_cols: 512,
            gmm2_cols: 896,
            sum_rows: 64,
        }
    }

    /// A small layer of the same structure, for tests and host runs.
    pub fn tiny(ranks: u32) -> Self {
        MoeShape {
            ranks,
            aic_per_rank: 2,
            tokens_per_rank: 16,
            hidden: 32,
            intermediate: 16,
            experts: 2 * u64::from(ranks),
            top_k: 2,
            row_block: 4,
            gmm1_cols: 16,
            gmm2_cols: 16,
            sum_rows: 8,
        }
    }

    pub fn local_experts(&self) -> u64 {
        self.experts / u64::from(self.ranks)
    }

    /// Rows each local expert receives under balanced routing.
    pub fn rows_per_expert(&self) -> u64 {
        self.tokens_per_rank.saturating_mul(self.top_k).saturating_mul(u64::from(self.ranks)) / self.experts.max(1)
    }

    /// Rows one source rank sends to one expert.
    pub fn rows_per_source(&self) -> u64 {
        self.rows_per_expert() / u64::from(self.ranks).max(1)
    }

    /// Checks that every size is positive and divides as the layout needs.
    pub fn validate(&self) -> Result<(), String> {
        let sizes = [
            self.tokens_per_rank,
            self.hidden,
            self.intermediate,
            self.experts,
            self.top_k,
            self.row_block,
            self.gmm1_cols,
            self.gmm2_cols,
            self.sum_rows,
        ];
        if self.ranks == 0 || self.aic_per_rank == 0 || sizes.contains(&0) {
            return Err(format!("invalid MoE shape: every size must be positive: {self:?}"));
        }
        let r = u64::from(self.ranks);
        let routed = self.tokens_per_rank.checked_mul(self.top_k).and_then(|n| n.checked_mul(r));
        let checks = [
            (self.experts.is_multiple_of(r), "experts must be a multiple of ranks"),
            (routed.is_some_and(|n| n.is_multiple_of(self.experts)), "routed rows must split evenly over experts"),
            (self.rows_per_expert().is_multiple_of(r), "rows per expert must split evenly over source ranks"),
            (self.rows_per_source().is_multiple_of(self.row_block), "rows per source must be a multiple of row_block"),
            ((2 * self.intermediate).is_multiple_of(self.gmm1_cols), "gmm1_cols must divide 2 * intermediate"),
            (self.gmm1_cols.is_multiple_of(2), "gmm1_cols must be even (a gate half and an up half)"),
            (self.hidden.is_multiple_of(self.gmm2_cols), "gmm2_cols must divide hidden"),
            (self.tokens_per_rank.is_multiple_of(self.sum_rows), "sum_rows must divide tokens_per_rank"),
        ];
        match checks.iter().find(|c| !c.0) {
            Some((_, msg)) => Err(format!("invalid MoE shape: {msg}: {self:?}")),
            None => Ok(()),
        }
    }

    /// Tile instances per rank.
    pub fn instances_per_rank(&self) -> u64 {
        let (e, rb) = (self.local_experts(), self.rows_per_expert() / self.row_block);
        let sends = u64::from(self.ranks) * e * (self.rows_per_source() / self.row_block);
        sends * 2
            + e * rb * (2 * self.intermediate / self.gmm1_cols) * 2
            + e * rb * (self.hidden / self.gmm2_cols)
            + self.tokens_per_rank / self.sum_rows
    }

    /// What one weighted-sum tile really moves. Its region reads all of `back`, because a
    /// token's rows may come back from any expert (the dependency must cover them all), but
    /// at run time it gathers only its `sum_rows × top_k` rows (landed by combine puts: cold),
    /// reads their weights, zeroes its output block and accumulates into it (L2-warm).
    pub fn weighted_sum_traffic(&self) -> FamilyTraffic {
        let rows = self.sum_rows;
        let out = rows * self.hidden * 2;
        let gathered = rows * self.top_k * self.hidden;
        FamilyTraffic {
            flops: 2 * gathered,
            reads: Reads { cold_bytes: gathered * 2 + rows * self.top_k * 4, warm_bytes: out },
            write_bytes: 2 * out,
            ..FamilyTraffic::default()
        }
    }

    /// The cost model of this layer's taskflow `tf` under `profile`: traffic from the
    /// regions, except the weighted sum's (see [`MoeShape::weighted_sum_traffic`]).
    pub fn taskflow_cost(&self, tf: &Taskflow, profile: CostProfile) -> TaskflowCost {
        TaskflowCost::new(tf, profile).with_traffic("weighted_sum", self.weighted_sum_traffic())
    }

    /// The taskflow.
    pub fn taskflow(&self) -> Result<Taskflow, String> {
        self.validate()?;
        let (r, e) = (u64::from(self.ranks), self.local_experts());
        let (h, i, b) = (self.hidden, self.intermediate, self.row_block);
        let (rows, s) = (self.rows_per_expert(), self.rows_per_source());
        let sent = r * e * s; // rows each rank sends = tokens * top_k
        let (n1, n2) = (self.gmm1_cols, self.gmm2_cols);
        let profile =
            MachineProfile { name: "moe".into(), aic_per_rank: self.aic_per_rank, aiv_per_aic: 2, ranks: self.ranks };
        let mut tf = Taskflow::new("moe_ffn", profile);
        let bf = DType::Bf16;
        let xs = tf.input("xs", bf, &[sent, h]);
        let w13 = tf.input("w13", bf, &[e, h, 2 * i]);
        let w2 = tf.input("w2", bf, &[e, i, h]);
        let weights = tf.input("topk_weights", DType::F32, &[self.tokens_per_rank, self.top_k]);
        let recv = tf.symmetric("recv", bf, &[e, rows, h]);
        let hbuf = tf.scratch("h", bf, &[e, rows, 2 * i]);
        let act = tf.scratch("act", bf, &[e, rows, i]);
        let ybuf = tf.scratch("y", bf, &[e, rows, h]);
        let back = tf.symmetric("back", bf, &[sent, h]);
        let out = tf.output("out", bf, &[self.tokens_per_rank, h]);
        let rank = crate::model::Affine::rank;

        tf.tile("dispatch", CoreKind::Aiv, |t| {
            let dst = t.grid("dst", r);
            let ex = t.grid("e", e);
            let blk = t.grid("b", s / b);
            let src_row = (dst.clone() * e as i64 + ex.clone()) * s as i64 + blk.clone() * b as i64;
            let dst_row = rank() * s as i64 + blk * b as i64;
            t.put(xs.slice(src_row, b), recv.on(dst).at(ex).slice(dst_row, b));
        });
        tf.tile("gmm1", CoreKind::Aic, |t| {
            let ex = t.grid("e", e);
            let m = t.grid("m", rows / b);
            let n = t.grid("n", 2 * i / n1);
            t.op(
                "matmul",
                [
                    recv.at(ex.clone()).slice(m.clone() * b as i64, b),
                    w13.at(ex.clone()).all(h).slice(n.clone() * n1 as i64, n1),
                    hbuf.at(ex).slice(m * b as i64, b).slice(n * n1 as i64, n1),
                ],
            );
        });
        tf.tile("swiglu", CoreKind::Aiv, |t| {
            let ex = t.grid("e", e);
            let m = t.grid("m", rows / b);
            let n = t.grid("n", 2 * i / n1);
            t.op(
                "swiglu",
                [
                    hbuf.at(ex.clone()).slice(m.clone() * b as i64, b).slice(n.clone() * n1 as i64, n1),
                    act.at(ex).slice(m * b as i64, b).slice(n * (n1 / 2) as i64, n1 / 2),
                ],
            );
        });
        tf.tile("gmm2", CoreKind::Aic, |t| {
            let ex = t.grid("e", e);
            let m = t.grid("m", rows / b);
            let n = t.grid("n", h / n2);
            t.op(
                "matmul",
                [
                    act.at(ex.clone()).slice(m.clone() * b as i64, b),
                    w2.at(ex.clone()).all(i).slice(n.clone() * n2 as i64, n2),
                    ybuf.at(ex).slice(m * b as i64, b).slice(n * n2 as i64, n2),
                ],
            );
        });
        tf.tile("combine", CoreKind::Aiv, |t| {
            let src = t.grid("src", r);
            let ex = t.grid("e", e);
            let blk = t.grid("b", s / b);
            let y_row = src.clone() * s as i64 + blk.clone() * b as i64;
            let back_row = (rank() * e as i64 + ex.clone()) * s as i64 + blk * b as i64;
            t.put(ybuf.at(ex).slice(y_row, b), back.on(src).slice(back_row, b));
        });
        tf.tile("weighted_sum", CoreKind::Aiv, |t| {
            let tb = t.grid("t", self.tokens_per_rank / self.sum_rows);
            let rows = self.sum_rows;
            t.op("zero", [out.slice(tb.clone() * rows as i64, rows)]);
            // Rows of a token block come back from any expert: read them all.
            t.op(
                "weighted_accumulate",
                [back.whole(), weights.slice(tb.clone() * rows as i64, rows), out.slice(tb * rows as i64, rows)],
            );
        });
        Ok(tf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiny_and_deepseek_shapes_are_valid_and_analyse() {
        for ranks in [1, 2, 4] {
            let shape = MoeShape::tiny(ranks);
            let tf = shape.taskflow().unwrap();
            let e = crate::analyse(&tf).unwrap_or_else(|d| panic!("{}", d.render(&tf.sources)));
            assert_eq!(e.nodes() as u64, shape.instances_per_rank() * u64::from(ranks));
        }
        for ep in [8, 16, 32, 64] {
            MoeShape::deepseek_v3(ep, 4096).validate().unwrap();
        }
    }

    #[test]
    fn gmm1_waits_only_for_the_puts_carrying_its_rows() {
        let shape = MoeShape::tiny(2);
        let tf = shape.taskflow().unwrap();
        let e = crate::analyse(&tf).unwrap();
        let gmm1 = e.space.families[1].first;
        let preds: Vec<String> =
            e.dag.pred.row(e.space.node(0, gmm1)).iter().map(|&p| crate::check::node_name(&tf, &e.space, p)).collect();
        // rows 0..4 of recv[0] on rank 0 come from rank 0's block 0 (S = 8 rows per source).
        assert_eq!(preds, vec!["dispatch(dst=0, e=0, b=0) on rank 0"]);
    }
}
