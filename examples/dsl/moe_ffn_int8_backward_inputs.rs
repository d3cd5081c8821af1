// What the MoE-FFN backward of `moe_ffn_backward.rs` reads from the forward under balanced routing
// with INT8 dispatch (`moe_ffn_int8.rs`), as inputs of a backward-alone `#[taskflow]`: those of
// `moe_ffn_backward_inputs.rs`, except that GMM1 multiplied the dequantised rows `XIN` (the
// received `RECV` holds INT8 rows), so those are what the forward saves and dW13 = Xᵀ·dH reads
// (`MoeShape::gmm1_input_name`). A training step includes `moe_ffn_int8.rs` instead. Included by
// `hpmoe-host/tests/host/dsl_int8_training.rs` and `examples/examples/moe_training_dsl.rs`.
//
// The includer declares the forward's shape (T, HIDDEN, INTER, EXPERTS, TOP_K, as for
// `moe_ffn.rs`).

const E: u64 = EXPERTS / RANKS; // local experts
const R: u64 = T * TOP_K * RANKS / EXPERTS; // rows per local expert, balanced routing
const S: u64 = R / RANKS; // rows one source rank sends to one expert
const SENT: u64 = RANKS * E * S; // rows each rank sends (T * TOP_K)

// What the forward saved.
const W13: Tensor<Bf16> = input([E, HIDDEN, 2 * INTER]);
const W2: Tensor<Bf16> = input([E, INTER, HIDDEN]);
const TOPK_WEIGHTS: Tensor<F32> = input([T, TOP_K]);
const XIN: Tensor<Bf16> = input([E, R, HIDDEN]); // the dispatched rows, dequantised: X
const GMM1_IN: Tensor<Bf16> = XIN; // the rows GMM1 multiplied, which dW13 = Xᵀ·dH reads
const H: Tensor<Bf16> = input([E, R, 2 * INTER]); // GMM1's [gate | up]
const ACT: Tensor<Bf16> = input([E, R, INTER]); // SwiGLU's output A
const BACK: Tensor<Bf16> = input([SENT, HIDDEN]); // the expert outputs Y, in send order
