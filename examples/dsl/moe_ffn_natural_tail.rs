// The back half of the naturally routed MoE-FFN layer, shared by `moe_ffn_natural.rs` (BF16
// dispatch) and `moe_ffn_natural_int8.rs` (INT8 dispatch): GMM1 (AIC) → SwiGLU (AIV) → GMM2
// (AIC) → combine (AIV puts) → weighted sum (AIV), every tile of a slot's block guarded by the
// slot's run-time count. An includer includes it right after one of those two files, which
// declare every tensor it names (`GMM1_IN`, the alias of the rows GMM1 multiplies — `RECV` or
// the dequantised `XIN` —, `W13`, `W2`, `RECV_COUNTS`, `H`, `ACT`, `Y`, `BACK`, `OUT`,
// `SLOT_OF`, `TOPK_WEIGHTS`) and the shape consts.

/// Waits for the count and for the rows it multiplies: the put carrying them (BF16 dispatch), or
/// their dequantisation (INT8 dispatch); skipped past the count.
#[tile(aic, grid(e in 0..E, src in 0..RANKS, b in 0..NB, n in 0..2 * INTER / N1))]
fn gmm1(e: Idx, src: Idx, b: Idx, n: Idx) {
    let rows = src * C + b * B;
    run_if_above(RECV_COUNTS.at(src).at(e), b * B);
    matmul(GMM1_IN.at(e).slice(rows, B), W13.at(e).all().slice(n * N1, N1), H.at(e).slice(rows, B).slice(n * N1, N1));
}

#[tile(aiv, grid(e in 0..E, src in 0..RANKS, b in 0..NB, n in 0..2 * INTER / N1))]
fn activation(e: Idx, src: Idx, b: Idx, n: Idx) {
    let rows = src * C + b * B;
    run_if_above(RECV_COUNTS.at(src).at(e), b * B);
    swiglu(H.at(e).slice(rows, B).slice(n * N1, N1), ACT.at(e).slice(rows, B).slice(n * (N1 / 2), N1 / 2));
}

#[tile(aic, grid(e in 0..E, src in 0..RANKS, b in 0..NB, n in 0..HIDDEN / N2))]
fn gmm2(e: Idx, src: Idx, b: Idx, n: Idx) {
    let rows = src * C + b * B;
    run_if_above(RECV_COUNTS.at(src).at(e), b * B);
    matmul(ACT.at(e).slice(rows, B), W2.at(e).all().slice(n * N2, N2), Y.at(e).slice(rows, B).slice(n * N2, N2));
}

/// Sends the results back into the sender's slots.
#[tile(aiv, grid(src in 0..RANKS, e in 0..E, b in 0..NB))]
fn combine(src: Idx, e: Idx, b: Idx) {
    run_if_above(RECV_COUNTS.at(src).at(e), b * B);
    put(Y.at(e).slice(src * C + b * B, B), BACK.on(src).slice((RANK * E + e) * C + b * B, B));
}

/// Reads all of `BACK` (the slots its tokens use are known only at run time), so it waits
/// for every combine put landing on this rank.
#[tile(aiv, grid(t in 0..T / SUM))]
fn weighted_sum(t: Idx) {
    let rows = OUT.slice(t * SUM, SUM);
    zero(rows);
    gather_weighted_accumulate(BACK.whole(), SLOT_OF.slice(t * SUM, SUM), TOPK_WEIGHTS.slice(t * SUM, SUM), rows);
}
