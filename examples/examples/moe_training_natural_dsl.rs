//! The backward and the training step of the DeepSeek-V3 routed-expert MoE-FFN layer at EP 8
//! (4096 tokens per rank) under natural routing with capacity padding, written in the
//! `#[taskflow]` DSL: the taskflows `hpmoe_host::moe::MoeShape::deepseek_v3_natural(8, 4096)`
//! builds with `backward_taskflow()` and `training_step_taskflow()`, checked and scheduled while
//! this file compiles. The layer is written once in `examples/dsl/` (`moe_ffn_natural.rs`,
//! `moe_ffn_natural_backward.rs`, `moe_ffn_natural_backward_inputs.rs`) and included here at the
//! DeepSeek-V3 shape, as the host tests include it at `MoeShape::tiny_natural(1 / 2 / 4)`: each
//! (source rank, expert) slot holds up to `C` rows of which a run-time count is valid, every tile
//! of a slot's block is guarded by that count, and each weight-gradient tile adds its block's
//! product for every 1024 gradient rows (`for p in 0..HIDDEN / WB13`, unrolled: 7 and 2 ops).
//!
//! ```sh
//! cargo run --release -p hpmoe-examples --example moe_training_natural_dsl
//! cargo run --release -p hpmoe-examples --example moe_training_natural_dsl -- --ranks 16,32,64 --int8
//! ```
//!
//! For each taskflow it prints the compiled schedule table and checks that the macro's IR, its
//! schedule table and its flag plan are the builder's (`hpmoe_examples::dsl_check`); it exits
//! with status 1 if any differs. Balanced routing: `moe_training_dsl.rs`. With `--ranks` it also
//! compiles the natural layer's forward (`moe_ffn_natural` of `moe_ffn_dsl.rs`), backward and
//! training step at those EPs with the shared front-end (the macro's lowering, checks and
//! planning; a macro expansion per EP would cost every build of this crate seconds), and with
//! `--int8` the same three with INT8 dispatch (the forward's layout `moe_ffn_natural.rs` and the
//! saved inputs' `moe_ffn_natural_backward_inputs.rs` replaced by `moe_ffn_natural_int8.rs` and
//! `moe_ffn_natural_int8_backward_inputs.rs`), at EP 8 and the `--ranks` EPs; each against the
//! builder's `MoeShape::deepseek_v3_natural(ranks, 4096)` with that dispatch.

use hpmoe_core::dsl::*;
use hpmoe_examples::ExampleError;
use hpmoe_examples::cli::Options;
use hpmoe_examples::dsl_check::{check_requested_variants, check_variants, report};
use hpmoe_host::moe::{DispatchPrecision, MoeShape, Pass};
use hpmoe_macros::taskflow;

/// The backward alone: the forward's saved tensors, its run-time routing and the output
/// gradient are inputs.
#[taskflow(profile = ascend910b, ranks = 8)]
pub fn moe_ffn_backward() {
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
    const WB13: u64 = 1024; // gradient rows per weight-gradient op (fits L1)
    const WB2: u64 = 1024;
    // Source-rank groups per weight gradient: one per 16-die server beyond one server, as
    // `MoeShape::wgrad_source_groups` defaults (1, 1, 2, 4 at EP 8, 16, 32, 64).
    const WG: u64 = RANKS.div_ceil(16);
    include!("../dsl/moe_ffn_natural_backward_inputs.rs");
    // 0: the output gradient is an input from the start (the backward alone).
    const DOUT_AFTER_FORWARD: u64 = 0;
    const DOUT: Tensor<Bf16> = input([T, HIDDEN]);
    const CHOICE_OF: Tensor<I32> = input([EXPERTS * C]); // the choice each send slot row carries, -1: padding
    const DBACK: Tensor<Bf16> = scratch([EXPERTS * C, HIDDEN]);
    /// Each sent row's output gradient, gathered from the choice it carries and scaled by its
    /// routing weight.
    #[tile(aiv, grid(dst in 0..RANKS, e in 0..E, b in 0..NB))]
    fn scale_dout(dst: Idx, e: Idx, b: Idx) {
        let slot = (dst * E + e) * C + b * B;
        run_if_above(SEND_COUNTS.at(dst * E + e), b * B);
        gather_scale_rows_repeat(DOUT.whole(), CHOICE_OF.slice(slot, B), TOPK_WEIGHTS.whole(), DBACK.slice(slot, B));
    }
    include!("../dsl/moe_ffn_natural_backward.rs");
}

/// The forward and the backward in one taskflow, the backward reading the forward's own saved
/// tensors and counts and starting on a rank once its forward output is complete.
#[taskflow(profile = ascend910b, ranks = 8)]
pub fn moe_ffn_training_step() {
    const T: u64 = 4096;
    const HIDDEN: u64 = 7168;
    const INTER: u64 = 2048;
    const EXPERTS: u64 = 256;
    const TOP_K: u64 = 8;
    const B: u64 = 192;
    const C: u64 = 192;
    const N1: u64 = 512;
    const N2: u64 = 896;
    const SUM: u64 = 64;
    const WB13: u64 = 1024;
    const WB2: u64 = 1024;
    const WG: u64 = RANKS.div_ceil(16);
    include!("../dsl/moe_ffn_natural.rs");
    include!("../dsl/moe_ffn_natural_tail.rs");
    // 1: the output gradient exists once the forward's output does (a training step), so every
    // tile reading it waits for the forward (`weights_grad` in the shared backward file).
    const DOUT_AFTER_FORWARD: u64 = 1;
    const DOUT: Tensor<Bf16> = input([T, HIDDEN]);
    const CHOICE_OF: Tensor<I32> = input([EXPERTS * C]);
    const DBACK: Tensor<Bf16> = scratch([EXPERTS * C, HIDDEN]);
    /// As the backward's, once the rank's forward output is complete (in a model the gradient
    /// comes from it, through the later layers).
    #[tile(aiv, grid(dst in 0..RANKS, e in 0..E, b in 0..NB), after(weighted_sum))]
    fn scale_dout(dst: Idx, e: Idx, b: Idx) {
        let slot = (dst * E + e) * C + b * B;
        run_if_above(SEND_COUNTS.at(dst * E + e), b * B);
        gather_scale_rows_repeat(DOUT.whole(), CHOICE_OF.slice(slot, B), TOPK_WEIGHTS.whole(), DBACK.slice(slot, B));
    }
    include!("../dsl/moe_ffn_natural_backward.rs");
}

/// Whether the DSL program is the builder's `pass` of `MoeShape::deepseek_v3_natural(8, 4096)`:
/// the same structure, and the same schedule table and flag plan, byte for byte. Printed.
pub fn check(program: &Program, pass: Pass) -> bool {
    let name = "MoeShape::deepseek_v3_natural(8, 4096)";
    report(program, &MoeShape::deepseek_v3_natural(8, 4096), name, pass)
}

/// The natural layer's forward (`moe_ffn_natural` of `moe_ffn_dsl.rs`), backward and training
/// step (this file) compiled at the EPs `ranks` by the shared front-end
/// (`hpmoe_examples::dsl_check::check_variants`: the macro's lowering, checks and planning, its
/// `ranks = 8` replaced; with `dispatch` INT8, the forward's and the saved inputs' layout files
/// replaced by their INT8-dispatch counterparts), each compared table for table with the
/// builder's `MoeShape::deepseek_v3_natural(ranks, 4096)` with that dispatch.
fn variants(ranks: &[u32], dispatch: DispatchPrecision) -> Result<bool, ExampleError> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let shape = |r| MoeShape::deepseek_v3_natural(r, 4096);
    let (forward, file) = (include_str!("moe_ffn_dsl.rs"), "examples/examples/moe_ffn_dsl.rs");
    let ok = check_variants(forward, file, &dir, ranks, dispatch, &["moe_ffn_natural"], shape)?;
    let (src, file) = (include_str!("moe_training_natural_dsl.rs"), "examples/examples/moe_training_natural_dsl.rs");
    Ok(check_variants(src, file, &dir, ranks, dispatch, &[], shape)? && ok)
}

fn main() -> Result<(), ExampleError> {
    let opts = Options::from_env(
        &["--ranks", "--int8"],
        "--ranks N[,N..]: also compile the natural layer's forward, backward and training step at those EPs; \
         --int8: also with INT8 dispatch (EP 8 and --ranks)",
    )?;
    let backward = check(&moe_ffn_backward(), Pass::Backward);
    let step = check(&moe_ffn_training_step(), Pass::TrainingStep);
    let others = check_requested_variants(&opts, variants)?;
    if !(backward && step && others) {
        std::process::exit(1);
    }
    Ok(())
}
