//! The MoE-FFN backward and training-step kernels (issue 12 item 6): the backward and training
//! step of `MoeShape::tiny(2)`, `tiny_natural(2)` (the gathering ops, guarded tiles and the
//! zeroed weight-gradient chains of natural routing) and their INT8-dispatched forms, emitted as
//! AscendC and run on the CPU emulation of the device API, give the host executor's every
//! tensor and the plain-loop reference's gradients, bitwise.
//! Skipped, with a note, where g++ is missing.

mod common;

use hpmoe_ascendc::emit;
use hpmoe_ascendc::emulator::Emulation;
use hpmoe_host::exec::moe_backward_reference::{MoeGradients, moe_backward_inputs, moe_backward_reference};
use hpmoe_host::exec::{Executor, OpImpls, RunOptions};
use hpmoe_host::moe::{DispatchPrecision, MoeShape, Pass};

#[test]
fn the_backward_and_training_step_kernels_equal_the_executor_and_the_reference() {
    backward_kernels_equal_the_executor_and_the_reference(&MoeShape::tiny(2));
}

#[test]
fn the_natural_backward_and_training_step_kernels_equal_the_executor_and_the_reference() {
    backward_kernels_equal_the_executor_and_the_reference(&MoeShape::tiny_natural(2));
}

#[test]
fn the_int8_dispatched_backward_and_training_step_kernels_equal_the_executor_and_the_reference() {
    for shape in [MoeShape::tiny(2), MoeShape::tiny_natural(2)] {
        backward_kernels_equal_the_executor_and_the_reference(&shape.with_dispatch(DispatchPrecision::Int8));
    }
}

fn backward_kernels_equal_the_executor_and_the_reference(shape: &MoeShape) {
    let inputs = moe_backward_inputs(shape, 17).unwrap();
    let want = moe_backward_reference(shape, &inputs).unwrap();
    for pass in [Pass::Backward, Pass::TrainingStep] {
        let tf = shape.pass_taskflow(pass).unwrap();
        let compiled = hpmoe_core::plan(&tf).unwrap_or_else(|d| panic!("{}", d.render(&tf.sources)));
        let kernel = emit(&tf, &compiled).unwrap_or_else(|e| panic!("{}: {e}", pass.name()));
        let Some(options) = common::emulator_options() else { return };
        let run = Emulation::build(&kernel, &options).and_then(|e| e.run(&tf, &inputs));
        let run = run.unwrap_or_else(|e| panic!("{}: {e}", pass.name()));
        let host = Executor::for_compiled(&tf, &compiled, &OpImpls::builtin()).unwrap();
        let host = host.run(&inputs, &RunOptions::default()).unwrap();
        assert_eq!(run.first_difference(&host.snapshot), None, "{}: emulated kernel vs executor", pass.name());
        for (rank, grads) in want.iter().enumerate() {
            for name in MoeGradients::NAMES {
                assert_eq!(run.get(rank as u32, name), grads.get(name), "{}: `{name}` on rank {rank}", pass.name());
            }
        }
    }
}

#[test]
fn the_deepseek_v3_backward_and_training_step_emit() {
    let shape = MoeShape::deepseek_v3(8, 4096);
    for pass in [Pass::Backward, Pass::TrainingStep] {
        let tf = shape.pass_taskflow(pass).unwrap();
        let compiled = hpmoe_core::plan(&tf).unwrap_or_else(|d| panic!("{}", d.render(&tf.sources)));
        let kernel = emit(&tf, &compiled).unwrap_or_else(|e| panic!("{}: {e}", pass.name()));
        for call in ["hpmoe::MatmulNtTile(", "hpmoe::MatmulTnTile(", "SwigluBackward(", "SumTopk("] {
            assert!(kernel.cpp.contains(call), "{}: {call}", pass.name());
        }
    }
}

#[test]
fn the_deepseek_v3_natural_backward_schedules_and_emits() {
    let shape = MoeShape::deepseek_v3_natural(8, 4096);
    let tf = shape.backward_taskflow().unwrap();
    let compiled = hpmoe_core::plan(&tf).unwrap_or_else(|d| panic!("{}", d.render(&tf.sources)));
    let kernel = emit(&tf, &compiled).unwrap_or_else(|e| panic!("natural backward: {e}"));
    for call in [
        "hpmoe::GatherScaleRowsRepeat(",
        "hpmoe::GatherRowDotTopk(",
        "hpmoe::GatherSumTopk(",
        "hpmoe::MatmulTnAccumulateTile(",
    ] {
        assert!(kernel.cpp.contains(call), "natural backward: {call}");
    }
}
