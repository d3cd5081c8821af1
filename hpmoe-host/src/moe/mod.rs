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
//! which puts carry a token's rows is not known before the run ([`MoeShape::with_relay`]: through
//! one `relay` per rank instead, a `fence` on `back` that waits for the puts, so a put signals
//! the relay alone, not every core running sums). A tile on a partially
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
mod dsl_names;
mod forward;
mod routing;
mod shape_error;

pub use backward::Pass;
pub use dsl_names::under_dsl_names;
pub use routing::{RoutedTokens, RoutingError};
pub use shape_error::{ShapeError, ShapeRule};

/// Rows per block of [`MoeShape::deepseek_v3_natural`]: at 4096 tokens per rank a whole
/// 192-row slot (its 1.5× capacity) in one block. Priced with the A3 die profile, a 64-row
/// GMM1 tile is bound by reading its 7168 × 512 weight slice, which a 192-row tile reads once
/// for three times the rows, so one block a slot runs the simulated forward 14–15% faster at
/// EP 8 and 16 than three 64-row blocks that skip the ones past a slot's count (18.3 and
/// 18.0 → 15.5 ms), although every slot now computes its padding; its work no longer depends on the
/// counts (a slot is empty only when a rank sends an expert no row), so the schedule sits
/// within 1% of its bound under every routing. It rests on the profile's guessed L2 hit rate
/// (0.9): below it one block gains more, at 1.0 the 64-row blocks win by 0.7% at EP 8 and 7%
/// at EP 32 (README, "Coarser blocks under natural routing").
pub const DEEPSEEK_V3_NATURAL_ROW_BLOCK: u64 = 192;

/// The default [`MoeShape::wgrad_source_groups`] of a layer on `ranks` ranks: one group per
/// server of the A3 profile the examples price with (16 dies,
/// [`hpmoe_core::cost::CostProfile::dies_per_server`]), each group one server's sources. Within
/// a server one group (each weight gradient read and written once); beyond it the other
/// servers' rows arrive late and the AICs would idle for them, so the groups whose rows are in
/// run while the others' arrive, for one more read and add of each FP32 gradient per group.
/// Measured (simulated natural backward, `moe_training --natural --wgrad-groups N`, backward /
/// training step): two groups lose 0.4 / 1.5 ms at EP 8 and 0.1 / 0.2 ms at EP 16, gain 2.0 /
/// 0.8 ms at EP 32; at EP 64 four gain 3.9 / 1.8 ms (two: 3.8 / 0.1 ms). Ranks that are not
/// whole servers get one group.
pub fn default_wgrad_source_groups(ranks: u32) -> u64 {
    let server = hpmoe_core::cost::CostProfile::ascend_a3_die().dies_per_server();
    if ranks > server && ranks.is_multiple_of(server) { u64::from(ranks / server) } else { 1 }
}

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
    /// Under natural routing, in how many groups of whole source ranks (a divisor of `ranks`)
    /// each expert's weight gradient is summed: `ranks / wgrad_source_groups` sources' slots
    /// per weight-gradient tile, the tiles chained in the order the sources' rows arrive
    /// ([`MoeShape::wgrad_group`]), so the first starts once its sources' rows are in.
    /// Unused by the forward and under balanced routing (see `wgrad_rows`).
    pub wgrad_source_groups: u64,
    /// How tokens reach experts: a fixed balanced layout, or chosen at run time with capacity
    /// padding.
    pub routing: Routing,
    /// BF16 rows, or INT8 rows with per-row scales, on the dispatch all-to-all.
    pub dispatch: DispatchPrecision,
    /// Under natural routing, one *relay* per rank between the puts landing there and the
    /// gathering sums that wait for all of them (a `fence` tile: the forward's `relay` between
    /// `combine` and `weighted_sum`, the backward's `relay_bwd` between `dispatch_bwd` and
    /// `sum_bwd`), so that a put signals one counter instead of one per core running sums
    /// ([`MoeShape::with_relay`]). Off by default: measured no better (docs/history.md, "One relay per destination").
    pub relay: bool,
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
            wgrad_source_groups: default_wgrad_source_groups(ranks),
            routing: Routing::Balanced,
            dispatch: DispatchPrecision::Bf16,
            relay: false,
        }
        .with_whole_expert_wgrad()
    }

    /// [`MoeShape::deepseek_v3`] with natural routing: a capacity of 1.5× the average rows per
    /// (source rank, expert) in one block of [`DEEPSEEK_V3_NATURAL_ROW_BLOCK`] rows (192 rows
    /// at 4096 tokens per rank, one block a slot).
    pub fn deepseek_v3_natural(ranks: u32, tokens_per_rank: u64) -> Self {
        let shape = MoeShape { row_block: DEEPSEEK_V3_NATURAL_ROW_BLOCK, ..Self::deepseek_v3(ranks, tokens_per_rank) };
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
            wgrad_source_groups: default_wgrad_source_groups(ranks),
            routing: Routing::Balanced,
            dispatch: DispatchPrecision::Bf16,
            relay: false,
        }
    }

    /// The same layer whose weight-gradient tiles each sum all the rows an expert receives
    /// ([`MoeShape::rows_per_expert`]; at least one row block): one tile per expert and column
    /// block, so each weight gradient is written once instead of accumulated block by block.
    pub fn with_whole_expert_wgrad(self) -> Self {
        MoeShape { wgrad_rows: self.rows_per_expert().max(self.row_block), ..self }
    }

    /// The same layer whose weight gradients each sum an expert's rows in `groups` groups:
    /// under balanced routing of `rows_per_expert / groups` rows (at least one row block; `1`
    /// is [`MoeShape::with_whole_expert_wgrad`]), under natural routing of `ranks / groups`
    /// source ranks' slots ([`MoeShape::wgrad_source_groups`]). When a group is whole source
    /// ranks' rows the groups are summed in the order their rows arrive
    /// ([`MoeShape::wgrad_group`]). The backward refuses a count that does not split the rows
    /// into whole row blocks (balanced) or the ranks into whole groups (natural).
    pub fn with_wgrad_groups(self, groups: u64) -> Self {
        let rows = self.rows_per_expert() / groups.max(1);
        MoeShape { wgrad_rows: rows.max(self.row_block), wgrad_source_groups: groups, ..self }
    }

    /// [`MoeShape::tiny`] with natural routing at 1.5× the average load per (source rank,
    /// expert), rounded up to whole blocks.
    pub fn tiny_natural(ranks: u32) -> Self {
        let shape = Self::tiny(ranks);
        let capacity = shape.natural_capacity(1.5);
        shape.with_natural_routing(capacity)
    }

    /// Whether tokens reach experts by natural routing.
    pub fn natural(&self) -> bool {
        matches!(self.routing, Routing::Natural { .. })
    }

    /// The same layer with natural routing and `capacity` rows per (source rank, expert).
    pub fn with_natural_routing(self, capacity: u64) -> Self {
        MoeShape { routing: Routing::Natural { capacity }, ..self }
    }

    /// The same layer with a relay per rank before the gathering sums under natural routing
    /// ([`MoeShape::relay`]; no change under balanced routing, whose sums wait only for their
    /// own tokens' puts).
    pub fn with_relay(self) -> Self {
        MoeShape { relay: true, ..self }
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
    ///
    /// # Errors
    /// Every rule the shape breaks ([`ShapeError`]).
    pub fn validate(&self) -> Result<(), ShapeError> {
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
            return Err(self.breaks(vec![ShapeRule::PositiveSizes]));
        }
        let r = u64::from(self.ranks);
        let common = [
            (self.experts.is_multiple_of(r), ShapeRule::ExpertsPerRank),
            ((2 * self.intermediate).is_multiple_of(self.gmm1_cols), ShapeRule::Gmm1ColsDivide),
            (self.gmm1_cols.is_multiple_of(2), ShapeRule::Gmm1ColsEven),
            (self.hidden.is_multiple_of(self.gmm2_cols), ShapeRule::Gmm2ColsDivide),
            (self.tokens_per_rank.is_multiple_of(self.sum_rows), ShapeRule::SumRowsDivide),
        ];
        let routed = self.tokens_per_rank.checked_mul(self.top_k).and_then(|n| n.checked_mul(r));
        let by_routing: Vec<(bool, ShapeRule)> = match self.routing {
            Routing::Balanced => vec![
                (routed.is_some_and(|n| n.is_multiple_of(self.experts)), ShapeRule::RoutedRowsSplit),
                (self.rows_per_expert().is_multiple_of(r), ShapeRule::RowsPerExpertSplit),
                (
                    self.rows_per_source().is_multiple_of(self.row_block) && self.rows_per_source() > 0,
                    ShapeRule::RowsPerSourceBlocks,
                ),
            ],
            Routing::Natural { capacity } => vec![
                (routed.is_some(), ShapeRule::RoutedRowsOverflow),
                (self.top_k <= self.experts, ShapeRule::TopKExperts),
                (capacity > 0 && capacity.is_multiple_of(self.row_block), ShapeRule::CapacityBlocks),
                (self.experts.checked_mul(capacity).is_some_and(|n| n <= i32::MAX as u64), ShapeRule::SlotIndexFits),
            ],
        };
        let broken: Vec<ShapeRule> = common.iter().chain(&by_routing).filter(|c| !c.0).map(|c| c.1).collect();
        if broken.is_empty() { Ok(()) } else { Err(self.breaks(broken)) }
    }

    /// The error of this shape breaking `broken`.
    pub(super) fn breaks(&self, broken: Vec<ShapeRule>) -> ShapeError {
        ShapeError { shape: Box::new(self.clone()), broken }
    }

    /// Tile instances per rank.
    pub fn instances_per_rank(&self) -> u64 {
        let (r, e, c, b) = (u64::from(self.ranks), self.local_experts(), self.slot_rows(), self.row_block);
        let blocks = r * e * (c / b); // row blocks sent, and received, per rank
        // Natural routing: the counts' announce, one per destination, and the combine's relay.
        let natural = if self.natural() { r + u64::from(self.relay) } else { 0 };
        let quantised = if self.dispatch == DispatchPrecision::Int8 { blocks * 2 } else { 0 };
        natural
            + quantised
            + blocks * 2
            + blocks * (2 * self.intermediate / self.gmm1_cols) * 2
            + blocks * (self.hidden / self.gmm2_cols)
            + self.tokens_per_rank / self.sum_rows
    }
}
