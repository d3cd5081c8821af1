// The backward of the MoE-FFN layer of `examples/dsl/moe_ffn.rs` under balanced routing, as items
// of a `#[taskflow]` body: the taskflow `hpmoe_host::moe::MoeShape::backward_taskflow` builds
// (its module docs describe every family), tile by tile, in one kernel, from `combine_bwd` on.
// Included by
//
//   hpmoe-host/tests/host/dsl_backward.rs   the backward alone, after `moe_ffn_backward_inputs.rs`,
//                                      at the tiny size (two weight-gradient groups, and one)
//   hpmoe-host/tests/host/dsl_training.rs   the training step, after `moe_ffn.rs` (the forward),
//                                      at the tiny size
//   hpmoe-host/tests/host/dsl_int8_training.rs   both with INT8 dispatch (after
//                                      `moe_ffn_int8_backward_inputs.rs`, or the forward
//                                      `moe_ffn_int8.rs`), at the tiny size
//   examples/examples/moe_training_dsl.rs   all four at DeepSeek-V3 EP 8 (one group)
//
// which each check it against the builder (and the tests run it against the plain-loop
// reference).
//
// The includer declares the forward's shape (T, HIDDEN, INTER, EXPERTS, TOP_K, B, N1, N2, SUM,
// as for `moe_ffn.rs`), W (received rows per weight-gradient tile, a multiple of B dividing the
// rows per expert R: the first W rows are written, each later group of W added in a chain; with
// W = R, the DeepSeek-V3 shapes' whole-expert tiles, there is no later group and the `*_acc`
// chains do not exist, `when(R > W)`) and WB13, WB2 (gradient rows per weight-gradient tile of
// dW13 and dW2: at most 1024, what fits the AIC's L1 beside the other panel); the tensors
// the forward saves (W13, W2, TOPK_WEIGHTS, GMM1_IN — the rows GMM1 multiplied: an alias of
// RECV under BF16 dispatch, of the dequantised XIN under INT8 —, H, ACT, BACK, and the consts E,
// R, S, SENT of `moe_ffn.rs`), as inputs (`moe_ffn_backward_inputs.rs`,
// `moe_ffn_int8_backward_inputs.rs`) or as the forward's own; and the
// output gradient's first use, which differs between the two (the training step's waits for
// the forward's output, as a later layer's backward would), and DOUT_AFTER_FORWARD (1 in a
// training step, else 0: `weights_grad`, the gradient's other reader, then waits for the
// forward's output too):
//
//   const DOUT_AFTER_FORWARD: u64 = 0; // 1 in a training step
//   const DOUT: Tensor<Bf16> = input([T, HIDDEN]);
//   const DBACK: Tensor<Bf16> = scratch([SENT, HIDDEN]);
//   #[tile(aiv, grid(t in 0..T / SUM))] // plus `after(weighted_sum)` in a training step
//   fn scale_dout(t: Idx) {
//       scale_rows_repeat(DOUT.slice(t * SUM, SUM), TOPK_WEIGHTS.slice(t * SUM, SUM), DBACK.slice(t * (SUM * TOP_K), SUM * TOP_K));
//   }

const HALF: u64 = N1 / 2; // SwiGLU output columns per [gate | up] block

// The gradients on their way.
const DY: Tensor<Bf16> = symmetric([E, R, HIDDEN]);
const DA: Tensor<Bf16> = scratch([E, R, INTER]);
const DH: Tensor<Bf16> = scratch([E, R, 2 * INTER]);
const DXR: Tensor<Bf16> = scratch([E, R, HIDDEN]);
const DXS: Tensor<Bf16> = symmetric([SENT, HIDDEN]);
const DX: Tensor<Bf16> = output([T, HIDDEN]);
const DW13: Tensor<F32> = output([E, HIDDEN, 2 * INTER]);
const DW2: Tensor<F32> = output([E, INTER, HIDDEN]);
const D_WEIGHTS: Tensor<F32> = output([T, TOP_K]);

/// The reverse of the combine: the rows go to the rank owning their expert.
#[tile(aiv, grid(dst in 0..RANKS, e in 0..E, b in 0..S / B))]
fn combine_bwd(dst: Idx, e: Idx, b: Idx) {
    put(DBACK.slice((dst * E + e) * S + b * B, B), DY.on(dst).at(e).slice(RANK * S + b * B, B));
}

/// The routing weights' gradient: each token's output gradient dotted with each expert output.
#[tile(aiv, grid(t in 0..T / SUM), when(DOUT_AFTER_FORWARD == 0))]
fn weights_grad(t: Idx) {
    row_dot_topk(DOUT.slice(t * SUM, SUM), BACK.slice(t * (SUM * TOP_K), SUM * TOP_K), D_WEIGHTS.slice(t * SUM, SUM));
}

/// The same in a training step, once the rank's forward output is complete (the output
/// gradient comes from it).
#[tile(aiv, grid(t in 0..T / SUM), after(weighted_sum), when(DOUT_AFTER_FORWARD == 1))]
fn weights_grad(t: Idx) {
    row_dot_topk(DOUT.slice(t * SUM, SUM), BACK.slice(t * (SUM * TOP_K), SUM * TOP_K), D_WEIGHTS.slice(t * SUM, SUM));
}

/// dA = dY · W2ᵀ, in the column blocks SwiGLU's gradient reads.
#[tile(aic, grid(e in 0..E, m in 0..R / B, n in 0..2 * INTER / N1))]
fn gmm2_dgrad(e: Idx, m: Idx, n: Idx) {
    matmul_nt(DY.at(e).slice(m * B, B), W2.at(e).slice(n * HALF, HALF), DA.at(e).slice(m * B, B).slice(n * HALF, HALF));
}

/// dW2 = Aᵀ · dY over an expert's first W rows ...
#[tile(aic, grid(e in 0..E, p in 0..INTER / WB2, n in 0..HIDDEN / N2))]
fn gmm2_wgrad(e: Idx, p: Idx, n: Idx) {
    matmul_tn(
        ACT.at(e).slice(0, W).slice(p * WB2, WB2),
        DY.at(e).slice(0, W).slice(n * N2, N2),
        DW2.at(e).slice(p * WB2, WB2).slice(n * N2, N2),
    );
}

/// ... plus each later group of W rows, in order: one chain per gradient tile (none with one group).
#[tile(
    aic,
    grid(e in 0..E, m in 0..R / W - 1, p in 0..INTER / WB2, n in 0..HIDDEN / N2),
    after(gmm2_wgrad_acc(e, m - 1, p, n)),
    when(R > W)
)]
fn gmm2_wgrad_acc(e: Idx, m: Idx, p: Idx, n: Idx) {
    matmul_tn_accumulate(
        ACT.at(e).slice((m + 1) * W, W).slice(p * WB2, WB2),
        DY.at(e).slice((m + 1) * W, W).slice(n * N2, N2),
        DW2.at(e).slice(p * WB2, WB2).slice(n * N2, N2),
    );
}

/// dH from the saved [gate | up] and dA; sigma(gate) is recomputed.
#[tile(aiv, grid(e in 0..E, m in 0..R / B, n in 0..2 * INTER / N1))]
fn swiglu_bwd(e: Idx, m: Idx, n: Idx) {
    let rows = m * B;
    swiglu_backward(
        H.at(e).slice(rows, B).slice(n * N1, N1),
        DA.at(e).slice(rows, B).slice(n * HALF, HALF),
        DH.at(e).slice(rows, B).slice(n * N1, N1),
    );
}

/// dX rows = dH · W13ᵀ.
#[tile(aic, grid(e in 0..E, m in 0..R / B, n in 0..HIDDEN / N2))]
fn gmm1_dgrad(e: Idx, m: Idx, n: Idx) {
    matmul_nt(DH.at(e).slice(m * B, B), W13.at(e).slice(n * N2, N2), DXR.at(e).slice(m * B, B).slice(n * N2, N2));
}

/// dW13 = Xᵀ · dH over an expert's first W rows ...
#[tile(aic, grid(e in 0..E, p in 0..HIDDEN / WB13, n in 0..2 * INTER / N1))]
fn gmm1_wgrad(e: Idx, p: Idx, n: Idx) {
    matmul_tn(
        GMM1_IN.at(e).slice(0, W).slice(p * WB13, WB13),
        DH.at(e).slice(0, W).slice(n * N1, N1),
        DW13.at(e).slice(p * WB13, WB13).slice(n * N1, N1),
    );
}

/// ... plus each later group of W rows, in order.
#[tile(
    aic,
    grid(e in 0..E, m in 0..R / W - 1, p in 0..HIDDEN / WB13, n in 0..2 * INTER / N1),
    after(gmm1_wgrad_acc(e, m - 1, p, n)),
    when(R > W)
)]
fn gmm1_wgrad_acc(e: Idx, m: Idx, p: Idx, n: Idx) {
    matmul_tn_accumulate(
        GMM1_IN.at(e).slice((m + 1) * W, W).slice(p * WB13, WB13),
        DH.at(e).slice((m + 1) * W, W).slice(n * N1, N1),
        DW13.at(e).slice(p * WB13, WB13).slice(n * N1, N1),
    );
}

/// The reverse of the dispatch: each row's gradient back to its send slot on its source rank.
#[tile(aiv, grid(src in 0..RANKS, e in 0..E, b in 0..S / B))]
fn dispatch_bwd(src: Idx, e: Idx, b: Idx) {
    put(DXR.at(e).slice(src * S + b * B, B), DXS.on(src).slice((RANK * E + e) * S + b * B, B));
}

/// Each token's gradient: its TOP_K rows summed in choice order.
#[tile(aiv, grid(t in 0..T / SUM))]
fn sum_bwd(t: Idx) {
    sum_topk(DXS.slice(t * (SUM * TOP_K), SUM * TOP_K), DX.slice(t * SUM, SUM));
}
