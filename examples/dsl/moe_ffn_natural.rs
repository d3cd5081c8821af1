// The MoE-FFN layer of `hpmoe_host::moe` under natural routing with capacity padding (the
// layout of `MoeShape::deepseek_v3_natural`), as the body of a `#[taskflow]`: each (source
// rank, expert) slot holds up to `C` rows, of which a run-time count is valid. Each rank first
// announces its counts to every rank; the tiles past a count do no work but still signal
// (`run_if_above`), and the weighted sum gathers every token's choices by slot from the
// combine buffer. It is the one copy of this layout, included at its own size by each
// taskflow that needs it (`include!` in a taskflow body, see `hpmoe_core::syntax::include`):
//
//   examples/examples/moe_ffn_dsl.rs     DeepSeek-V3 at EP 8 (`MoeShape::deepseek_v3_natural(8, 4096)`)
//   hpmoe-core/tests/dsl_exec.rs         `MoeShape::tiny_natural(2)`
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

/// Waits for the count and for the put carrying its rows; skipped past the count.
#[tile(aic, grid(e in 0..E, src in 0..RANKS, b in 0..NB, n in 0..2 * INTER / N1))]
fn gmm1(e: Idx, src: Idx, b: Idx, n: Idx) {
    let rows = src * C + b * B;
    run_if_above(RECV_COUNTS.at(src).at(e), b * B);
    matmul(RECV.at(e).slice(rows, B), W13.at(e).all().slice(n * N1, N1), H.at(e).slice(rows, B).slice(n * N1, N1));
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
