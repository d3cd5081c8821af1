// The MoE-FFN layer of `hpmoe_host::moe` under balanced routing, as the body of a `#[taskflow]`:
// dispatch (AIV puts) → GMM1 (AIC) → SwiGLU (AIV) → GMM2 (AIC) → combine (AIV puts) → weighted
// sum (AIV), tile by tile, in one kernel. This file holds the tensors and the dispatch;
// `moe_ffn_tail.rs` (shared with the INT8-dispatch layout `moe_ffn_int8.rs`) the rest, from GMM1
// on, so an includer includes both, this one first. It is the one copy of this layout, included at its
// own size by each taskflow that needs it (`include!` in a taskflow body, see
// `hpmoe_core::syntax::include`):
//
//   examples/examples/moe_ffn_dsl.rs     DeepSeek-V3 at EP 8 (`MoeShape::deepseek_v3(8, 4096)`)
//   ui-tests/ui/pass/moe_ffn.rs          `MoeShape::tiny(2)`
//
// The includer declares the shape: T (tokens per rank), HIDDEN, INTER (expert intermediate
// size, gate and up each), EXPERTS, TOP_K, B (row block), N1 (GMM1 output columns per tile: a
// [gate | up] pair), N2 (GMM2 output columns per tile) and SUM (token rows per weighted-sum
// tile).

const E: u64 = EXPERTS / RANKS; // local experts
const R: u64 = T * TOP_K * RANKS / EXPERTS; // rows per local expert, balanced routing
const S: u64 = R / RANKS; // rows one source rank sends to one expert
const SENT: u64 = RANKS * E * S; // rows each rank sends (T * TOP_K)

const XS: Tensor<Bf16> = input([SENT, HIDDEN]); // routed rows in send order (dst, e, slot)
const W13: Tensor<Bf16> = input([E, HIDDEN, 2 * INTER]);
const W2: Tensor<Bf16> = input([E, INTER, HIDDEN]);
const TOPK_WEIGHTS: Tensor<F32> = input([T, TOP_K]);
const RECV: Tensor<Bf16> = symmetric([E, R, HIDDEN]); // rows land grouped by source rank
const GMM1_IN: Tensor<Bf16> = RECV; // the rows GMM1 multiplies (and dW13 = Xᵀ·dH reads): the received ones
const H: Tensor<Bf16> = scratch([E, R, 2 * INTER]);
const ACT: Tensor<Bf16> = scratch([E, R, INTER]);
const Y: Tensor<Bf16> = scratch([E, R, HIDDEN]);
const BACK: Tensor<Bf16> = symmetric([SENT, HIDDEN]);
const OUT: Tensor<Bf16> = output([T, HIDDEN]);

#[tile(aiv, grid(dst in 0..RANKS, e in 0..E, b in 0..S / B))]
fn dispatch(dst: Idx, e: Idx, b: Idx) {
    put(XS.slice((dst * E + e) * S + b * B, B), RECV.on(dst).at(e).slice(RANK * S + b * B, B));
}
