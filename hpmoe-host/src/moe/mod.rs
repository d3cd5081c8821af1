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
//! touches.
//!
//! # Routing layout (fixed, so results are checkable)
//!
//! Send slot `j` — row `j` of `xs` and of `back` — carries choice `j % top_k` of token
//! `j / top_k` of the sending rank, and goes to global expert `j / S` (local expert
//! `(j / S) % E` of rank `j / (E·S)`), where `S` is [`MoeShape::rows_per_source`] and `E`
//! [`MoeShape::local_experts`]. Combine returns each row to the same slot of `back` on its
//! source rank, so a token's `top_k` result rows are adjacent, in choice order, and the
//! weighted sum of a token block reads exactly its tokens' rows: it waits only for the
//! combine puts carrying them. `out[t] = Σ_c topk_weights[t, c] · back[t·top_k + c]`, summed
//! in FP32 for `c = 0, 1, …` (the `weighted_accumulate` op), rounded once to BF16.
//! [`crate::exec::moe_reference`] computes the same layer with plain loops from this
//! description.
//!
//! # Natural routing with capacity padding
//!
//! With [`Routing::Natural`] each token's experts are chosen at run time, so how many rows
//! a rank sends to an expert is a run-time count. Every (source rank, expert) pair gets a
//! fixed slot of `capacity` rows (`C`), so one-sided puts land at fixed offsets without
//! coordination, and every tile past the run-time count is guarded
//! ([`hpmoe_core::model::Guard`], `run_if_above(count, b·B)`): it does no work but still signals,
//! so the static schedule holds whatever the routing.
//!
//! The routing step before the layer fills, on each rank: `xs` `[G·C, H]` (slot `j` of
//! global expert `g` is row `g·C + j`; choices take slots in token order, a choice finding
//! its expert's `C` slots full is dropped, rows past the count are zero), `send_counts`
//! `[G]` (`i32`, rows used per expert) and `slot_of` `[T, k]` (`i32`, the row of `xs` and
//! of `back` holding each choice, `-1` if dropped); [`MoeShape::route`] makes such a routing.
//! The layer: `announce` puts each rank's counts row to every destination
//! (`recv_counts[src, e]`); `dispatch(dst, e, b)`, the GMMs and SwiGLU on
//! `(e, src, b, n)`, and `combine(src, e, b)` run only if their block holds a row; the
//! weighted sum gathers each token's rows from `back` by `slot_of`
//! (`gather_weighted_accumulate`), so it waits for every combine put landing on its rank:
//! which puts carry a token's rows is not known before the run. A tile on a partially
//! filled block computes the whole block; the padding rows are zeros and never gathered.
//! [`crate::exec::moe_reference`] computes this layer too (`moe_inputs` builds the routed
//! inputs from [`MoeShape::route`]).
//!
//! # INT8 dispatch
//!
//! With [`DispatchPrecision::Int8`] (`shape.with_dispatch(DispatchPrecision::Int8)`) the rows
//! cross the network as INT8 with one FP32 scale per row, as the measured A3 systems dispatch
//! (hardware.md): about half the bytes of BF16 rows (`H + 4` bytes a row instead of `2·H`).
//! Three families change, each still on exactly one block:
//!
//! - `quantize(dst, e, b)` (AIV, before dispatch, same grid and guard as dispatch): the built-in
//!   `quantize`, per-row symmetric: `scale[i] = max_j |x[i, j]| / 127` (FP32),
//!   `q[i, j] = x[i, j] / scale[i]` rounded half to even and clamped to `-127..=127`, a row of
//!   zeros giving scale 0 and zeros. It writes the block into `xq` (`i8 [slots, H]`) and
//!   `xq_scale` (`f32 [slots]`).
//! - `dispatch` puts the block's INT8 rows into `recv` (now `i8`) and its scales into
//!   `recv_scale` (`f32 [E, R·C]`), two puts to the same rank; the second carries the signal,
//!   fenced behind the first.
//! - `dequantize(e, m)` (`(e, src, b)` under natural routing; AIV, guarded like GMM1): the
//!   built-in `dequantize`, `xin[i, j] = bf16(q[i, j] · scale[i])` in FP32, into `xin`
//!   (`bf16 [E, R·C, H]`), which GMM1 reads instead of `recv`. GMM1 waits only for the
//!   dequantisation of its block, which waits only for the put carrying it.
//!
//! **Why an AIV dequantisation per block, not an INT8 matmul.** The cube unit multiplies
//! INT8 × INT8 (into INT32) or BF16 × BF16 (into FP32), never INT8 × BF16: the Matmul API's
//! type pairs take A and B of one type, and the weights here are BF16. A built-in "matmul with
//! an INT8 A and a per-row scale" would either claim a mixed product the AIC does not have, or
//! hide an AIV conversion inside an AIC op, which a tile (one core) cannot hold. Dequantising on
//! the received side instead is one existing built-in (`dequantize`, usable by any taskflow
//! that moves quantised rows) in a small AIV tile per received block, which the scheduler
//! places like any other and which costs what it moves (one INT8 read, one BF16 write: the
//! cost model prices it on the AIV). Applying the scale to GMM1's product instead
//! (`scale[i] · Σ_p q[i, p] · w[p, j]`) would need the row scale on the cube's output path,
//! whose fixed-function quantisation takes per-column scales, and rounds differently; W8A8
//! (INT8 weights too, the cube's INT8 × INT8 path) would be a different layer with different
//! numerics. Neither is this option.
//!
//! GMM1's output columns are laid out as `[gate_j | up_j]` per column block, so a SwiGLU
//! tile needs exactly one GMM1 tile: columns `n·gmm1_cols .. n·gmm1_cols + gmm1_cols/2` of
//! `w13` are gate columns and the next `gmm1_cols/2` the matching up columns, and SwiGLU
//! writes `act` columns `n·gmm1_cols/2 ..` from that block.

mod backward;
mod routing;

pub use backward::Pass;
pub use routing::RoutedTokens;

use hpmoe_core::model::{CoreKind, DType, MachineProfile, Taskflow};

/// How tokens are routed to experts (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Routing {
    /// Every expert receives exactly [`MoeShape::rows_per_expert`] rows, in a fixed layout.
    Balanced,
    /// Experts chosen at run time; `capacity` rows per (source rank, expert) pair, a
    /// multiple of the row block; choices beyond it are dropped.
    Natural {
        /// Rows reserved per (source rank, expert) pair.
        capacity: u64,
    },
}

/// In what precision dispatch moves token rows (see the module docs, *INT8 dispatch*).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DispatchPrecision {
    /// The rows as they are: BF16, `2·H` bytes a row.
    #[default]
    Bf16,
    /// Each row quantised to INT8 with one FP32 scale (per-row symmetric) before the put,
    /// dequantised to BF16 per received block before GMM1: `H + 4` bytes a row.
    Int8,
}

impl DispatchPrecision {
    /// Bytes one dispatched row of `hidden` elements puts on the network.
    pub fn row_bytes(self, hidden: u64) -> u64 {
        match self {
            DispatchPrecision::Bf16 => 2 * hidden,
            DispatchPrecision::Int8 => hidden + 4,
        }
    }
}

/// Sizes of one MoE-FFN layer and its tiling.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MoeShape {
    /// Expert-parallel ranks (EP): the experts are split evenly among them.
    pub ranks: u32,
    /// AIC cores per rank (AIV = 2×).
    pub aic_per_rank: u32,
    /// Tokens each rank routes (its rows of `x`).
    pub tokens_per_rank: u64,
    /// Hidden size: width of a token's activation and of the layer's output.
    pub hidden: u64,
    /// Expert intermediate size (gate and up are each this wide).
    pub intermediate: u64,
    /// Routed experts in all, over every rank (a multiple of `ranks`).
    pub experts: u64,
    /// Experts each token is routed to (its choices).
    pub top_k: u64,
    /// Rows per block for dispatch, GMM and combine tiles.
    pub row_block: u64,
    /// Output columns per GMM1 tile (a `[gate | up]` pair of half this width each).
    pub gmm1_cols: u64,
    /// Output columns per GMM2 tile.
    pub gmm2_cols: u64,
    /// Token rows per weighted-sum tile.
    pub sum_rows: u64,
    /// Rows of one expert each weight-gradient tile of the backward sums over (a multiple of
    /// `row_block` dividing the rows an expert receives): an expert's weight gradient is the
    /// ordered sum of `rows / wgrad_rows` such tiles. Unused by the forward.
    pub wgrad_rows: u64,
    /// How tokens reach experts: a fixed balanced layout, or chosen at run time with capacity
    /// padding.
    pub routing: Routing,
    /// BF16 rows, or INT8 rows with per-row scales, on the dispatch all-to-all.
    pub dispatch: DispatchPrecision,
}

impl MoeShape {
    /// DeepSeek-V3's routed-expert layer (H 7168, I 2048, 256 experts, top-8) at expert
    /// parallelism `ranks` with `tokens_per_rank` tokens, on 910B-sized dies, balanced
    /// routing. Row blocks are 128 rows, or fewer when a source sends fewer rows to an
    /// expert (`tokens_per_rank · 8 / 256`, so 32 at 1024 tokens).
    pub fn deepseek_v3(ranks: u32, tokens_per_rank: u64) -> Self {
        let per_source = tokens_per_rank.saturating_mul(8) / 256;
        MoeShape {
            ranks,
            aic_per_rank: 24,
            tokens_per_rank,
            hidden: 7168,
            intermediate: 2048,
            experts: 256,
            top_k: 8,
            row_block: per_source.clamp(1, 128),
            gmm1_cols: 512,
            gmm2_cols: 896,
            sum_rows: 64,
            wgrad_rows: 0,
            routing: Routing::Balanced,
            dispatch: DispatchPrecision::Bf16,
        }
        .with_whole_expert_wgrad()
    }

    /// [`MoeShape::deepseek_v3`] with natural routing: 64-row blocks and a capacity of 1.5×
    /// the average rows per (source rank, expert), rounded up to whole blocks (192 rows at
    /// 4096 tokens per rank).
    pub fn deepseek_v3_natural(ranks: u32, tokens_per_rank: u64) -> Self {
        let shape = MoeShape { row_block: 64, ..Self::deepseek_v3(ranks, tokens_per_rank) };
        let capacity = shape.natural_capacity(1.5);
        shape.with_natural_routing(capacity)
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
            wgrad_rows: 4,
            routing: Routing::Balanced,
            dispatch: DispatchPrecision::Bf16,
        }
    }

    /// The same layer whose weight-gradient tiles each sum all the rows an expert receives
    /// ([`MoeShape::rows_per_expert`]; at least one row block): one tile per expert and column
    /// block, so each weight gradient is written once instead of accumulated block by block.
    pub fn with_whole_expert_wgrad(self) -> Self {
        MoeShape { wgrad_rows: self.rows_per_expert().max(self.row_block), ..self }
    }

    /// [`MoeShape::tiny`] with natural routing at 1.5× the average load per (source rank,
    /// expert), rounded up to whole blocks.
    pub fn tiny_natural(ranks: u32) -> Self {
        let shape = Self::tiny(ranks);
        let capacity = shape.natural_capacity(1.5);
        shape.with_natural_routing(capacity)
    }

    /// The same layer with natural routing and `capacity` rows per (source rank, expert).
    pub fn with_natural_routing(self, capacity: u64) -> Self {
        MoeShape { routing: Routing::Natural { capacity }, ..self }
    }

    /// The same layer with dispatch in `precision`.
    pub fn with_dispatch(self, precision: DispatchPrecision) -> Self {
        MoeShape { dispatch: precision, ..self }
    }

    /// `factor` × the average rows one rank sends to one expert (`tokens · top_k /
    /// experts`), rounded up to whole row blocks, at least one block.
    pub fn natural_capacity(&self, factor: f64) -> u64 {
        let average = self.tokens_per_rank.saturating_mul(self.top_k) as f64 / self.experts.max(1) as f64;
        let blocks = (average * factor / self.row_block.max(1) as f64).ceil().max(1.0) as u64;
        blocks.saturating_mul(self.row_block)
    }

    /// Rows per (source rank, expert) slot: the capacity under natural routing, the fixed
    /// [`MoeShape::rows_per_source`] under balanced routing.
    pub fn slot_rows(&self) -> u64 {
        match self.routing {
            Routing::Balanced => self.rows_per_source(),
            Routing::Natural { capacity } => capacity,
        }
    }

    /// Experts held by each rank: `experts / ranks`.
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
        let common = [
            (self.experts.is_multiple_of(r), "experts must be a multiple of ranks"),
            ((2 * self.intermediate).is_multiple_of(self.gmm1_cols), "gmm1_cols must divide 2 * intermediate"),
            (self.gmm1_cols.is_multiple_of(2), "gmm1_cols must be even (a gate half and an up half)"),
            (self.hidden.is_multiple_of(self.gmm2_cols), "gmm2_cols must divide hidden"),
            (self.tokens_per_rank.is_multiple_of(self.sum_rows), "sum_rows must divide tokens_per_rank"),
        ];
        let routed = self.tokens_per_rank.checked_mul(self.top_k).and_then(|n| n.checked_mul(r));
        let by_routing: Vec<(bool, &str)> = match self.routing {
            Routing::Balanced => vec![
                (routed.is_some_and(|n| n.is_multiple_of(self.experts)), "routed rows must split evenly over experts"),
                (self.rows_per_expert().is_multiple_of(r), "rows per expert must split evenly over source ranks"),
                (
                    self.rows_per_source().is_multiple_of(self.row_block) && self.rows_per_source() > 0,
                    "rows per source must be a positive multiple of row_block",
                ),
            ],
            Routing::Natural { capacity } => vec![
                (routed.is_some(), "tokens * top_k * ranks overflows"),
                (self.top_k <= self.experts, "top_k must not exceed experts"),
                (
                    capacity > 0 && capacity.is_multiple_of(self.row_block),
                    "capacity must be a positive multiple of row_block",
                ),
                (
                    self.experts.checked_mul(capacity).is_some_and(|n| n <= i32::MAX as u64),
                    "experts * capacity must fit an i32 slot index",
                ),
            ],
        };
        match common.iter().chain(&by_routing).find(|c| !c.0) {
            Some((_, msg)) => Err(format!("invalid MoE shape: {msg}: {self:?}")),
            None => Ok(()),
        }
    }

    /// Tile instances per rank.
    pub fn instances_per_rank(&self) -> u64 {
        let (r, e, c, b) = (u64::from(self.ranks), self.local_experts(), self.slot_rows(), self.row_block);
        let blocks = r * e * (c / b); // row blocks sent, and received, per rank
        let announce = if matches!(self.routing, Routing::Natural { .. }) { r } else { 0 };
        let quantised = if self.dispatch == DispatchPrecision::Int8 { blocks * 2 } else { 0 };
        announce
            + quantised
            + blocks * 2
            + blocks * (2 * self.intermediate / self.gmm1_cols) * 2
            + blocks * (self.hidden / self.gmm2_cols)
            + self.tokens_per_rank / self.sum_rows
    }

    /// The taskflow of the forward layer.
    pub fn taskflow(&self) -> Result<Taskflow, String> {
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
    fn empty_taskflow(&self, name: &str) -> Taskflow {
        let profile =
            MachineProfile { name: "moe".into(), aic_per_rank: self.aic_per_rank, aiv_per_aic: 2, ranks: self.ranks };
        Taskflow::new(name, profile)
    }

    /// Declares the forward layer's tensors and tiles in `tf` (a validated shape), returning
    /// the tensors the backward reads.
    fn add_forward(&self, tf: &mut Taskflow) -> backward::LayerTensors {
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
        let natural = counts.map(|(send_counts, slot_of, recv_counts)| backward::NaturalTensors {
            send_counts,
            slot_of,
            recv_counts,
        });
        backward::LayerTensors { w13, w2, weights, recv, h: hbuf, act, back, natural }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let name = |n: u32| hpmoe_core::check::node_name(&tf, &e.space, n);
        // gmm1(e=0, src=1, b=2, n=0) on rank 0 waits for rank 1's counts and the block's put.
        let (src, blk, column_blocks) = (1, 2, 2);
        let gmm1 = e.space.families[2].first + (src * 3 + blk) * column_blocks;
        let preds: Vec<String> = e.dag.pred.row(e.space.node(0, gmm1)).iter().map(|&p| name(p)).collect();
        assert_eq!(preds, ["announce(dst=0) on rank 1", "dispatch(dst=0, e=0, b=2) on rank 1"]);
        // The weighted sum gathers from anywhere in `back`: every combine landing here.
        let sum = e.space.families[6].first;
        let combines = e.dag.pred.row(e.space.node(0, sum)).len();
        assert_eq!(combines as u64, u64::from(shape.ranks) * shape.local_experts() * 3);
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
            .row(e.space.node(0, gmm1))
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
            let name = |n: u32| hpmoe_core::check::node_name(&tf8, &e.space, n);
            let family = |name: &str| tf8.families.iter().position(|f| f.name == name).unwrap();
            let preds = |f: usize| -> Vec<String> {
                e.dag.pred.row(e.space.node(0, e.space.families[f].first)).iter().map(|&p| name(p)).collect()
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
