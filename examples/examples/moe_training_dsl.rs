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
//! ```
//!
//! For each taskflow it prints the compiled schedule table, checks that the macro's IR has the
//! builder's structure, and plans the builder's taskflow (its forward's `swiglu` family named
//! `activation`, as in the DSL) to check that the two schedule tables and flag plans are the
//! same bytes; it exits with status 1 if any differs.

use hpmoe_core::dsl::*;
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
    let dsl = program.taskflow().expect("the IR the macro emitted decodes");
    let mut built = MoeShape::deepseek_v3(8, 4096).pass_taskflow(pass).expect("valid shape");
    let same = dsl.same_structure(&built);
    // The forward's `swiglu` family is `activation` in the DSL (a tile cannot share its name with
    // the op it calls), and the table names its families: plan the builder's under the DSL's name.
    for f in &mut built.families {
        if f.name == "swiglu" {
            f.name = "activation".into();
        }
        for a in &mut f.after {
            if a.family == "swiglu" {
                a.family = "activation".into();
            }
        }
    }
    println!("same structure as MoeShape::deepseek_v3(8, 4096)'s {}: {same}", pass.name());
    let compiled = hpmoe_core::plan(&built).expect("the builder's taskflow plans");
    let tables = compiled.table.to_bytes() == program.table_bytes().expect("the embedded table unpacks");
    let flags = compiled.flags_bin == program.flags_bytes;
    println!("same schedule table: {tables}, same flag plan: {flags}");
    same && tables && flags
}

fn main() {
    let backward = check(&moe_ffn_backward(), Pass::Backward);
    let step = check(&moe_ffn_training_step(), Pass::TrainingStep);
    if !(backward && step) {
        std::process::exit(1);
    }
}
