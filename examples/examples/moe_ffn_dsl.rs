//! The DeepSeek-V3 routed-expert MoE-FFN layer at EP 8 (4096 tokens per rank), written in
//! the `#[taskflow]` DSL: the same taskflow `hpmoe_host::moe::MoeShape::deepseek_v3(8, 4096)`
//! builds with the builder API, checked and scheduled while this file compiles. The layer's
//! tensors and tiles are written once, in `examples/dsl/` (`moe_ffn.rs` + `moe_ffn_tail.rs`,
//! `moe_ffn_natural.rs`, `moe_ffn_int8.rs` + `moe_ffn_tail.rs`), and included here at the
//! DeepSeek-V3 shape, as the trybuild pass case and the host tests include them at tiny shapes.
//!
//! ```sh
//! cargo run --release -p hpmoe-examples --example moe_ffn_dsl
//! ```
//!
//! A second taskflow, `moe_ffn_natural`, is the same layer under natural routing with capacity
//! padding (`MoeShape::deepseek_v3_natural(8, 4096)`), a third, `moe_ffn_int8`, the balanced
//! layer with INT8 dispatch (`with_dispatch(DispatchPrecision::Int8)`). For each, it prints
//! the compiled schedule table and checks that the macro's IR has the same structure as the
//! builder's (names aside: tensors are consts here, and a tile cannot share its name with the
//! op it calls, so `swiglu`, `quantize` and `dequantize` tiles are named otherwise); it exits
//! with status 1 if one differs.

use hpmoe_core::dsl::*;
use hpmoe_examples::dsl_check::describe_table;
use hpmoe_host::moe::DispatchPrecision;
use hpmoe_macros::taskflow;

/// dispatch (AIV puts) → GMM1 (AIC) → SwiGLU (AIV) → GMM2 (AIC) → combine (AIV puts) →
/// weighted sum (AIV), tile by tile, in one kernel: the layout of `../dsl/moe_ffn.rs` at the
/// DeepSeek-V3 shape.
#[taskflow(profile = ascend910b, ranks = 8)]
pub fn moe_ffn() {
    const T: u64 = 4096; // tokens per rank
    const HIDDEN: u64 = 7168;
    const INTER: u64 = 2048; // expert intermediate size (gate and up each)
    const EXPERTS: u64 = 256;
    const TOP_K: u64 = 8;
    const B: u64 = 128; // row block
    const N1: u64 = 512; // GMM1 output columns per tile: a [gate | up] pair
    const N2: u64 = 896; // GMM2 output columns per tile
    const SUM: u64 = 64; // token rows per weighted-sum tile
    include!("../dsl/moe_ffn.rs");
    include!("../dsl/moe_ffn_tail.rs");
}

/// The same layer under natural routing with capacity padding (the layout of
/// `MoeShape::deepseek_v3_natural`, written in `../dsl/moe_ffn_natural.rs`): each (source
/// rank, expert) slot holds up to `C` rows, of which a run-time count is valid. Each rank first
/// announces its counts to every rank; the tiles past a count do no work but still signal
/// (`run_if_above`), and the weighted sum gathers every token's choices by slot from the
/// combine buffer.
#[taskflow(profile = ascend910b, ranks = 8)]
pub fn moe_ffn_natural() {
    const T: u64 = 4096; // tokens per rank
    const HIDDEN: u64 = 7168;
    const INTER: u64 = 2048; // expert intermediate size (gate and up each)
    const EXPERTS: u64 = 256;
    const TOP_K: u64 = 8;
    const B: u64 = 192; // row block: one block a slot
    const C: u64 = 192; // capacity: rows per (source rank, expert) slot, 1.5x the balanced 128
    const N1: u64 = 512; // GMM1 output columns per tile: a [gate | up] pair
    const N2: u64 = 896; // GMM2 output columns per tile
    const SUM: u64 = 64; // token rows per weighted-sum tile
    include!("../dsl/moe_ffn_natural.rs");
    include!("../dsl/moe_ffn_natural_tail.rs");
}

/// The balanced layer with INT8 dispatch (`MoeShape::deepseek_v3(8, 4096)` with
/// `DispatchPrecision::Int8`, written in `../dsl/moe_ffn_int8.rs`): each block of routed rows
/// is quantised on the AIV to INT8 with a per-row scale before its puts, and dequantised on the
/// AIV once it lands, before GMM1; SwiGLU, GMM2, combine and the weighted sum are the BF16
/// layer's (`../dsl/moe_ffn_tail.rs`).
#[taskflow(profile = ascend910b, ranks = 8)]
pub fn moe_ffn_int8() {
    const T: u64 = 4096; // tokens per rank
    const HIDDEN: u64 = 7168;
    const INTER: u64 = 2048; // expert intermediate size (gate and up each)
    const EXPERTS: u64 = 256;
    const TOP_K: u64 = 8;
    const B: u64 = 128; // row block
    const N1: u64 = 512; // GMM1 output columns per tile: a [gate | up] pair
    const N2: u64 = 896; // GMM2 output columns per tile
    const SUM: u64 = 64; // token rows per weighted-sum tile
    include!("../dsl/moe_ffn_int8.rs");
    include!("../dsl/moe_ffn_tail.rs");
}

/// Whether the DSL program's IR has the builder's structure, printed.
fn check(program: &Program, builder: hpmoe_host::moe::MoeShape, name: &str) -> bool {
    let dsl = program.taskflow().expect("the IR the macro emitted decodes");
    let built = builder.taskflow().expect("valid shape");
    let same = dsl.same_structure(&built);
    println!("same structure as MoeShape::{name}: {same}");
    same
}

fn main() {
    let balanced = moe_ffn();
    describe_table(&balanced);
    let balanced_ok = check(&balanced, hpmoe_host::moe::MoeShape::deepseek_v3(8, 4096), "deepseek_v3(8, 4096)");
    let natural = moe_ffn_natural();
    describe_table(&natural);
    let natural_ok =
        check(&natural, hpmoe_host::moe::MoeShape::deepseek_v3_natural(8, 4096), "deepseek_v3_natural(8, 4096)");
    let int8 = moe_ffn_int8();
    describe_table(&int8);
    let deepseek_int8 = hpmoe_host::moe::MoeShape::deepseek_v3(8, 4096).with_dispatch(DispatchPrecision::Int8);
    let int8_ok = check(&int8, deepseek_int8, "deepseek_v3(8, 4096).with_dispatch(Int8)");
    if !(balanced_ok && natural_ok && int8_ok) {
        std::process::exit(1);
    }
}
