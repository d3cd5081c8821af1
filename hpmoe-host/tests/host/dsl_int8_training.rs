//! The MoE-FFN layer with **INT8 dispatch** in the `#[taskflow]` DSL beyond the balanced
//! forward (`dsl_exec.rs`): the balanced backward and training step (`examples/dsl/
//! moe_ffn_backward.rs` after `moe_ffn_int8_backward_inputs.rs`, or after the forward
//! `moe_ffn_int8.rs` + `moe_ffn_tail.rs`) at `MoeShape::tiny(2)`, and under natural routing the
//! forward (`moe_ffn_natural_int8.rs` + `moe_ffn_natural_tail.rs`), the backward
//! (`moe_ffn_natural_backward.rs` after `moe_ffn_natural_int8_backward_inputs.rs`) and the
//! training step at `MoeShape::tiny_natural(2)`. For each: the macro's IR has the builder's
//! structure and tensor names, its schedule table and flag plan are the builder's byte for byte
//! (the builder's families under the DSL's names), and the compiled table runs on the host
//! executor to the references — the forward's output (a reference that quantises each row
//! itself), the saved activations (the dequantised rows `XIN` among them: the rows dW13 reads)
//! and the plain-loop gradients — bitwise.

use hpmoe_core::dsl::*;
use hpmoe_core::model::TensorKind;
use hpmoe_host::exec::moe_backward_reference::{
    MoeGradients, moe_backward_inputs, moe_backward_reference, moe_saved, saved_names,
};
use hpmoe_host::exec::moe_reference::moe_reference;
use hpmoe_host::exec::{Executor, Inputs, OpImpls, RunOptions};
use hpmoe_host::moe::{DispatchPrecision, MoeShape, Pass, Routing, under_dsl_names};
use hpmoe_macros::taskflow;

/// The balanced layers (named as the builder names them: a schedule table carries its
/// taskflow's name).
mod balanced {
    use super::*;

    #[taskflow(profile = small(2), ranks = 2)]
    pub fn moe_ffn_backward() {
        include!("tiny_shape.rs");
        const W: u64 = 4; // MoeShape::tiny's wgrad_rows
        const WB13: u64 = HIDDEN; // gradient rows per weight-gradient tile: all of them at this size
        const WB2: u64 = INTER;
        include!("../../../examples/dsl/moe_ffn_int8_backward_inputs.rs");
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

    #[taskflow(profile = small(2), ranks = 2)]
    pub fn moe_ffn_training_step() {
        include!("tiny_shape.rs");
        const W: u64 = 4;
        const WB13: u64 = HIDDEN;
        const WB2: u64 = INTER;
        include!("../../../examples/dsl/moe_ffn_int8.rs");
        include!("../../../examples/dsl/moe_ffn_tail.rs");
        // 1: the output gradient exists once the forward's output does (a training step), so every
        // tile reading it waits for the forward (`weights_grad` in the shared backward file).
        const DOUT_AFTER_FORWARD: u64 = 1;
        const DOUT: Tensor<Bf16> = input([T, HIDDEN]);
        const DBACK: Tensor<Bf16> = scratch([SENT, HIDDEN]);
        /// As the backward's, once the rank's forward output is complete.
        #[tile(aiv, grid(t in 0..T / SUM), after(weighted_sum))]
        fn scale_dout(t: Idx) {
            let slots = DBACK.slice(t * (SUM * TOP_K), SUM * TOP_K);
            scale_rows_repeat(DOUT.slice(t * SUM, SUM), TOPK_WEIGHTS.slice(t * SUM, SUM), slots);
        }
        include!("../../../examples/dsl/moe_ffn_backward.rs");
    }
}

/// The naturally routed layers, capacity 12 rows per slot (`MoeShape::tiny_natural(2)`'s).
mod natural {
    use super::*;

    #[taskflow(profile = small(2), ranks = 2)]
    pub fn moe_ffn_natural_int8() {
        include!("tiny_shape.rs");
        const C: u64 = 12;
        include!("../../../examples/dsl/moe_ffn_natural_int8.rs");
        include!("../../../examples/dsl/moe_ffn_natural_tail.rs");
    }

    #[taskflow(profile = small(2), ranks = 2)]
    pub fn moe_ffn_backward() {
        include!("tiny_shape.rs");
        const C: u64 = 12;
        const WB13: u64 = HIDDEN; // gradient rows per weight-gradient op: all of them at this size
        const WB2: u64 = INTER;
        const WG: u64 = 1; // source-rank groups per weight gradient (`MoeShape::wgrad_source_groups`)
        include!("../../../examples/dsl/moe_ffn_natural_int8_backward_inputs.rs");
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
            gather_scale_rows_repeat(
                DOUT.whole(),
                CHOICE_OF.slice(slot, B),
                TOPK_WEIGHTS.whole(),
                DBACK.slice(slot, B),
            );
        }
        include!("../../../examples/dsl/moe_ffn_natural_backward.rs");
    }

    #[taskflow(profile = small(2), ranks = 2)]
    pub fn moe_ffn_training_step() {
        include!("tiny_shape.rs");
        const C: u64 = 12;
        const WB13: u64 = HIDDEN;
        const WB2: u64 = INTER;
        const WG: u64 = 1;
        include!("../../../examples/dsl/moe_ffn_natural_int8.rs");
        include!("../../../examples/dsl/moe_ffn_natural_tail.rs");
        // 1: the output gradient exists once the forward's output does (a training step), so every
        // tile reading it waits for the forward (`weights_grad` in the shared backward file).
        const DOUT_AFTER_FORWARD: u64 = 1;
        const DOUT: Tensor<Bf16> = input([T, HIDDEN]);
        const CHOICE_OF: Tensor<I32> = input([EXPERTS * C]);
        const DBACK: Tensor<Bf16> = scratch([EXPERTS * C, HIDDEN]);
        /// As the backward's, once the rank's forward output is complete.
        #[tile(aiv, grid(dst in 0..RANKS, e in 0..E, b in 0..NB), after(weighted_sum))]
        fn scale_dout(dst: Idx, e: Idx, b: Idx) {
            let slot = (dst * E + e) * C + b * B;
            run_if_above(SEND_COUNTS.at(dst * E + e), b * B);
            gather_scale_rows_repeat(
                DOUT.whole(),
                CHOICE_OF.slice(slot, B),
                TOPK_WEIGHTS.whole(),
                DBACK.slice(slot, B),
            );
        }
        include!("../../../examples/dsl/moe_ffn_natural_backward.rs");
    }
}

/// The DSL's tensor names: the builder's in capitals.
fn dsl_name(name: &str) -> String {
    name.to_uppercase()
}

fn int8(shape: MoeShape) -> MoeShape {
    shape.with_dispatch(DispatchPrecision::Int8)
}

/// Every DSL program of this file: (shape, pass, program).
fn programs() -> [(MoeShape, Pass, Program); 5] {
    [
        (int8(MoeShape::tiny(2)), Pass::Backward, balanced::moe_ffn_backward()),
        (int8(MoeShape::tiny(2)), Pass::TrainingStep, balanced::moe_ffn_training_step()),
        (int8(MoeShape::tiny_natural(2)), Pass::Forward, natural::moe_ffn_natural_int8()),
        (int8(MoeShape::tiny_natural(2)), Pass::Backward, natural::moe_ffn_backward()),
        (int8(MoeShape::tiny_natural(2)), Pass::TrainingStep, natural::moe_ffn_training_step()),
    ]
}

fn what(shape: &MoeShape, pass: Pass) -> String {
    let routing = if shape.routing == Routing::Balanced { "balanced" } else { "natural" };
    format!("{routing} INT8 {}", pass.name())
}

#[test]
fn the_dsl_int8_layers_have_the_builder_s_structure_names_and_tables() {
    for (shape, pass, program) in programs() {
        let what = what(&shape, pass);
        let dsl = program.taskflow().unwrap();
        let built = shape.pass_taskflow(pass).unwrap();
        assert!(dsl.same_structure(&built), "{what}: structure");
        let names: Vec<String> = built.tensors.iter().map(|t| dsl_name(&t.name)).collect();
        assert_eq!(dsl.tensors.iter().map(|t| t.name.clone()).collect::<Vec<_>>(), names, "{what}");
        let built = under_dsl_names(built);
        let families =
            |tf: &hpmoe_core::model::Taskflow| tf.families.iter().map(|f| f.name.clone()).collect::<Vec<_>>();
        assert_eq!(families(&dsl), families(&built), "{what}");
        let compiled = hpmoe_core::plan(&built).unwrap();
        // Not `assert_eq!`: the tables are kilobytes.
        assert!(compiled.table.to_bytes() == program.table_bytes().unwrap(), "{what}: schedule table");
        assert!(compiled.flags_bin == program.flags_bytes, "{what}: flag plan");
        // The comparison sees the dispatch precision: the BF16 layer's pass is another taskflow
        // (the backward alone only by its saved input's name, `RECV` for `XIN`: the same shape).
        let bf16 = MoeShape { dispatch: DispatchPrecision::Bf16, ..shape.clone() }.pass_taskflow(pass).unwrap();
        let bf16_names: Vec<String> = bf16.tensors.iter().map(|t| dsl_name(&t.name)).collect();
        assert!(!dsl.same_structure(&bf16) || bf16_names != names, "{what}: BF16 differs");
        assert_eq!(dsl.same_structure(&bf16), pass == Pass::Backward, "{what}");
    }
    // dW13 multiplies the dequantised rows, which the backward alone takes as its saved input.
    let dsl = balanced::moe_ffn_backward().taskflow().unwrap();
    let wgrad = dsl.families.iter().find(|f| f.name == "gmm1_wgrad").unwrap();
    assert_eq!(wgrad.body[0].args[0].tensor, "XIN");
    let step = natural::moe_ffn_training_step().taskflow().unwrap();
    let wgrad = step.families.iter().find(|f| f.name == "gmm1_wgrad").unwrap();
    assert!(wgrad.body.iter().all(|c| c.args[0].tensor == "XIN"));
}

/// The builder's inputs of `pass` at `shape` under the DSL's names.
fn dsl_inputs(shape: &MoeShape, pass: Pass, inputs: &Inputs) -> Inputs {
    let mut renamed = Inputs::new();
    let tf = shape.pass_taskflow(pass).unwrap();
    for decl in tf.tensors.iter().filter(|t| t.kind == TensorKind::Input) {
        for rank in 0..shape.ranks {
            renamed.set_rank(&dsl_name(&decl.name), rank, inputs.get(&decl.name, rank).unwrap().clone());
        }
    }
    renamed
}

#[test]
fn the_dsl_int8_layers_run_to_the_reference_output_activations_and_gradients() {
    for (seed, (shape, pass, program)) in (31..).zip(programs()) {
        let what = what(&shape, pass);
        let exec = Executor::for_program(&program, &OpImpls::for_program(&program).unwrap()).unwrap();
        let inputs = moe_backward_inputs(&shape, seed).unwrap();
        let out = exec.run(&dsl_inputs(&shape, pass, &inputs), &RunOptions::default()).unwrap();
        let got = |rank: u32, name: &str| out.snapshot.get(rank, &dsl_name(name)).unwrap();
        if pass != Pass::Backward {
            let forward = moe_reference(&shape, &inputs).unwrap();
            for (rank, want) in forward.iter().enumerate() {
                assert_eq!(got(rank as u32, "out").first_difference(want), None, "{what}: `out` on rank {rank}");
            }
        }
        if pass == Pass::TrainingStep {
            let saved = moe_saved(&shape, &inputs).unwrap();
            assert_eq!(saved_names(&shape)[0], "xin");
            for (rank, tensors) in saved.iter().enumerate() {
                for (name, tensor) in saved_names(&shape).iter().zip(tensors) {
                    assert_eq!(got(rank as u32, name), tensor, "{what}: saved `{name}` on rank {rank}");
                }
            }
        }
        if pass != Pass::Forward {
            let want = moe_backward_reference(&shape, &inputs).unwrap();
            for (rank, grads) in want.iter().enumerate() {
                for name in MoeGradients::NAMES {
                    let diff = got(rank as u32, name).first_difference(grads.get(name).unwrap());
                    assert_eq!(diff, None, "{what}: `{name}` on rank {rank}");
                }
            }
        }
    }
}
