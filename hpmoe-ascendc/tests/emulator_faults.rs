//! Device-side fault injection on the CPU emulator: each fault must stop the run with an error
//! that says what happened — never a completed run, never a silent wrong answer. Skipped, with a
//! note, where g++ is missing.

mod common;

use common::taskflows::small;
use hpmoe_ascendc::diag::DiagStatus;
use hpmoe_ascendc::emulator::{EmulateError, EmulateOptions, Emulation, EmulatorFailure, compiler_available};
use hpmoe_ascendc::{EmitOptions, FlagPolicy, KernelFiles, emit_with};
use hpmoe_core::CompileOptions;
use hpmoe_core::exec::Inputs;
use hpmoe_core::model::Taskflow;
use hpmoe_core::schedule::SimpleCost;
use std::path::Path;

fn options() -> Option<EmulateOptions> {
    let options = EmulateOptions {
        include_dirs: vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cpp")],
        ..EmulateOptions::default()
    };
    if compiler_available(&options) {
        Some(options)
    } else {
        eprintln!("note: g++ not found; skipping the emulator fault test");
        None
    }
}

fn kernel_of(tf: &Taskflow, flags: bool) -> KernelFiles {
    let options = CompileOptions { flags: FlagPolicy { enabled: flags, ..FlagPolicy::default() } };
    let compiled = hpmoe_core::compile_with(tf, &SimpleCost::default(), &options)
        .unwrap_or_else(|d| panic!("{}", d.render(&tf.sources)));
    let emit = EmitOptions { includes: vec!["user_ops.h".into()], ..EmitOptions::default() };
    emit_with(tf, &compiled, &emit).unwrap()
}

/// The failure of a run that must not complete.
fn failure(result: Result<hpmoe_ascendc::EmulatedRun, EmulateError>) -> EmulatorFailure {
    match result {
        Ok(_) => panic!("the faulty run completed"),
        Err(EmulateError::Failed(f)) => *f,
        Err(e) => panic!("the run failed without a report: {e}"),
    }
}

/// Every core of every rank recorded that it rejected the table or flag plan, with one of
/// `details` (`HPMOE_TABLE_*`).
fn every_core_rejected(f: &EmulatorFailure, details: &[u32]) {
    assert!(!f.diagnostics.is_empty(), "{f}");
    for d in &f.diagnostics {
        for r in &d.records {
            assert_eq!(r.status, DiagStatus::BadTable, "{f}");
            assert!(details.contains(&r.detail), "{f}");
        }
    }
}

#[test]
fn a_flipped_byte_in_the_table_is_rejected_by_every_core() {
    let Some(mut options) = options() else { return };
    let tf = small();
    let kernel = kernel_of(&tf, true);
    let mut table = kernel.table_bin.clone();
    let at = table.len() - 40; // inside the entries or signals, past the checksummed header
    table[at] ^= 0x10;
    let inputs = Inputs::random(&tf, 1);
    // With the CRC check compiled in, every core rejects the table before its first entry.
    options.defines = vec!["HPMOE_VERIFY_TABLE_CRC=1".into()];
    let emulation = Emulation::build(&kernel, &options).unwrap_or_else(|e| panic!("{e}"));
    let f = failure(emulation.run_with_blobs(&tf, &inputs, &table, &kernel.flags_bin));
    every_core_rejected(&f, &[6]); // HPMOE_TABLE_CORRUPT
    assert!(f.records.iter().all(|r| r.contains("rejected the table")), "{f}");
    // Without it (the default: a scalar CRC of a large table costs milliseconds per launch) the
    // damaged table runs, and this flip sends a signal to a PE that does not exist: the emulator
    // stops the run there instead of letting it hang or corrupt memory.
    options.defines.clear();
    let emulation = Emulation::build(&kernel, &options).unwrap_or_else(|e| panic!("{e}"));
    let f = failure(emulation.run_with_blobs(&tf, &inputs, &table, &kernel.flags_bin));
    assert!(f.findings.iter().any(|x| x.kind == "shmem_bad_pe"), "{f}");
}

#[test]
fn another_taskflows_table_is_rejected_by_every_core() {
    let Some(options) = options() else { return };
    let tf = small();
    let kernel = kernel_of(&tf, true);
    let other = kernel_of(&tf, false); // the same taskflow without flags: another, valid table
    assert_ne!(kernel.table_bin, other.table_bin);
    let emulation = Emulation::build(&kernel, &options).unwrap_or_else(|e| panic!("{e}"));
    let f = failure(emulation.run_with_blobs(&tf, &Inputs::random(&tf, 1), &other.table_bin, &other.flags_bin));
    every_core_rejected(&f, &[3, 4]); // HPMOE_TABLE_WRONG_SIZE or _WRONG_CHECKSUM
}

#[test]
fn a_runtime_without_the_quiet_before_the_signals_is_caught() {
    let Some(mut options) = options() else { return };
    let context = hpmoe_ascendc::runtime::RUNTIME_HEADERS.iter().find(|(n, _)| *n == "hpmoe/context.h").unwrap().1;
    let quiet = "        if (puts_) {\n            aclshmem_quiet();\n        } else {";
    assert!(context.contains(quiet), "context.h changed: update this test's patch");
    let patched = context.replace(quiet, "        if (puts_) {\n        } else {");
    options.runtime_overrides = vec![("hpmoe/context.h".into(), patched)];
    // The MoE layer's dispatch tiles put rows that several tiles on the destination consume: one
    // signal rides on the put, the others follow it after the (removed) quiet.
    let shape = hpmoe_core::moe::MoeShape::tiny(2);
    let tf = shape.taskflow().unwrap();
    let kernel = kernel_of(&tf, true);
    let emulation = Emulation::build(&kernel, &options).unwrap_or_else(|e| panic!("{e}"));
    let f = failure(emulation.run(&tf, &hpmoe_core::exec::moe_reference::moe_inputs(&shape, 7)));
    assert!(!f.findings.is_empty(), "the emulator said nothing: {f}");
}
