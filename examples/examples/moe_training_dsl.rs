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
//! ```
//!
//! For each taskflow it prints the compiled schedule table, checks that the macro's IR has the
//! builder's structure, and plans the builder's taskflow (its forward's `swiglu` family named
//! `activation`, as in the DSL) to check that the two schedule tables and flag plans are the
//! same bytes (`hpmoe_examples::dsl_check`); it exits with status 1 if any differs. The same
//! under natural routing: `moe_training_natural_dsl.rs`. With `--ranks 16,32,64` it also
//! compiles this file at those EPs with the shared front-end (the macro's lowering, checks and
//! planning; one macro expansion per EP would cost every build of this crate) and compares each
//! table with the builder's `MoeShape::deepseek_v3(ranks, 4096)`.

use hpmoe_core::dsl::*;
use hpmoe_examples::ExampleError;
use hpmoe_examples::cli::Options;
use hpmoe_examples::dsl_check::{PlannedTaskflow, compare_with_builder, plan_at_ranks, report};
use hpmoe_host::moe::{MoeShape, Pass};
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

/// `--ranks 16,32,64`: this file compiled at those EPs too, by the shared front-end
/// (`hpmoe_examples::dsl_check::plan_at_ranks`: the macro's lowering, checks and planning, its
/// `ranks = 8` replaced), each taskflow compared table for table with the builder's
/// `MoeShape::deepseek_v3(ranks, 4096)`.
fn at_other_ranks(list: &str) -> Result<bool, ExampleError> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let src = include_str!("moe_training_dsl.rs");
    let mut ok = true;
    for word in list.split(',') {
        let ranks: u32 = word
            .trim()
            .parse()
            .map_err(|_| ExampleError::NotANumber { option: "--ranks".into(), value: word.into() })?;
        let shape = MoeShape::deepseek_v3(ranks, 4096);
        let name = format!("MoeShape::deepseek_v3({ranks}, 4096)");
        let start = std::time::Instant::now();
        let planned = plan_at_ranks(src, "examples/examples/moe_training_dsl.rs", &dir, ranks)?;
        // What the macro would spend on this file at this EP, before rustc compiles its output.
        println!("EP {ranks}: the front-end lowered, checked and planned both taskflows in {:.1?}", start.elapsed());
        for PlannedTaskflow { taskflow: tf, table, flags } in planned {
            let pass = if tf.name == "moe_ffn_backward" { Pass::Backward } else { Pass::TrainingStep };
            let c = compare_with_builder(&tf, &table, &flags, &shape, pass)?;
            println!(
                "EP {ranks}, front-end: taskflow `{}`, {} KiB table; same structure as {name}'s {}: {}, same schedule \
                 table: {}, same flag plan: {}",
                tf.name,
                table.len() / 1024,
                pass.name(),
                c.same_structure,
                c.same_table,
                c.same_flags
            );
            ok &= c.passed();
        }
    }
    Ok(ok)
}

fn main() -> Result<(), ExampleError> {
    let opts = Options::from_env(&["--ranks"], "--ranks N[,N..]: also compile this file at those EPs")?;
    let backward = check(&moe_ffn_backward(), Pass::Backward);
    let step = check(&moe_ffn_training_step(), Pass::TrainingStep);
    let others = match opts.value("--ranks") {
        Some(list) => at_other_ranks(&list)?,
        None => true,
    };
    if !(backward && step && others) {
        std::process::exit(1);
    }
    Ok(())
}
