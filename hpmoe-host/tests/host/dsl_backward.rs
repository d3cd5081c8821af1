//! The MoE-FFN backward written in the `#[taskflow]` DSL (`examples/dsl/moe_ffn_backward.rs`
//! after `moe_ffn_backward_inputs.rs`) at
//! the tiny size, with two weight-gradient groups per expert and with one (the whole-expert
//! tiles of the DeepSeek-V3 shapes, where the `*_acc` chains do not exist): the macro's IR has
//! the structure of the builder's ([`MoeShape::backward_taskflow`]), and its compiled table runs
//! on the host executor to the plain-loop reference's gradients, bitwise.

use hpmoe_core::dsl::*;
use hpmoe_host::exec::moe_backward_reference::{MoeGradients, moe_backward_inputs, moe_backward_reference};
use hpmoe_host::exec::{Executor, Inputs, OpImpls, RunOptions};
use hpmoe_host::moe::MoeShape;
use hpmoe_macros::taskflow;

#[taskflow(profile = small(2), ranks = 2)]
fn moe_ffn_backward() {
    include!("tiny_shape.rs");
    const W: u64 = 4; // MoeShape::tiny's wgrad_rows
    const WB13: u64 = HIDDEN; // gradient rows per weight-gradient tile: all of them at this size
    const WB2: u64 = INTER;
    include!("../../../examples/dsl/moe_ffn_backward_inputs.rs");
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
    include!("../../../examples/dsl/moe_ffn_backward.rs");
}

/// The same file with one weight-gradient group per expert (`W` = the rows per expert, as
/// `MoeShape::with_whole_expert_wgrad`): the `*_acc` families are left out (`when(R > W)`).
#[taskflow(profile = small(2), ranks = 2)]
fn moe_ffn_backward_whole() {
    include!("tiny_shape.rs");
    const W: u64 = R; // one group: the whole expert
    const WB13: u64 = HIDDEN;
    const WB2: u64 = INTER;
    include!("../../../examples/dsl/moe_ffn_backward_inputs.rs");
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
    include!("../../../examples/dsl/moe_ffn_backward.rs");
}

/// The DSL's tensor names: the builder's in capitals.
fn dsl_name(name: &str) -> String {
    name.to_uppercase()
}

#[test]
fn the_dsl_backward_has_the_builder_s_structure() {
    let dsl = moe_ffn_backward().taskflow().unwrap();
    let built = MoeShape::tiny(2).backward_taskflow().unwrap();
    assert!(dsl.same_structure(&built));
    let names: Vec<String> = built.tensors.iter().map(|t| dsl_name(&t.name)).collect();
    assert_eq!(dsl.tensors.iter().map(|t| t.name.clone()).collect::<Vec<_>>(), names);
    // The comparison sees a difference: the builder's layer with one weight-gradient group differs.
    let whole = MoeShape::tiny(2).with_whole_expert_wgrad().backward_taskflow().unwrap();
    assert!(!dsl.same_structure(&whole));
}

#[test]
fn the_dsl_backward_with_one_weight_gradient_group_has_the_builder_s_structure() {
    let dsl = moe_ffn_backward_whole().taskflow().unwrap();
    let whole = MoeShape::tiny(2).with_whole_expert_wgrad().backward_taskflow().unwrap();
    assert!(dsl.same_structure(&whole));
    let families: Vec<&str> = dsl.families.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(families, whole.families.iter().map(|f| f.name.as_str()).collect::<Vec<_>>());
    assert!(!families.iter().any(|f| f.ends_with("_acc")), "{families:?}");
    assert!(!dsl.same_structure(&MoeShape::tiny(2).backward_taskflow().unwrap()));
}

#[test]
fn the_dsl_backward_runs_to_the_reference_gradients() {
    run_to_the_reference(moe_ffn_backward(), MoeShape::tiny(2), 13);
}

#[test]
fn the_dsl_backward_with_one_weight_gradient_group_runs_to_the_reference_gradients() {
    run_to_the_reference(moe_ffn_backward_whole(), MoeShape::tiny(2).with_whole_expert_wgrad(), 17);
}

/// Runs `program` (the DSL backward of `shape`) on the host executor and compares every gradient
/// of every rank with the plain-loop reference's, bitwise.
fn run_to_the_reference(program: Program, shape: MoeShape, seed: u64) {
    let exec = Executor::for_program(&program, &OpImpls::for_program(&program).unwrap()).unwrap();
    let inputs = moe_backward_inputs(&shape, seed).unwrap();
    let mut renamed = Inputs::new();
    let tf = shape.backward_taskflow().unwrap();
    for decl in tf.tensors.iter().filter(|t| t.kind == hpmoe_core::model::TensorKind::Input) {
        for rank in 0..shape.ranks {
            renamed.set_rank(&dsl_name(&decl.name), rank, inputs.get(&decl.name, rank).unwrap().clone());
        }
    }
    let out = exec.run(&renamed, &RunOptions::default()).unwrap();
    let want = moe_backward_reference(&shape, &inputs).unwrap();
    for (rank, grads) in want.iter().enumerate() {
        for name in MoeGradients::NAMES {
            let got = out.snapshot.get(rank as u32, &dsl_name(name)).unwrap();
            assert_eq!(got.first_difference(grads.get(name).unwrap()), None, "`{name}` on rank {rank}");
        }
    }
}
