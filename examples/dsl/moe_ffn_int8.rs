// The MoE-FFN layer of `hpmoe_host::moe` under balanced routing with **INT8 dispatch**
// (`MoeShape::with_dispatch(DispatchPrecision::Int8)`), as the body of a `#[taskflow]`: each
// block of routed rows is quantised on the AIV to INT8 with one FP32 scale per row, the INT8
// rows and their scales are put to the expert's rank, and each received block is dequantised
// on the AIV before GMM1 reads it; the rest is `moe_ffn.rs`'s layout: this file holds the
// tensors, the quantisation, the dispatch and the dequantisation, and `moe_ffn_tail.rs` the
// rest, from GMM1 on, so an includer includes both, this one first. It is the one copy of this layout,
// included at its own size by each taskflow that needs it:
//
//   examples/examples/moe_ffn_dsl.rs     DeepSeek-V3 at EP 8 (`MoeShape::deepseek_v3(8, 4096)`, INT8)
//   hpmoe-host/tests/host/dsl_exec.rs    `MoeShape::tiny(2)`, INT8
//
// The includer declares the shape, as for `moe_ffn.rs`: T (tokens per rank), HIDDEN, INTER
// (expert intermediate size, gate and up each), EXPERTS, TOP_K, B (row block), N1 (GMM1 output
// columns per tile: a [gate | up] pair), N2 (GMM2 output columns per tile) and SUM (token rows
// per weighted-sum tile).

const E: u64 = EXPERTS / RANKS; // local experts
const R: u64 = T * TOP_K * RANKS / EXPERTS; // rows per local expert, balanced routing
const S: u64 = R / RANKS; // rows one source rank sends to one expert
const SENT: u64 = RANKS * E * S; // rows each rank sends (T * TOP_K)

const XS: Tensor<Bf16> = input([SENT, HIDDEN]); // routed rows in send order (dst, e, slot)
const W13: Tensor<Bf16> = input([E, HIDDEN, 2 * INTER]);
const W2: Tensor<Bf16> = input([E, INTER, HIDDEN]);
const TOPK_WEIGHTS: Tensor<F32> = input([T, TOP_K]);
const XQ: Tensor<I8> = scratch([SENT, HIDDEN]); // the routed rows quantised, in send order
const XQ_SCALE: Tensor<F32> = scratch([SENT]); // one scale per quantised row
const RECV: Tensor<I8> = symmetric([E, R, HIDDEN]); // rows land grouped by source rank
const RECV_SCALE: Tensor<F32> = symmetric([E, R]); // their scales, beside them
const XIN: Tensor<Bf16> = scratch([E, R, HIDDEN]); // the received rows dequantised: GMM1's input
const GMM1_IN: Tensor<Bf16> = XIN; // the rows GMM1 multiplies (and dW13 = Xᵀ·dH reads)
const H: Tensor<Bf16> = scratch([E, R, 2 * INTER]);
const ACT: Tensor<Bf16> = scratch([E, R, INTER]);
const Y: Tensor<Bf16> = scratch([E, R, HIDDEN]);
const BACK: Tensor<Bf16> = symmetric([SENT, HIDDEN]);
const OUT: Tensor<Bf16> = output([T, HIDDEN]);

/// Quantises the block the dispatch tile of the same `(dst, e, b)` sends.
#[tile(aiv, grid(dst in 0..RANKS, e in 0..E, b in 0..S / B))]
fn quantize_block(dst: Idx, e: Idx, b: Idx) {
    let rows = (dst * E + e) * S + b * B;
    quantize(XS.slice(rows, B), XQ.slice(rows, B), XQ_SCALE.slice(rows, B));
}

/// Two puts: the INT8 rows (`HIDDEN` bytes a row) and their FP32 scales.
#[tile(aiv, grid(dst in 0..RANKS, e in 0..E, b in 0..S / B))]
fn dispatch(dst: Idx, e: Idx, b: Idx) {
    let rows = (dst * E + e) * S + b * B;
    let landing = RANK * S + b * B;
    put(XQ.slice(rows, B), RECV.on(dst).at(e).slice(landing, B));
    put(XQ_SCALE.slice(rows, B), RECV_SCALE.on(dst).at(e).slice(landing, B));
}

/// Waits only for the puts carrying its rows and their scales.
#[tile(aiv, grid(e in 0..E, m in 0..R / B))]
fn dequantize_block(e: Idx, m: Idx) {
    let rows = m * B;
    dequantize(RECV.at(e).slice(rows, B), RECV_SCALE.at(e).slice(rows, B), XIN.at(e).slice(rows, B));
}
