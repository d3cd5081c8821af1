//! The MoE-FFN training step written in the `#[taskflow]` DSL: the forward
//! (`examples/dsl/moe_ffn.rs`) and the backward (`examples/dsl/moe_ffn_backward.rs`) in ONE
//! taskflow at the tiny size, the backward reading the forward's own `RECV`, `H`, `ACT` and
//! `BACK` and starting once the rank's forward output is complete. The macro's IR has the
//! structure of the builder's ([`MoeShape::training_step_taskflow`]); its compiled table runs on
//! the host executor to the forward reference's output, the saved activations the forward
//! leaves, and the plain-loop reference's gradients, bitwise.

use hpmoe_core::dsl::*;
use hpmoe_host::exec::moe_backward_reference::{
    MoeGradients, moe_backward_inputs, moe_backward_reference, moe_saved, saved_names,
};
use hpmoe_host::exec::moe_reference::moe_reference;
use hpmoe_host::exec::{Executor, Inputs, OpImpls, RunOptions};
use hpmoe_host::moe::MoeShape;
use hpmoe_macros::taskflow;

#[taskflow(profile = small(2), ranks = 2)]
fn moe_ffn_training_step() {
    include!("tiny_shape.rs");
    const W: u64 = 4; // MoeShape::tiny's wgrad_rows
    const WB13: u64 = HIDDEN; // gradient rows per weight-gradient tile: all of them at this size
    const WB2: u64 = INTER;
    include!("../../../examples/dsl/moe_ffn.rs");
    include!("../../../examples/dsl/moe_ffn_tail.rs");
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
    include!("../../../examples/dsl/moe_ffn_backward.rs");
}

/// The DSL's tensor names: the builder's in capitals.
fn dsl_name(name: &str) -> String {
    name.to_uppercase()
}

#[test]
fn the_dsl_training_step_has_the_builder_s_structure() {
    let dsl = moe_ffn_training_step().taskflow().unwrap();
    let built = MoeShape::tiny(2).training_step_taskflow().unwrap();
    assert!(dsl.same_structure(&built));
    let names: Vec<String> = built.tensors.iter().map(|t| dsl_name(&t.name)).collect();
    assert_eq!(dsl.tensors.iter().map(|t| t.name.clone()).collect::<Vec<_>>(), names);
    // The comparison sees a difference: without the wait for the forward's output, or with one
    // weight-gradient group per expert, the builder's layers differ.
    let mut unordered = built.clone();
    unordered.families.iter_mut().find(|f| f.name == "scale_dout").unwrap().after.clear();
    assert!(!dsl.same_structure(&unordered));
    let whole = MoeShape::tiny(2).with_whole_expert_wgrad().training_step_taskflow().unwrap();
    assert!(!dsl.same_structure(&whole));
}

#[test]
fn the_dsl_training_step_runs_to_the_reference_output_activations_and_gradients() {
    let shape = MoeShape::tiny(2);
    let program = moe_ffn_training_step();
    let exec = Executor::for_program(&program, &OpImpls::for_program(&program).unwrap()).unwrap();
    let inputs = moe_backward_inputs(&shape, 19).unwrap();
    let mut renamed = Inputs::new();
    let tf = shape.training_step_taskflow().unwrap();
    for decl in tf.tensors.iter().filter(|t| t.kind == hpmoe_core::model::TensorKind::Input) {
        for rank in 0..shape.ranks {
            renamed.set_rank(&dsl_name(&decl.name), rank, inputs.get(&decl.name, rank).unwrap().clone());
        }
    }
    let out = exec.run(&renamed, &RunOptions::default()).unwrap();
    let forward = moe_reference(&shape, &inputs).unwrap();
    let saved = moe_saved(&shape, &inputs).unwrap();
    let want = moe_backward_reference(&shape, &inputs).unwrap();
    for rank in 0..shape.ranks {
        let r = rank as usize;
        assert_eq!(out.snapshot.get(rank, "OUT"), Some(&forward[r]), "`out` on rank {rank}");
        for (name, tensor) in saved_names(&shape).iter().zip(&saved[r]) {
            assert_eq!(out.snapshot.get(rank, &dsl_name(name)), Some(tensor), "saved `{name}` on rank {rank}");
        }
        for name in MoeGradients::NAMES {
            let got = out.snapshot.get(rank, &dsl_name(name)).unwrap();
            assert_eq!(got.first_difference(want[r].get(name).unwrap()), None, "`{name}` on rank {rank}");
        }
    }
}
