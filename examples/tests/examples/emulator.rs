//! The kernels users take away, run on the CPU emulation of the device API: what `cargo build`
//! wrote for `kernels/mini_moe.rs` (read back from the build script's folder, as a user would),
//! and the custom variant's kernel with its user op. Every tensor of every rank must equal the
//! sequential reference run bit for bit (the variant: its output against the layer's reference). Skipped, with a note, where g++ is missing.
//! The INT8-dispatch layer runs here too, at the tiny shapes, through the main job's emulator
//! check (its output against the quantised reference, and so against the host executor).
//! (The DSL flagship's `cargo build` kernels are the DeepSeek-V3 layer at EP 8 — gigabytes of
//! weights per rank — too large to emulate; the same code runs at the tiny shapes in
//! hpmoe-ascendc's emulator tests.)

use hpmoe_ascendc::emulator::{EmulateOptions, Emulation, KernelSources, compiler_available};
use hpmoe_core::cost::CostProfile;
use hpmoe_core::dsl::*;
use hpmoe_examples::moe_emulator_check;
use hpmoe_examples::shared_expert::{self, SharedMoe};
use hpmoe_host::exec::{Inputs, OpImpls, SequentialRunner};
use hpmoe_host::moe::{DispatchPrecision, MoeShape};
use hpmoe_macros::taskflow;
use std::path::Path;

#[test]
fn the_build_scripts_mini_moe_kernel_runs_on_the_emulator() {
    let options = EmulateOptions::default();
    if !compiler_available(&options) {
        eprintln!("note: g++ not found; skipping the emulator test");
        return;
    }
    let dir = Path::new(env!("HPMOE_EXAMPLES_DIR"));
    let kernel = KernelSources::read_dir(dir, "mini_moe").unwrap_or_else(|e| panic!("{e}"));
    let source = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels/mini_moe.rs")).unwrap();
    let tf = hpmoe_core::syntax::parse_file(&source).unwrap().remove(0).taskflow;
    assert_eq!(tf.name, "mini_moe");
    let inputs = Inputs::random(&tf, 11);
    let emulation = Emulation::build(kernel.clone(), &options).unwrap_or_else(|e| panic!("{e}"));
    let run = emulation.run(&tf, &inputs).unwrap_or_else(|e| panic!("{e}"));
    // The reference: every tile in a topological order of the instance DAG, on one thread.
    let reference = SequentialRunner::new(&tf, &OpImpls::builtin()).unwrap().run(&inputs).unwrap();
    assert_eq!(run.first_difference(&reference.snapshot), None);
}

#[test]
fn the_custom_variant_runs_on_the_emulator() {
    for ranks in [2, 4] {
        match shared_expert::emulator_check(&SharedMoe::tiny(ranks), &CostProfile::ascend_a3_die(), 42) {
            Ok(None) => eprintln!("note: g++ not found; skipping the emulator test"),
            Ok(Some(check)) => {
                assert!(check.passed(), "tiny({ranks}): {:?}", check.first_difference);
                assert_eq!(check.elements, ranks as usize * 16 * 32);
            }
            Err(e) => panic!("tiny({ranks}): {e}"),
        }
    }
}

// The same taskflow through the macro: `kernels/mini_moe.rs`, compiled by rustc here.
include!("../../kernels/mini_moe.rs");

#[test]
fn the_macro_and_the_build_script_make_one_plan() {
    let program = mini_moe();
    let dir = Path::new(env!("HPMOE_EXAMPLES_DIR"));
    let file = |suffix: &str| std::fs::read(dir.join(format!("mini_moe{suffix}"))).unwrap();
    assert_eq!(program.table_bytes().unwrap(), file("_schedule.bin"), "one table");
    assert_eq!(program.flags_bytes, file("_flags.bin"), "one flag plan");
    assert_eq!(program.kernel_source.unwrap().as_bytes(), file(".cpp"));
    assert_eq!(program.kernel_header.as_bytes(), file("_schedule.h"));
    assert_eq!(program.kernel_launcher.as_bytes(), file("_launch.cpp"));
    // The kernel expects the table it ships with: one checksum.
    let checksum = program.table().unwrap().checksum();
    assert!(program.kernel_header.contains(&format!("#define HPMOE_MINI_MOE_CHECKSUM 0x{checksum:08X}u")));
    assert_eq!(hpmoe_ascendc::flags::plan_checksum(program.flags_bytes).map(|_| ()), Some(()));
    assert!(program.flag_plan().is_ok(), "the flag plan names the table");
}

#[test]
fn the_macros_kernel_runs_on_the_emulator() {
    let options = EmulateOptions::default();
    if !compiler_available(&options) {
        eprintln!("note: g++ not found; skipping the emulator test");
        return;
    }
    let program = mini_moe();
    let tf = program.taskflow().unwrap();
    let kernel = KernelSources::of_program(&program).unwrap_or_else(|e| panic!("{e}"));
    let inputs = Inputs::random(&tf, 5);
    let run = Emulation::build(kernel, &options)
        .unwrap_or_else(|e| panic!("{e}"))
        .run(&tf, &inputs)
        .unwrap_or_else(|e| panic!("{e}"));
    let impls = OpImpls::for_program(&program).unwrap();
    let host = hpmoe_host::exec::Executor::for_program(&program, &impls).unwrap();
    let host = host.run(&inputs, &hpmoe_host::exec::RunOptions::default()).unwrap();
    assert_eq!(run.first_difference(&host.snapshot), None);
}

#[test]
fn the_int8_dispatch_layer_runs_on_the_emulator() {
    for shape in [MoeShape::tiny(2), MoeShape::tiny_natural(2)] {
        let shape = shape.with_dispatch(DispatchPrecision::Int8);
        match moe_emulator_check(&shape, &CostProfile::ascend_a3_die(), 42) {
            Ok(None) => eprintln!("note: g++ not found; skipping the emulator test"),
            Ok(Some(check)) => {
                assert!(check.passed(), "{shape:?}: {:?}", check.first_difference);
                assert_eq!(check.elements, 2 * 16 * 32);
            }
            Err(e) => panic!("{shape:?}: {e}"),
        }
    }
}
