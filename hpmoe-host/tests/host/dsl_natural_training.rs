//! The MoE-FFN backward and training step under natural routing, written in the `#[taskflow]`
//! DSL (`examples/dsl/moe_ffn_natural_backward.rs`, after `moe_ffn_natural_backward_inputs.rs`
//! for the backward alone, after the forward `moe_ffn_natural.rs` for the training step) at
//! `MoeShape::tiny_natural(1)`, `(2)` and `(4)`: the macro's IR has the structure of the
//! builder's ([`MoeShape::backward_taskflow`], [`MoeShape::training_step_taskflow`]), its
//! schedule table and flag plan are the builder's byte for byte, and the compiled table runs on
//! the host executor to the plain-loop reference's output, saved activations and gradients,
//! bitwise.

use hpmoe_core::dsl::*;
use hpmoe_core::model::TensorKind;
use hpmoe_host::exec::moe_backward_reference::{
    MoeGradients, moe_backward_inputs, moe_backward_reference, moe_saved, saved_names,
};
use hpmoe_host::exec::moe_reference::moe_reference;
use hpmoe_host::exec::{Executor, Inputs, OpImpls, RunOptions};
use hpmoe_host::moe::{MoeShape, Pass, under_dsl_names};
use hpmoe_macros::taskflow;

/// Module `$m`: the backward alone and the training step of `MoeShape::tiny_natural($ranks)`,
/// whose capacity is `$c` rows per slot and whose weight gradients are summed in `$wg` groups of
/// source ranks (named as the builder names them: a schedule table
/// carries its taskflow's name).
macro_rules! tiny_natural {
    ($m:ident, $ranks:tt, $c:tt, $wg:tt) => {
        mod $m {
            use super::*;

            #[taskflow(profile = small(2), ranks = $ranks)]
            pub fn moe_ffn_backward() {
                include!("tiny_shape.rs");
                const C: u64 = $c;
                const WB13: u64 = HIDDEN; // gradient rows per weight-gradient op: all of them at this size
                const WB2: u64 = INTER;
                const WG: u64 = $wg; // source-rank groups per weight gradient
                include!("../../../examples/dsl/moe_ffn_natural_backward_inputs.rs");
                // 0: the output gradient is an input from the start (the backward alone).
                const DOUT_AFTER_FORWARD: u64 = 0;
                const DOUT: Tensor<Bf16> = input([T, HIDDEN]);
                const CHOICE_OF: Tensor<I32> = input([EXPERTS * C]); // the choice each send slot row carries, -1: padding
                const DBACK: Tensor<Bf16> = scratch([EXPERTS * C, HIDDEN]);
                /// Each sent row's output gradient, gathered from the choice it carries and scaled by
                /// its routing weight.
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

            #[taskflow(profile = small(2), ranks = $ranks)]
            pub fn moe_ffn_training_step() {
                include!("tiny_shape.rs");
                const C: u64 = $c;
                const WB13: u64 = HIDDEN;
                const WB2: u64 = INTER;
                const WG: u64 = $wg; // source-rank groups per weight gradient
                include!("../../../examples/dsl/moe_ffn_natural.rs");
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
    };
}

// The capacities of `MoeShape::tiny_natural`: 1.5 times the average rows per slot, in whole
// blocks; its weight gradients in one group of sources, and at 4 ranks also in a chain of two.
tiny_natural!(ep1, 1, 24, 1);
tiny_natural!(ep2, 2, 12, 1);
tiny_natural!(ep4, 4, 8, 1);
tiny_natural!(ep4_two_groups, 4, 8, 2);

/// The DSL programs at each rank count (and at 4 ranks in two weight-gradient groups): (shape,
/// backward, training step).
fn programs() -> [(MoeShape, Program, Program); 4] {
    [
        (MoeShape::tiny_natural(1), ep1::moe_ffn_backward(), ep1::moe_ffn_training_step()),
        (MoeShape::tiny_natural(2), ep2::moe_ffn_backward(), ep2::moe_ffn_training_step()),
        (MoeShape::tiny_natural(4), ep4::moe_ffn_backward(), ep4::moe_ffn_training_step()),
        (
            MoeShape::tiny_natural(4).with_wgrad_groups(2),
            ep4_two_groups::moe_ffn_backward(),
            ep4_two_groups::moe_ffn_training_step(),
        ),
    ]
}

/// The DSL's tensor names: the builder's in capitals.
fn dsl_name(name: &str) -> String {
    name.to_uppercase()
}

#[test]
fn the_capacities_are_tiny_natural_s() {
    for (ranks, c, wg) in [(1, 24, 1), (2, 12, 1), (4, 8, 1)] {
        assert_eq!(MoeShape::tiny_natural(ranks).slot_rows(), c, "tiny_natural({ranks})");
        assert_eq!(MoeShape::tiny_natural(ranks).wgrad_source_groups, wg, "tiny_natural({ranks})");
    }
}

#[test]
fn the_dsl_natural_backward_and_training_step_have_the_builder_s_structure_and_tables() {
    for (shape, backward, step) in programs() {
        let (ranks, groups) = (shape.ranks, shape.wgrad_source_groups);
        for (program, pass) in [(&backward, Pass::Backward), (&step, Pass::TrainingStep)] {
            let what = format!("tiny_natural({ranks}) in {groups} groups, {}", pass.name());
            let dsl = program.taskflow().unwrap();
            let built = shape.pass_taskflow(pass).unwrap();
            assert!(dsl.same_structure(&built), "{what}: structure");
            let names: Vec<String> = built.tensors.iter().map(|t| dsl_name(&t.name)).collect();
            assert_eq!(dsl.tensors.iter().map(|t| t.name.clone()).collect::<Vec<_>>(), names, "{what}");
            let compiled = hpmoe_core::plan(&under_dsl_names(built)).unwrap();
            // Not `assert_eq!`: the tables are kilobytes.
            assert!(compiled.table.to_bytes() == program.table_bytes().unwrap(), "{what}: schedule table");
            assert!(compiled.flags_bin == program.flags_bytes, "{what}: flag plan");
        }
    }
    // The comparison sees a difference: the balanced layer's backward, and a weight-gradient sum
    // over another expert's counts, differ.
    let dsl = ep2::moe_ffn_backward().taskflow().unwrap();
    assert!(!dsl.same_structure(&MoeShape::tiny(2).backward_taskflow().unwrap()));
    let mut other = MoeShape::tiny_natural(2).backward_taskflow().unwrap();
    let sum = other.families.iter_mut().find(|f| f.name == "gmm1_wgrad").unwrap();
    assert_eq!(sum.body[0].op, "matmul_tn_slots");
    let counts = &mut sum.body[0].args[3].dims[1].start;
    *counts = counts.clone() + 1;
    assert!(!dsl.same_structure(&other));
}

/// Renames the builder's inputs of `pass` at `shape` for the DSL.
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
fn the_dsl_natural_backward_runs_to_the_reference_gradients() {
    for (shape, program, _) in programs() {
        let (ranks, groups) = (shape.ranks, shape.wgrad_source_groups);
        let exec = Executor::for_program(&program, &OpImpls::for_program(&program).unwrap()).unwrap();
        let inputs = moe_backward_inputs(&shape, 23 + u64::from(ranks)).unwrap();
        let out = exec.run(&dsl_inputs(&shape, Pass::Backward, &inputs), &RunOptions::default()).unwrap();
        let want = moe_backward_reference(&shape, &inputs).unwrap();
        for (rank, grads) in want.iter().enumerate() {
            for name in MoeGradients::NAMES {
                let got = out.snapshot.get(rank as u32, &dsl_name(name)).unwrap();
                let diff = got.first_difference(grads.get(name).unwrap());
                assert_eq!(diff, None, "tiny_natural({ranks}) in {groups} groups: `{name}` on rank {rank}");
            }
        }
    }
}

#[test]
fn the_dsl_natural_training_step_runs_to_the_reference_output_activations_and_gradients() {
    for (shape, _, program) in programs() {
        let (ranks, groups) = (shape.ranks, shape.wgrad_source_groups);
        let exec = Executor::for_program(&program, &OpImpls::for_program(&program).unwrap()).unwrap();
        let inputs = moe_backward_inputs(&shape, 29 + u64::from(ranks)).unwrap();
        let out = exec.run(&dsl_inputs(&shape, Pass::TrainingStep, &inputs), &RunOptions::default()).unwrap();
        let forward = moe_reference(&shape, &inputs).unwrap();
        let saved = moe_saved(&shape, &inputs).unwrap();
        let want = moe_backward_reference(&shape, &inputs).unwrap();
        for rank in 0..shape.ranks {
            let (r, what) = (rank as usize, format!("tiny_natural({ranks}) in {groups} groups, rank {rank}"));
            assert_eq!(out.snapshot.get(rank, "OUT"), Some(&forward[r]), "{what}: `out`");
            for (name, tensor) in saved_names(&shape).iter().zip(&saved[r]) {
                assert_eq!(out.snapshot.get(rank, &dsl_name(name)), Some(tensor), "{what}: saved `{name}`");
            }
            for name in MoeGradients::NAMES {
                let got = out.snapshot.get(rank, &dsl_name(name)).unwrap();
                assert_eq!(got.first_difference(want[r].get(name).unwrap()), None, "{what}: `{name}`");
            }
        }
    }
}
