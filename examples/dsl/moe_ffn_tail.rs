// The back half of the balanced MoE-FFN layer, shared by `moe_ffn.rs` (BF16 dispatch) and
// `moe_ffn_int8.rs` (INT8 dispatch): GMM1 (AIC) → SwiGLU (AIV) → GMM2 (AIC) → combine (AIV
// puts) → weighted sum (AIV). An includer includes it right after one of those two files, which
// declare every tensor it names (`GMM1_IN`, the alias of the rows GMM1 multiplies — `RECV` or
// the dequantised `XIN` —, `W13`, `W2`, `H`, `ACT`, `Y`, `BACK`, `OUT`, `TOPK_WEIGHTS`) and the
// shape consts.

/// Waits only for the rows it multiplies: the put carrying them (BF16 dispatch), or their
/// dequantisation (INT8 dispatch).
#[tile(aic, grid(e in 0..E, m in 0..R / B, n in 0..2 * INTER / N1))]
fn gmm1(e: Idx, m: Idx, n: Idx) {
    matmul(
        GMM1_IN.at(e).slice(m * B, B),
        W13.at(e).all().slice(n * N1, N1),
        H.at(e).slice(m * B, B).slice(n * N1, N1),
    );
}

#[tile(aiv, grid(e in 0..E, m in 0..R / B, n in 0..2 * INTER / N1))]
fn activation(e: Idx, m: Idx, n: Idx) {
    let rows = m * B;
    swiglu(H.at(e).slice(rows, B).slice(n * N1, N1), ACT.at(e).slice(rows, B).slice(n * (N1 / 2), N1 / 2));
}

#[tile(aic, grid(e in 0..E, m in 0..R / B, n in 0..HIDDEN / N2))]
fn gmm2(e: Idx, m: Idx, n: Idx) {
    matmul(ACT.at(e).slice(m * B, B), W2.at(e).all().slice(n * N2, N2), Y.at(e).slice(m * B, B).slice(n * N2, N2));
}

#[tile(aiv, grid(src in 0..RANKS, e in 0..E, b in 0..S / B))]
fn combine(src: Idx, e: Idx, b: Idx) {
    put(Y.at(e).slice(src * S + b * B, B), BACK.on(src).slice((RANK * E + e) * S + b * B, B));
}

/// Token t's top-k rows are slots t·TOP_K .. t·TOP_K + TOP_K of `BACK`, in choice order.
#[tile(aiv, grid(t in 0..T / SUM))]
fn weighted_sum(t: Idx) {
    let rows = OUT.slice(t * SUM, SUM);
    zero(rows);
    weighted_accumulate(BACK.slice(t * (SUM * TOP_K), SUM * TOP_K), TOPK_WEIGHTS.slice(t * SUM, SUM), rows);
}
