// The backward of the MoE-FFN layer of `examples/dsl/moe_ffn_natural.rs` (natural routing with
// capacity padding), as items of a `#[taskflow]` body: the taskflow
// `hpmoe_host::moe::MoeShape::backward_taskflow` builds for a naturally routed shape (its module
// docs, "Natural routing"), tile by tile, in one kernel, from `combine_bwd` on. It is
// `moe_ffn_backward.rs` on the forward's run-time layout: every tile of a block of a (source
// rank, expert) slot is guarded by that slot's count, as the forward's are (`run_if_above`: past
// the count a tile does no work but still signals), the per-token tiles gather by `SLOT_OF`, and
// a weight gradient is summed by a chain of tiles per expert and column block, each link over
// the slots of one group of source ranks to their counts (summed in L0C on the device), the
// first written (`matmul_tn_slots`), the others added (`matmul_tn_slots_accumulate`), the groups
// in the order their rows arrive. Included by
//
//   hpmoe-host/tests/host/dsl_natural_training.rs   the backward alone (after
//                                              `moe_ffn_natural_backward_inputs.rs`) and the
//                                              training step (after `moe_ffn_natural.rs`), at
//                                              `MoeShape::tiny_natural(1 / 2 / 4)`
//   hpmoe-host/tests/host/dsl_int8_training.rs      both with INT8 dispatch, at `tiny_natural(2)`
//   examples/examples/moe_training_natural_dsl.rs   both at `MoeShape::deepseek_v3_natural(8, 4096)`
//
// which check it against the builder (and the tests run it against the plain-loop reference).
//
// The includer declares the forward's shape (T, HIDDEN, INTER, EXPERTS, TOP_K, B, C, N1, N2,
// SUM, as for `moe_ffn_natural.rs`), WB13, WB2 (gradient rows per weight-gradient op of
// dW13 and dW2: the largest divisor of HIDDEN, INTER up to 1024, what fits the AIC's L1 beside
// the other panel) and WG (in how many groups of source ranks a weight gradient is summed, a
// divisor of RANKS: `MoeShape::wgrad_source_groups`); the tensors the forward saves (W13, W2,
// TOPK_WEIGHTS, SEND_COUNTS, SLOT_OF, RECV_COUNTS, GMM1_IN — the rows GMM1 multiplied: an alias
// of RECV under BF16 dispatch, of the dequantised XIN under INT8 —, H, ACT, BACK, and the consts
// E, NB of `moe_ffn_natural.rs`), as inputs (`moe_ffn_natural_backward_inputs.rs`,
// `moe_ffn_natural_int8_backward_inputs.rs`) or as the forward's own; and the output gradient's
// first use, which differs between the two (the training step's waits for the forward's
// output, as a later layer's backward would), and DOUT_AFTER_FORWARD (1 in a training step,
// else 0: `weights_grad`, the gradient's other reader, then waits for the forward's output too):
//
//   const DOUT_AFTER_FORWARD: u64 = 0; // 1 in a training step
//   const DOUT: Tensor<Bf16> = input([T, HIDDEN]);
//   const CHOICE_OF: Tensor<I32> = input([EXPERTS * C]); // the choice each send slot row carries, -1: padding
//   const DBACK: Tensor<Bf16> = scratch([EXPERTS * C, HIDDEN]);
//   #[tile(aiv, grid(dst in 0..RANKS, e in 0..E, b in 0..NB))] // plus `after(weighted_sum)` in a training step
//   fn scale_dout(dst: Idx, e: Idx, b: Idx) {
//       let slot = (dst * E + e) * C + b * B;
//       run_if_above(SEND_COUNTS.at(dst * E + e), b * B);
//       gather_scale_rows_repeat(DOUT.whole(), CHOICE_OF.slice(slot, B), TOPK_WEIGHTS.whole(), DBACK.slice(slot, B));
//   }

const HALF: u64 = N1 / 2; // SwiGLU output columns per [gate | up] block
const WQ: u64 = RANKS / WG; // source ranks per weight-gradient group

// The gradients on their way, in the forward's slots.
const DY: Tensor<Bf16> = symmetric([E, RANKS * C, HIDDEN]);
const DA: Tensor<Bf16> = scratch([E, RANKS * C, INTER]);
const DH: Tensor<Bf16> = scratch([E, RANKS * C, 2 * INTER]);
const DXR: Tensor<Bf16> = scratch([E, RANKS * C, HIDDEN]);
const DXS: Tensor<Bf16> = symmetric([EXPERTS * C, HIDDEN]);
const DX: Tensor<Bf16> = output([T, HIDDEN]);
const DW13: Tensor<F32> = output([E, HIDDEN, 2 * INTER]);
const DW2: Tensor<F32> = output([E, INTER, HIDDEN]);
const D_WEIGHTS: Tensor<F32> = output([T, TOP_K]);

/// The reverse of the combine: each sent block's rows go to the rank owning their expert.
#[tile(aiv, grid(dst in 0..RANKS, e in 0..E, b in 0..NB))]
fn combine_bwd(dst: Idx, e: Idx, b: Idx) {
    run_if_above(SEND_COUNTS.at(dst * E + e), b * B);
    put(DBACK.slice((dst * E + e) * C + b * B, B), DY.on(dst).at(e).slice(RANK * C + b * B, B));
}

/// The routing weights' gradient: each token's output gradient dotted with each expert output,
/// wherever the routing put it (a dropped choice's is zero).
#[tile(aiv, grid(t in 0..T / SUM), when(DOUT_AFTER_FORWARD == 0))]
fn weights_grad(t: Idx) {
    gather_row_dot_topk(BACK.whole(), SLOT_OF.slice(t * SUM, SUM), DOUT.slice(t * SUM, SUM), D_WEIGHTS.slice(t * SUM, SUM));
}

/// The same in a training step, once the rank's forward output is complete (the output
/// gradient comes from it).
#[tile(aiv, grid(t in 0..T / SUM), after(weighted_sum), when(DOUT_AFTER_FORWARD == 1))]
fn weights_grad(t: Idx) {
    gather_row_dot_topk(BACK.whole(), SLOT_OF.slice(t * SUM, SUM), DOUT.slice(t * SUM, SUM), D_WEIGHTS.slice(t * SUM, SUM));
}

/// dA = dY · W2ᵀ, in the column blocks SwiGLU's gradient reads.
#[tile(aic, grid(e in 0..E, src in 0..RANKS, b in 0..NB, n in 0..2 * INTER / N1))]
fn gmm2_dgrad(e: Idx, src: Idx, b: Idx, n: Idx) {
    let rows = src * C + b * B;
    run_if_above(RECV_COUNTS.at(src).at(e), b * B);
    matmul_nt(DY.at(e).slice(rows, B), W2.at(e).slice(n * HALF, HALF), DA.at(e).slice(rows, B).slice(n * HALF, HALF));
}

/// dW2 = Aᵀ · dY over the rows of the first group of WQ source ranks, once they are in: one FP32
/// sum over its slots to their counts, sources and rows ascending (the on-chip sum), written
/// (+0 where the group sent no row), one op per WB2 gradient rows. The groups go in arrival
/// order, the group below the rank's own first, its own last (`MoeShape::wgrad_group`): the
/// group at chain step m is `(RANK / WQ - 1 - m) mod WG`, written `(WG - 1) * (m + 1)` for
/// `-1 - m` (`% 1` with one group: the whole expert) ...
#[tile(aic, grid(e in 0..E, n in 0..HIDDEN / N2))]
fn gmm2_wgrad(e: Idx, n: Idx) {
    let group = (RANK / WQ + (WG - 1)) % WG;
    for p in 0..INTER / WB2 {
        matmul_tn_slots(
            ACT.at(e).slice(group * (WQ * C), WQ * C).slice(p * WB2, WB2),
            DY.at(e).slice(group * (WQ * C), WQ * C).slice(n * N2, N2),
            DW2.at(e).slice(p * WB2, WB2).slice(n * N2, N2),
            RECV_COUNTS.slice(group * WQ, WQ).slice(e, 1),
        );
    }
}

/// ... plus each later group's sum (step m + 1), added in chain order (none with one group).
#[tile(
    aic,
    grid(e in 0..E, m in 0..WG - 1, n in 0..HIDDEN / N2),
    after(gmm2_wgrad_acc(e, m - 1, n)),
    when(WG > 1)
)]
fn gmm2_wgrad_acc(e: Idx, m: Idx, n: Idx) {
    let group = (RANK / WQ + (WG - 1) * (m + 2)) % WG;
    for p in 0..INTER / WB2 {
        matmul_tn_slots_accumulate(
            ACT.at(e).slice(group * (WQ * C), WQ * C).slice(p * WB2, WB2),
            DY.at(e).slice(group * (WQ * C), WQ * C).slice(n * N2, N2),
            DW2.at(e).slice(p * WB2, WB2).slice(n * N2, N2),
            RECV_COUNTS.slice(group * WQ, WQ).slice(e, 1),
        );
    }
}

/// dH from the saved [gate | up] and dA; sigma(gate) is recomputed.
#[tile(aiv, grid(e in 0..E, src in 0..RANKS, b in 0..NB, n in 0..2 * INTER / N1))]
fn swiglu_bwd(e: Idx, src: Idx, b: Idx, n: Idx) {
    let rows = src * C + b * B;
    run_if_above(RECV_COUNTS.at(src).at(e), b * B);
    swiglu_backward(
        H.at(e).slice(rows, B).slice(n * N1, N1),
        DA.at(e).slice(rows, B).slice(n * HALF, HALF),
        DH.at(e).slice(rows, B).slice(n * N1, N1),
    );
}

/// dX rows = dH · W13ᵀ.
#[tile(aic, grid(e in 0..E, src in 0..RANKS, b in 0..NB, n in 0..HIDDEN / N2))]
fn gmm1_dgrad(e: Idx, src: Idx, b: Idx, n: Idx) {
    let rows = src * C + b * B;
    run_if_above(RECV_COUNTS.at(src).at(e), b * B);
    matmul_nt(DH.at(e).slice(rows, B), W13.at(e).slice(n * N2, N2), DXR.at(e).slice(rows, B).slice(n * N2, N2));
}

/// dW13 = Xᵀ · dH over the same groups in the same order: the first written ...
#[tile(aic, grid(e in 0..E, n in 0..2 * INTER / N1))]
fn gmm1_wgrad(e: Idx, n: Idx) {
    let group = (RANK / WQ + (WG - 1)) % WG;
    for p in 0..HIDDEN / WB13 {
        matmul_tn_slots(
            GMM1_IN.at(e).slice(group * (WQ * C), WQ * C).slice(p * WB13, WB13),
            DH.at(e).slice(group * (WQ * C), WQ * C).slice(n * N1, N1),
            DW13.at(e).slice(p * WB13, WB13).slice(n * N1, N1),
            RECV_COUNTS.slice(group * WQ, WQ).slice(e, 1),
        );
    }
}

/// ... the others added.
#[tile(
    aic,
    grid(e in 0..E, m in 0..WG - 1, n in 0..2 * INTER / N1),
    after(gmm1_wgrad_acc(e, m - 1, n)),
    when(WG > 1)
)]
fn gmm1_wgrad_acc(e: Idx, m: Idx, n: Idx) {
    let group = (RANK / WQ + (WG - 1) * (m + 2)) % WG;
    for p in 0..HIDDEN / WB13 {
        matmul_tn_slots_accumulate(
            GMM1_IN.at(e).slice(group * (WQ * C), WQ * C).slice(p * WB13, WB13),
            DH.at(e).slice(group * (WQ * C), WQ * C).slice(n * N1, N1),
            DW13.at(e).slice(p * WB13, WB13).slice(n * N1, N1),
            RECV_COUNTS.slice(group * WQ, WQ).slice(e, 1),
        );
    }
}

/// The reverse of the dispatch: each received block's gradient back to its send slot on its
/// source rank.
#[tile(aiv, grid(src in 0..RANKS, e in 0..E, b in 0..NB))]
fn dispatch_bwd(src: Idx, e: Idx, b: Idx) {
    run_if_above(RECV_COUNTS.at(src).at(e), b * B);
    put(DXR.at(e).slice(src * C + b * B, B), DXS.on(src).slice((RANK * E + e) * C + b * B, B));
}

/// Each token's gradient: its choices' rows, wherever the routing put them, summed in choice
/// order (a dropped choice adds nothing).
#[tile(aiv, grid(t in 0..T / SUM))]
fn sum_bwd(t: Idx) {
    gather_sum_topk(DXS.whole(), SLOT_OF.slice(t * SUM, SUM), DX.slice(t * SUM, SUM));
}
