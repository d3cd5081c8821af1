// The MoE-FFN layer of `hpmoe_host::moe` under natural routing with capacity padding and **INT8
// dispatch** (`MoeShape::deepseek_v3_natural(..).with_dispatch(DispatchPrecision::Int8)`), as the
// body of a `#[taskflow]`: `moe_ffn_natural.rs`'s layout, each sent block of a slot quantised on
// the AIV to INT8 with one FP32 scale per row before its two puts (rows, then scales), and each
// received block dequantised on the AIV before GMM1 reads it — both guarded by the slot's
// run-time count like the dispatch and GMM1. This file holds the tensors, the announce, the
// quantisation, the dispatch and the dequantisation; `moe_ffn_natural_tail.rs` the rest, from
// GMM1 on, so an includer includes both, this one first. Included by
//
//   examples/examples/moe_ffn_dsl.rs     DeepSeek-V3 at EP 8 (`deepseek_v3_natural(8, 4096)`, INT8)
//   hpmoe-host/tests/host/dsl_int8_training.rs   `MoeShape::tiny_natural(2)`, INT8: the forward and
//                                        the training step's forward
//
// The includer declares the shape, as for `moe_ffn_natural.rs`: T, HIDDEN, INTER, EXPERTS,
// TOP_K, B, C, N1, N2 and SUM.

const E: u64 = EXPERTS / RANKS; // local experts
const NB: u64 = C / B; // row blocks per slot

const XS: Tensor<Bf16> = input([EXPERTS * C, HIDDEN]); // slot (g, j) is row g * C + j; zero past the count
const W13: Tensor<Bf16> = input([E, HIDDEN, 2 * INTER]);
const W2: Tensor<Bf16> = input([E, INTER, HIDDEN]);
const TOPK_WEIGHTS: Tensor<F32> = input([T, TOP_K]);
const SEND_COUNTS: Tensor<I32> = input([EXPERTS]); // rows used per global expert (<= C)
const SLOT_OF: Tensor<I32> = input([T, TOP_K]); // row of XS (and BACK) of each choice, -1 if dropped
const RECV_COUNTS: Tensor<I32> = symmetric([RANKS, E]); // rows each source rank sent each local expert
const XQ: Tensor<I8> = scratch([EXPERTS * C, HIDDEN]); // the sent rows quantised, in the slots of XS
const XQ_SCALE: Tensor<F32> = scratch([EXPERTS * C]); // one scale per quantised row
const RECV: Tensor<I8> = symmetric([E, RANKS * C, HIDDEN]); // per expert, one slot per source rank
const RECV_SCALE: Tensor<F32> = symmetric([E, RANKS * C]); // their scales, beside them
const XIN: Tensor<Bf16> = scratch([E, RANKS * C, HIDDEN]); // the received rows dequantised: GMM1's input
const GMM1_IN: Tensor<Bf16> = XIN; // the rows GMM1 multiplies (and dW13 = Xᵀ·dH reads)
const H: Tensor<Bf16> = scratch([E, RANKS * C, 2 * INTER]);
const ACT: Tensor<Bf16> = scratch([E, RANKS * C, INTER]);
const Y: Tensor<Bf16> = scratch([E, RANKS * C, HIDDEN]);
const BACK: Tensor<Bf16> = symmetric([EXPERTS * C, HIDDEN]); // results, in the slots of XS
const OUT: Tensor<Bf16> = output([T, HIDDEN]);

/// Tells every rank how many rows it will receive for each of its experts.
#[tile(aiv, grid(dst in 0..RANKS))]
fn announce(dst: Idx) {
    put(SEND_COUNTS.slice(dst * E, E), RECV_COUNTS.on(dst).at(RANK));
}

/// Quantises the block the dispatch tile of the same `(dst, e, b)` sends; skipped past the count.
#[tile(aiv, grid(dst in 0..RANKS, e in 0..E, b in 0..NB))]
fn quantize_block(dst: Idx, e: Idx, b: Idx) {
    let rows = (dst * E + e) * C + b * B;
    run_if_above(SEND_COUNTS.at(dst * E + e), b * B);
    quantize(XS.slice(rows, B), XQ.slice(rows, B), XQ_SCALE.slice(rows, B));
}

/// Two puts: the INT8 rows (`HIDDEN` bytes a row) and their FP32 scales.
#[tile(aiv, grid(dst in 0..RANKS, e in 0..E, b in 0..NB))]
fn dispatch(dst: Idx, e: Idx, b: Idx) {
    let rows = (dst * E + e) * C + b * B;
    let landing = RANK * C + b * B;
    run_if_above(SEND_COUNTS.at(dst * E + e), b * B);
    put(XQ.slice(rows, B), RECV.on(dst).at(e).slice(landing, B));
    put(XQ_SCALE.slice(rows, B), RECV_SCALE.on(dst).at(e).slice(landing, B));
}

/// Waits for the count and for the put carrying its rows and their scales; skipped past the count.
#[tile(aiv, grid(e in 0..E, src in 0..RANKS, b in 0..NB))]
fn dequantize_block(e: Idx, src: Idx, b: Idx) {
    let rows = src * C + b * B;
    run_if_above(RECV_COUNTS.at(src).at(e), b * B);
    dequantize(RECV.at(e).slice(rows, B), RECV_SCALE.at(e).slice(rows, B), XIN.at(e).slice(rows, B));
}
