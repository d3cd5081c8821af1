//! The DeepSeek-V3 routed-expert MoE-FFN layer at EP 8 (4096 tokens per rank), written in
//! the `#[taskflow]` DSL: the same taskflow `hpmoe_host::moe::MoeShape::deepseek_v3(8, 4096)`
//! builds with the builder API, checked and scheduled while this file compiles.
//!
//! ```sh
//! cargo run --release -p hpmoe-examples --example moe_ffn_dsl
//! ```
//!
//! A second taskflow, `moe_ffn_natural`, is the same layer under natural routing with capacity
//! padding (`MoeShape::deepseek_v3_natural(8, 4096)`). For each, it prints the compiled schedule
//! table and checks that the macro's IR has the same structure as the builder's (names aside:
//! tensors are consts here, and a tile cannot share its name with the `swiglu` op it calls);
//! it exits with status 1 if either differs.

use hpmoe_core::dsl::*;
use hpmoe_macros::taskflow;

/// dispatch (AIV puts) → GMM1 (AIC) → SwiGLU (AIV) → GMM2 (AIC) → combine (AIV puts) →
/// weighted sum (AIV), tile by tile, in one kernel.
#[taskflow(profile = ascend910b, ranks = 8)]
pub fn moe_ffn() {
    const T: u64 = 4096; // tokens per rank
    const HIDDEN: u64 = 7168;
    const INTER: u64 = 2048; // expert intermediate size (gate and up each)
    const EXPERTS: u64 = 256;
    const TOP_K: u64 = 8;
    const E: u64 = EXPERTS / RANKS; // local experts
    const R: u64 = T * TOP_K * RANKS / EXPERTS; // rows per local expert, balanced routing
    const S: u64 = R / RANKS; // rows one source rank sends to one expert
    const SENT: u64 = RANKS * E * S; // rows each rank sends (T * TOP_K)
    const B: u64 = 128; // row block
    const N1: u64 = 512; // GMM1 output columns per tile: a [gate | up] pair
    const N2: u64 = 896; // GMM2 output columns per tile
    const SUM: u64 = 64; // token rows per weighted-sum tile

    const XS: Tensor<Bf16> = input([SENT, HIDDEN]); // routed rows in send order (dst, e, slot)
    const W13: Tensor<Bf16> = input([E, HIDDEN, 2 * INTER]);
    const W2: Tensor<Bf16> = input([E, INTER, HIDDEN]);
    const TOPK_WEIGHTS: Tensor<F32> = input([T, TOP_K]);
    const RECV: Tensor<Bf16> = symmetric([E, R, HIDDEN]); // rows land grouped by source rank
    const H: Tensor<Bf16> = scratch([E, R, 2 * INTER]);
    const ACT: Tensor<Bf16> = scratch([E, R, INTER]);
    const Y: Tensor<Bf16> = scratch([E, R, HIDDEN]);
    const BACK: Tensor<Bf16> = symmetric([SENT, HIDDEN]);
    const OUT: Tensor<Bf16> = output([T, HIDDEN]);

    #[tile(aiv, grid(dst in 0..RANKS, e in 0..E, b in 0..S / B))]
    fn dispatch(dst: Idx, e: Idx, b: Idx) {
        put(XS.slice((dst * E + e) * S + b * B, B), RECV.on(dst).at(e).slice(RANK * S + b * B, B));
    }

    /// Waits only for the puts carrying its rows.
    #[tile(aic, grid(e in 0..E, m in 0..R / B, n in 0..2 * INTER / N1))]
    fn gmm1(e: Idx, m: Idx, n: Idx) {
        matmul(
            RECV.at(e).slice(m * B, B),
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
}

/// The same layer under natural routing with capacity padding (the layout of
/// `MoeShape::deepseek_v3_natural`): each (source rank, expert) slot holds up to `C` rows, of
/// which a run-time count is valid. Each rank first announces its counts to every rank; the
/// tiles past a count do no work but still signal (`run_if_above`), and the weighted sum
/// gathers every token's choices by slot from the combine buffer.
#[taskflow(profile = ascend910b, ranks = 8)]
pub fn moe_ffn_natural() {
    const T: u64 = 4096; // tokens per rank
    const HIDDEN: u64 = 7168;
    const INTER: u64 = 2048; // expert intermediate size (gate and up each)
    const EXPERTS: u64 = 256;
    const TOP_K: u64 = 8;
    const E: u64 = EXPERTS / RANKS; // local experts
    const B: u64 = 64; // row block
    const C: u64 = 192; // capacity: rows per (source rank, expert) slot, 1.5x the balanced 128
    const NB: u64 = C / B; // row blocks per slot
    const N1: u64 = 512; // GMM1 output columns per tile: a [gate | up] pair
    const N2: u64 = 896; // GMM2 output columns per tile
    const SUM: u64 = 64; // token rows per weighted-sum tile

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
}

/// Prints a program's schedule table.
fn describe(program: &Program) {
    let table = program.table().expect("the table the macro emitted decodes");
    let view = table.view();
    println!(
        "taskflow `{}`: {} ranks x {} cores, {} tile instances per rank, {} table entries, {} signals, {} KiB",
        view.name(),
        view.header.ranks,
        view.header.cores_per_rank,
        view.header.instances_per_rank,
        view.entries.len(),
        view.signals.len(),
        view.total_bytes() / 1024
    );
}

/// Whether the DSL program's IR has the builder's structure, printed.
fn check(program: &Program, builder: hpmoe_host::moe::MoeShape, name: &str) -> bool {
    let dsl = program.taskflow().expect("the IR the macro emitted decodes");
    let built = builder.taskflow().expect("valid shape");
    let same = dsl.same_structure(&built);
    println!("same structure as MoeShape::{name}(8, 4096): {same}");
    same
}

fn main() {
    let balanced = moe_ffn();
    describe(&balanced);
    let balanced_ok = check(&balanced, hpmoe_host::moe::MoeShape::deepseek_v3(8, 4096), "deepseek_v3");
    let natural = moe_ffn_natural();
    describe(&natural);
    let natural_ok = check(&natural, hpmoe_host::moe::MoeShape::deepseek_v3_natural(8, 4096), "deepseek_v3_natural");
    if !(balanced_ok && natural_ok) {
        std::process::exit(1);
    }
}
