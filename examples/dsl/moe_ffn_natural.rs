// The MoE-FFN layer of `hpmoe_host::moe` under natural routing with capacity padding (the
// layout of `MoeShape::deepseek_v3_natural`), as the body of a `#[taskflow]`: each (source
// rank, expert) slot holds up to `C` rows, of which a run-time count is valid. Each rank first
// announces its counts to every rank; the tiles past a count do no work but still signal
// (`run_if_above`), and the weighted sum gathers every token's choices by slot from the
// combine buffer. This file holds the tensors, the announce and the dispatch;
// `moe_ffn_natural_tail.rs` (shared with the INT8-dispatch layout `moe_ffn_natural_int8.rs`) the
// rest, from GMM1 on, so an includer includes both, this one first. It is the one copy of this
// layout, included at its own size by each taskflow that needs it (`include!` in a taskflow
// body, see `hpmoe_core::syntax::include`):
//
//   examples/examples/moe_ffn_dsl.rs     DeepSeek-V3 at EP 8 (`MoeShape::deepseek_v3_natural(8, 4096)`)
//   hpmoe-host/tests/host/dsl_exec.rs    `MoeShape::tiny_natural(2)`
//   hpmoe-host/tests/host/dsl_natural_training.rs, examples/examples/moe_training_natural_dsl.rs
//                                        the training step's forward
//
// The includer declares the shape: T (tokens per rank), HIDDEN, INTER (expert intermediate
// size, gate and up each), EXPERTS, TOP_K, B (row block), C (capacity: rows per (source rank,
// expert) slot, whole blocks), N1 (GMM1 output columns per tile: a [gate | up] pair), N2 (GMM2
// output columns per tile) and SUM (token rows per weighted-sum tile).

const E: u64 = EXPERTS / RANKS; // local experts
const NB: u64 = C / B; // row blocks per slot

const XS: Tensor<Bf16> = input([EXPERTS * C, HIDDEN]); // slot (g, j) is row g * C + j; zero past the count
const W13: Tensor<Bf16> = input([E, HIDDEN, 2 * INTER]);
const W2: Tensor<Bf16> = input([E, INTER, HIDDEN]);
const TOPK_WEIGHTS: Tensor<F32> = input([T, TOP_K]);
const SEND_COUNTS: Tensor<I32> = input([EXPERTS]); // rows used per global expert (<= C)
const SLOT_OF: Tensor<I32> = input([T, TOP_K]); // row of XS (and BACK) of each choice, -1 if dropped
const RECV_COUNTS: Tensor<I32> = symmetric([RANKS, E]); // rows each source rank sent each local expert
const RECV: Tensor<Bf16> = symmetric([E, RANKS * C, HIDDEN]); // per expert, one slot per source rank
const GMM1_IN: Tensor<Bf16> = RECV; // the rows GMM1 multiplies (and dW13 = Xᵀ·dH reads): the received ones
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

#[tile(aiv, grid(dst in 0..RANKS, e in 0..E, b in 0..NB))]
fn dispatch(dst: Idx, e: Idx, b: Idx) {
    run_if_above(SEND_COUNTS.at(dst * E + e), b * B);
    put(XS.slice((dst * E + e) * C + b * B, B), RECV.on(dst).at(e).slice(RANK * C + b * B, B));
}
