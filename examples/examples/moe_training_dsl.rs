//! The backward and the training step of the DeepSeek-V3 routed-expert MoE-FFN layer at EP 8
//! (4096 tokens per rank, balanced routing), written in the `#[taskflow]` DSL: the taskflows
//! `hpmoe_host::moe::MoeShape::deepseek_v3(8, 4096)` builds with `backward_taskflow()` and
//! `training_step_taskflow()`, checked and scheduled while this file compiles. The layer is
//! written once in `examples/dsl/` (`moe_ffn.rs`, `moe_ffn_backward.rs`,
//! `moe_ffn_backward_inputs.rs`) and included here at the DeepSeek-V3 shape, with one
//! weight-gradient tile per expert and gradient block (`W = R`: the `*_acc` chains of the
//! tiny shapes do not exist here), as the host tests include it at the tiny size.
//!
//! ```sh
//! cargo run --release -p hpmoe-examples --example moe_training_dsl
//! cargo run --release -p hpmoe-examples --example moe_training_dsl -- --ranks 16,32,64
//! cargo run --release -p hpmoe-examples --example moe_training_dsl -- --int8
//! ```
//!
//! For each taskflow it prints the compiled schedule table, checks that the macro's IR has the
//! builder's structure, and plans the builder's taskflow (its forward's `swiglu` family named
//! `activation`, as in the DSL) to check that the two schedule tables and flag plans are the
//! same bytes (`hpmoe_examples::dsl_check`); it exits with status 1 if any differs. The same
//! under natural routing: `moe_training_natural_dsl.rs`. With `--ranks 16,32,64` it also
//! compiles this file at those EPs with the shared front-end (the macro's lowering, checks and
//! planning; one macro expansion per EP would cost every build of this crate) and compares each
//! table with the builder's `MoeShape::deepseek_v3(ranks, 4096)`. With `--int8` it compiles the
//! same file with INT8 dispatch the same way, at EP 8 and the `--ranks` EPs: the forward's
//! layout `moe_ffn.rs` and the backward's saved inputs `moe_ffn_backward_inputs.rs` replaced by
//! `moe_ffn_int8.rs` and `moe_ffn_int8_backward_inputs.rs` (the backward reads the dequantised
//! rows through the alias `GMM1_IN`), against `deepseek_v3(ranks, 4096).with_dispatch(Int8)`.

use hpmoe_core::dsl::*;
use hpmoe_examples::ExampleError;
use hpmoe_examples::cli::Options;
use hpmoe_examples::dsl_check::{check_requested_variants, check_variants, report};
use hpmoe_host::moe::{DispatchPrecision, MoeShape, Pass};
use hpmoe_macros::taskflow;

/// The backward alone: the forward's saved tensors and the output gradient are inputs.
#[taskflow(profile = ascend910b, ranks = 8)]
pub fn moe_ffn_backward() {
    const T: u64 = 4096; // tokens per rank
    const HIDDEN: u64 = 7168;
    const INTER: u64 = 2048; // expert intermediate size (gate and up each)
    const EXPERTS: u64 = 256;
    const TOP_K: u64 = 8;
    const B: u64 = 128; // row block
    const N1: u64 = 512; // GMM1 output columns per tile: a [gate | up] pair
    const N2: u64 = 896; // GMM2 output columns per tile
    const SUM: u64 = 64; // token rows per weighted-sum tile
    const W: u64 = R; // received rows per weight-gradient tile: the whole expert
    const WB13: u64 = 1024; // gradient rows per weight-gradient tile (fits L1)
    const WB2: u64 = 1024;
    include!("../dsl/moe_ffn_backward_inputs.rs");
    // 0: the output gradient is an input from the start (the backward alone).
    const DOUT_AFTER_FORWARD: u64 = 0;
    const DOUT: Tensor<Bf16> = input([T, HIDDEN]);
    const DBACK: Tensor<Bf16> = scratch([SENT, HIDDEN]);
    /// Each choice's output gradient scaled by its routing weight, in send order.
    #[tile(aiv, grid(t in 0..T / SUM))]
    fn scale_dout(t: Idx) {
        let slots = DBACK.slice(t * (SUM * TOP_K), SUM * TOP_K);
        scale_rows_repeat(DOUT.slice(t * SUM, SUM), TOPK_WEIGHTS.slice(t * SUM, SUM), slots);
    }
    include!("../dsl/moe_ffn_backward.rs");
}

/// The forward and the backward in one taskflow, the backward reading the forward's own saved
/// tensors and starting on a rank once its forward output is complete.
#[taskflow(profile = ascend910b, ranks = 8)]
pub fn moe_ffn_training_step() {
    const T: u64 = 4096;
    const HIDDEN: u64 = 7168;
    const INTER: u64 = 2048;
    const EXPERTS: u64 = 256;
    const TOP_K: u64 = 8;
    const B: u64 = 128;
    const N1: u64 = 512;
    const N2: u64 = 896;
    const SUM: u64 = 64;
    const W: u64 = R;
    const WB13: u64 = 1024;
    const WB2: u64 = 1024;
    include!("../dsl/moe_ffn.rs");
    include!("../dsl/moe_ffn_tail.rs");
    // 1: the output gradient exists once the forward's output does (a training step), so every
    // tile reading it waits for the forward (`weights_grad` in the shared backward file).
    const DOUT_AFTER_FORWARD: u64 = 1;
    const DOUT: Tensor<Bf16> = input([T, HIDDEN]);
    const DBACK: Tensor<Bf16> = scratch([SENT, HIDDEN]);
    /// Each choice's output gradient scaled by its routing weight, once the rank's forward
    /// output is complete (in a model the gradient comes from it, through the later layers).
    #[tile(aiv, grid(t in 0..T / SUM), after(weighted_sum))]
    fn scale_dout(t: Idx) {
        let slots = DBACK.slice(t * (SUM * TOP_K), SUM * TOP_K);
        scale_rows_repeat(DOUT.slice(t * SUM, SUM), TOPK_WEIGHTS.slice(t * SUM, SUM), slots);
    }
    include!("../dsl/moe_ffn_backward.rs");
}

/// Whether the DSL program is the builder's `pass` of `MoeShape::deepseek_v3(8, 4096)`: the same
/// structure, and the same schedule table and flag plan, byte for byte. Printed.
pub fn check(program: &Program, pass: Pass) -> bool {
    report(program, &MoeShape::deepseek_v3(8, 4096), "MoeShape::deepseek_v3(8, 4096)", pass)
}

/// This file compiled at the EPs `ranks` by the shared front-end
/// (`hpmoe_examples::dsl_check::check_variants`: the macro's lowering, checks and planning, its
/// `ranks = 8` replaced; with `dispatch` INT8, its forward and saved-input layout files replaced
/// by their INT8-dispatch counterparts), each taskflow compared table for table with the
/// builder's `MoeShape::deepseek_v3(ranks, 4096)` with that dispatch.
fn variants(ranks: &[u32], dispatch: DispatchPrecision) -> Result<bool, ExampleError> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let (src, file) = (include_str!("moe_training_dsl.rs"), "examples/examples/moe_training_dsl.rs");
    check_variants(src, file, &dir, ranks, dispatch, &[], |r| MoeShape::deepseek_v3(r, 4096))
}

fn main() -> Result<(), ExampleError> {
    let opts = Options::from_env(
        &["--ranks", "--int8"],
        "--ranks N[,N..]: also compile this file at those EPs; --int8: also with INT8 dispatch (EP 8 and --ranks)",
    )?;
    let backward = check(&moe_ffn_backward(), Pass::Backward);
    let step = check(&moe_ffn_training_step(), Pass::TrainingStep);
    let others = check_requested_variants(&opts, variants)?;
    if !(backward && step && others) {
        std::process::exit(1);
    }
    Ok(())
}
