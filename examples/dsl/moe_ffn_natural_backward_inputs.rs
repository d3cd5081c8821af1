// What the MoE-FFN backward of `moe_ffn_natural_backward.rs` reads from the forward, as inputs
// of a backward-alone `#[taskflow]` (natural routing with capacity padding): the weights, the
// routing weights, the run-time routing (the send counts, each choice's slot, and the counts
// the forward's `announce` left on this rank) and the four activations the forward of
// `moe_ffn_natural.rs` saves. A training step includes `moe_ffn_natural.rs` instead, whose own
// tensors of these names the backward then reads. Included by
// `hpmoe-host/tests/host/dsl_natural_training.rs` and `examples/examples/moe_training_natural_dsl.rs`;
// under INT8 dispatch the backward reads the dequantised rows instead
// (`moe_ffn_natural_int8_backward_inputs.rs`).
//
// The includer declares the forward's shape (T, HIDDEN, INTER, EXPERTS, TOP_K, B, C, as for
// `moe_ffn_natural.rs`).

const E: u64 = EXPERTS / RANKS; // local experts
const NB: u64 = C / B; // row blocks per slot

const W13: Tensor<Bf16> = input([E, HIDDEN, 2 * INTER]);
const W2: Tensor<Bf16> = input([E, INTER, HIDDEN]);
const TOPK_WEIGHTS: Tensor<F32> = input([T, TOP_K]);
const SEND_COUNTS: Tensor<I32> = input([EXPERTS]); // rows used per global expert (<= C)
const SLOT_OF: Tensor<I32> = input([T, TOP_K]); // row of BACK of each choice, -1 if dropped
const RECV_COUNTS: Tensor<I32> = input([RANKS, E]); // rows each source rank sent each local expert
// What the forward saved, one slot of C rows per (source rank, expert); rows past a count unset.
const RECV: Tensor<Bf16> = input([E, RANKS * C, HIDDEN]); // the dispatched rows X
const GMM1_IN: Tensor<Bf16> = RECV; // the rows GMM1 multiplied, which dW13 = Xᵀ·dH reads
const H: Tensor<Bf16> = input([E, RANKS * C, 2 * INTER]); // GMM1's [gate | up]
const ACT: Tensor<Bf16> = input([E, RANKS * C, INTER]); // SwiGLU's output A
const BACK: Tensor<Bf16> = input([EXPERTS * C, HIDDEN]); // the expert outputs Y, in the send slots
