//! The MoE-FFN backward and training-step kernels (issue 12 item 6): the backward and training
//! step of `MoeShape::tiny(2)`, `tiny_natural(2)` (the gathering ops, guarded tiles and the
//! weight gradients natural routing sums on chip, `matmul_tn_slots` and
//! `matmul_tn_slots_accumulate`, in one group of sources and in a chain of two) and their
//! INT8-dispatched forms, emitted as
//! AscendC and run on the CPU emulation of the device API, give the host executor's every
//! tensor and the plain-loop reference's gradients, bitwise; the DeepSeek-V3 EP 8 backward and
//! training step pass the forward flagship's g++ syntax check, and the natural backward at that
//! size schedules and emits. The C++ parts are skipped, with a note, where g++ is missing.

use crate::common;

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
    // The weight gradients in one slot sum over both sources and in a chain of two, one source
    // each (the second link's slot and counts at a rank-dependent offset).
    for groups in [1, 2] {
        backward_kernels_equal_the_executor_and_the_reference(&MoeShape::tiny_natural(2).with_wgrad_groups(groups));
    }
    // With a relay per rank before the forward's weighted sums and the backward's sums.
    backward_kernels_equal_the_executor_and_the_reference(&MoeShape::tiny_natural(2).with_relay());
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

/// The DeepSeek-V3 EP 8 backward and training step (the shapes the main job simulates: each
/// expert's weight gradients in one tile per column block) emit their calls and pass the same
/// g++ syntax check as the forward's flagship kernel (`tests/emit.rs`): the kernel's NPU build
/// against the declaration-only devkit, and its launcher's.
#[test]
fn the_deepseek_v3_backward_and_training_step_pass_the_syntax_check() {
    let shape = MoeShape::deepseek_v3(8, 4096);
    let dir = common::temp_dir("moe-backward-ep8");
    for pass in [Pass::Backward, Pass::TrainingStep] {
        let tf = shape.pass_taskflow(pass).unwrap();
        let compiled = hpmoe_core::plan(&tf).unwrap_or_else(|d| panic!("{}", d.render(&tf.sources)));
        let kernel = emit(&tf, &compiled).unwrap_or_else(|e| panic!("{}: {e}", pass.name()));
        for call in ["hpmoe::MatmulNtTile(", "hpmoe::MatmulTnTile(", "SwigluBackward(", "SumTopk("] {
            assert!(kernel.cpp.contains(call), "{}: {call}", pass.name());
        }
        // The table lives in the .bin; the source stays small.
        assert!(kernel.cpp.len() < 32 * 1024, "{}.cpp is {} bytes", kernel.name, kernel.cpp.len());
        assert_eq!(kernel.table_bin.len(), kernel.table.total_bytes());
        common::syntax_check(&kernel, &dir.join(pass.name()));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The DeepSeek-V3 EP 8 backward under natural routing (the gathering ops, guarded tiles, weight
/// gradients summed on chip over the experts' slots and written) schedules, emits its gathering calls
/// and on-chip sums (with their fixed-split Matmul group) and passes the same syntax check.
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
        "hpmoe::MatmulTnSlotsTile<true>(",
    ] {
        assert!(kernel.cpp.contains(call), "natural backward: {call}");
    }
    // One group of sources per weight gradient at EP 8: each is written, nothing zeroes it first
    // and no slot sum adds.
    assert!(!kernel.cpp.contains("hpmoe::MatmulTnSlotsTile<false>("), "natural backward: an adding slot sum");
    assert!(!tf.families.iter().any(|f| f.name.ends_with("_wgrad_zero")), "natural backward: a zeroing family");
    assert!(!kernel.cpp.contains("hpmoe::MatmulTnAccumulateTile("), "natural backward: a per-block chain is left");
    assert!(kernel.launcher.contains(", true},"), "natural backward: no fixed-split Matmul group");
    let dir = common::temp_dir("moe-backward-natural-ep8");
    common::syntax_check(&kernel, &dir);
    let _ = std::fs::remove_dir_all(&dir);
}
