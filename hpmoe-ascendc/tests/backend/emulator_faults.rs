//! Device-side fault injection on the CPU emulator: each fault must stop the run with an error
//! that says what happened — never a completed run, never a silent wrong answer. The launcher
//! refuses a tampered table before the launch (the certificate check); the tests of what the
//! device itself says turn that off (`uncertified_for_fault_injection`) after checking the
//! refusal. Skipped, with a note, where g++ is missing.

use crate::common;

use common::taskflows::{quantize_blocks, small};
use hpmoe_ascendc::diag::DiagStatus;
use hpmoe_ascendc::emulator::{EmulateError, Emulation, EmulatorFailure, KernelSources, emulate};
use hpmoe_ascendc::{EmitOptions, FlagPolicy, KernelFiles, emit_with};
use hpmoe_core::CompileOptions;
use hpmoe_core::certify::CertFault;
use hpmoe_core::model::Taskflow;
use hpmoe_core::schedule::SimpleCost;
use hpmoe_core::table::{NO_WAIT, ScheduleTable, TableView};
use hpmoe_host::exec::Inputs;

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

/// The certificate check refused the run before the launch, with a fault of `faults`.
fn refused(result: Result<hpmoe_ascendc::EmulatedRun, EmulateError>, faults: &[CertFault]) {
    let err = result.expect_err("the tampered table ran");
    let cert = err.certificate().unwrap_or_else(|| panic!("not the certificate's refusal: {err}"));
    assert!(faults.contains(&cert.fault), "{err}");
    assert!(err.to_string().contains("not launched"), "{err}");
}

/// `kernel`'s table with the wait of its first waiting entry deleted and its checksum resealed,
/// and its flag plan resealed to name the new checksum: blobs every decoder accepts.
fn without_first_wait(kernel: &KernelFiles) -> (ScheduleTable, Vec<u8>) {
    let view = kernel.table.view();
    let mut entries = view.entries.to_vec();
    let i = entries.iter().position(|e| e.wait().is_some()).unwrap();
    entries[i].wait_counter = NO_WAIT;
    entries[i].wait_target = 0;
    let table = TableView { entries: &entries, ..view }.to_owned();
    let mut flags = kernel.flags_bin.clone();
    flags[32..36].copy_from_slice(&table.checksum().to_le_bytes());
    let crc = common::crc32_independent(&flags[16..]);
    flags[12..16].copy_from_slice(&crc.to_le_bytes());
    (table, flags)
}

#[test]
fn a_table_with_a_deleted_wait_is_refused_before_the_launch_by_every_entry_point() {
    let Some(options) = common::emulator_options() else { return };
    let tf = small();
    let kernel = kernel_of(&tf, true);
    let (table, flags) = without_first_wait(&kernel);
    let inputs = Inputs::random(&tf, 1);
    let faults = [CertFault::Unenforced, CertFault::Target];
    let emulation = Emulation::build(&kernel, &options).unwrap_or_else(|e| panic!("{e}"));
    refused(emulation.run_with_blobs(&tf, &inputs, &table.to_bytes(), &flags), &faults);
    // The same kernel sources carrying the tampered blobs as their own.
    let mut sources = KernelSources::of(&kernel);
    (sources.table_bin, sources.flags_bin, sources.table) = (table.to_bytes(), flags, table);
    let emulation = Emulation::build(sources.clone(), &options).unwrap_or_else(|e| panic!("{e}"));
    refused(emulation.run(&tf, &inputs), &faults);
    refused(emulate(&tf, sources, &inputs, &options), &faults);
}

#[test]
fn a_flipped_byte_in_the_table_is_rejected_by_every_core() {
    let Some(mut options) = common::emulator_options() else { return };
    let tf = small();
    let kernel = kernel_of(&tf, true);
    let mut table = kernel.table_bin.clone();
    let at = table.len() - 40; // inside the entries or signals, past the checksummed header
    table[at] ^= 0x10;
    let inputs = Inputs::random(&tf, 1);
    // The launcher's certificate check does not decode it; then the device's own checks.
    let emulation = Emulation::build(&kernel, &options).unwrap_or_else(|e| panic!("{e}"));
    refused(emulation.run_with_blobs(&tf, &inputs, &table, &kernel.flags_bin), &[CertFault::Decode]);
    options.uncertified_for_fault_injection = true;
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
    let Some(options) = common::emulator_options() else { return };
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
    let Some(mut options) = common::emulator_options() else { return };
    let context = hpmoe_ascendc::runtime::RUNTIME_HEADERS.iter().find(|(n, _)| *n == "hpmoe/context.h").unwrap().1;
    let quiet = "        if (puts_) {\n            aclshmem_quiet();\n        } else {";
    assert!(context.contains(quiet), "context.h changed: update this test's patch");
    let patched = context.replace(quiet, "        if (puts_) {\n        } else {");
    options.runtime_overrides = vec![("hpmoe/context.h".into(), patched)];
    // The MoE layer's dispatch tiles put rows that several tiles on the destination consume: one
    // signal rides on the put, the others follow it after the (removed) quiet.
    let shape = hpmoe_host::moe::MoeShape::tiny(2);
    let tf = shape.taskflow().unwrap();
    let kernel = kernel_of(&tf, true);
    let emulation = Emulation::build(&kernel, &options).unwrap_or_else(|e| panic!("{e}"));
    let f = failure(emulation.run(&tf, &hpmoe_host::exec::moe_reference::moe_inputs(&shape, 7)));
    assert!(!f.findings.is_empty(), "the emulator said nothing: {f}");
}

/// Quantize's per-pipe syncs (`hpmoe/vector_ops.h`, in place of full barriers) are each
/// needed, and the strict emulator says so: without the DMA-out → DMA-in event, or with the
/// vector → scalar event in its place, reading back the scales just stored is an unsynchronised
/// read of global memory; without the vector → scalar event, so is the scalar unit's read of the
/// scales the vector unit converted.
#[test]
fn quantize_with_a_sync_too_narrow_is_caught() {
    let Some(options) = common::emulator_options() else { return };
    let ops = hpmoe_ascendc::runtime::RUNTIME_HEADERS.iter().find(|(n, _)| *n == "hpmoe/vector_ops.h").unwrap().1;
    let store_load = "        vec.LoadAfterStore();\n        vec.Load(scale.Flat(), st, amax);\n";
    let scalar = "        vec.ScalarAfterVector();\n        for (uint32_t c = 0; c < col_tiles; ++c) {\n";
    for line in [store_load, scalar] {
        assert_eq!(ops.matches(line).count(), 1, "vector_ops.h changed: update this test's patches");
    }
    let tf = quantize_blocks();
    let kernel = kernel_of(&tf, false);
    let cases = [
        (ops.replace(store_load, "        vec.Load(scale.Flat(), st, amax);\n"), "DataCopyPad"),
        (
            ops.replace(store_load, "        vec.ScalarAfterVector();\n        vec.Load(scale.Flat(), st, amax);\n"),
            "DataCopyPad",
        ),
        (ops.replace(scalar, "        for (uint32_t c = 0; c < col_tiles; ++c) {\n"), "LocalTensor::GetValue"),
    ];
    for (patched, call) in cases {
        let mut options = options.clone();
        options.runtime_overrides = vec![("hpmoe/vector_ops.h".into(), patched)];
        let emulation = Emulation::build(&kernel, &options).unwrap_or_else(|e| panic!("{e}"));
        let f = failure(emulation.run(&tf, &Inputs::random(&tf, 3)));
        let first = f.findings.first().unwrap_or_else(|| panic!("the emulator said nothing: {f}"));
        assert_eq!((first.kind.as_str(), first.call.as_deref()), ("unsynchronised_read", Some(call)), "{f}");
    }
}

/// Recompiles `compiled`'s kernel files for `table` as if the compiler had made it: the kernel's
/// constants (checksum, shape) and the flag plan follow the tampered table, so the kernel accepts
/// it — the case the CRC cannot catch, where only the emulator stands between a wrong table and
/// corrupted memory or a hang.
fn kernel_for_table(tf: &Taskflow, mut compiled: hpmoe_core::Compiled, table: ScheduleTable) -> KernelFiles {
    compiled.flags_bin = hpmoe_core::schedule::flags::plan_bytes(
        &compiled.flags,
        &compiled.placement.queues,
        &tf.profile,
        table.checksum(),
    );
    compiled.table = table;
    let emit = EmitOptions { includes: vec!["user_ops.h".into()], wait_timeout_us: 200_000 };
    emit_with(tf, &compiled, &emit).unwrap()
}

fn compiled_without_flags(tf: &Taskflow) -> hpmoe_core::Compiled {
    hpmoe_core::compile_with(tf, &SimpleCost::default(), &CompileOptions::without_flags())
        .unwrap_or_else(|d| panic!("{}", d.render(&tf.sources)))
}

#[test]
fn a_counter_target_one_too_high_times_out_with_a_decoded_record() {
    let Some(mut options) = common::emulator_options() else { return };
    // The kernel's own bound (200 ms, emitted below) times out and writes its record.
    options.kernel_wait_timeout_us = None;
    let tf = small();
    let compiled = compiled_without_flags(&tf);
    let emit = EmitOptions { includes: vec!["user_ops.h".into()], wait_timeout_us: 200_000 };
    let mut kernel = emit_with(&tf, &compiled, &emit).unwrap();
    // The first waiting entry of the table: raise its target by one in the blob (the host-side
    // decoder would refuse a target no signals reach; the device cannot count them), reseal the
    // CRC, and regenerate the constants the kernel checks so it accepts the blob.
    let (index, entry) = kernel.table.entries().iter().enumerate().find(|(_, e)| e.wait().is_some()).unwrap();
    let wait = entry.wait().unwrap();
    let core = kernel
        .table
        .cores()
        .iter()
        .position(|c| (c.first_entry..c.first_entry + c.entry_count).contains(&(index as u32)))
        .unwrap();
    let position = index as u32 - kernel.table.cores()[core].first_entry;
    let mut blob = kernel.table_bin.clone();
    let entries_at = u32::from_le_bytes(blob[80..84].try_into().unwrap()) as usize; // hpmoe_table_header.entries_section
    let target_at = entries_at + 16 * index + 8; // hpmoe_entry_record.wait_target
    let target = u16::from_le_bytes(blob[target_at..target_at + 2].try_into().unwrap());
    assert_eq!(u32::from(target), wait.target);
    blob[target_at..target_at + 2].copy_from_slice(&(target + 1).to_le_bytes());
    let old = kernel.table.checksum();
    let crc = common::crc32_independent(&blob[16..]);
    blob[12..16].copy_from_slice(&crc.to_le_bytes());
    kernel.header = kernel.header.replace(&format!("0x{old:08X}u"), &format!("0x{crc:08X}u"));
    // The flag plan names its table's checksum (byte 32) under its own CRC.
    let mut flags = kernel.flags_bin.clone();
    flags[32..36].copy_from_slice(&crc.to_le_bytes());
    let flags_crc = common::crc32_independent(&flags[16..]);
    let old_flags_crc = u32::from_le_bytes(flags[12..16].try_into().unwrap());
    flags[12..16].copy_from_slice(&flags_crc.to_le_bytes());
    kernel.header = kernel.header.replace(&format!("0x{old_flags_crc:08X}u"), &format!("0x{flags_crc:08X}u"));
    let emulation = Emulation::build(&kernel, &options).unwrap_or_else(|e| panic!("{e}"));
    // The launcher's check decodes the blob as the host does, which refuses the unreachable target.
    refused(emulation.run_with_blobs(&tf, &Inputs::random(&tf, 1), &blob, &flags), &[CertFault::Decode]);
    options.uncertified_for_fault_injection = true;
    let emulation = Emulation::build(&kernel, &options).unwrap_or_else(|e| panic!("{e}"));
    let f = failure(emulation.run_with_blobs(&tf, &Inputs::random(&tf, 1), &blob, &flags));
    let family =
        kernel.table.view().coords_of_instance(entry.instance).map(|(fam, _)| tf.families[fam].name.clone()).unwrap();
    let core_name = kernel.table.view().core_name(core as u32);
    // The tampered core's record names its entry, tile, counter, expected and seen values: as the
    // wait that timed out, or — when a core downstream of it timed out first (both waits have the
    // same bound) — as the wait it abandoned when that core stopped the rank.
    let (c, t) = (wait.counter, wait.target);
    let timed_out = format!("{core_name}: timed out before entry {position} ({family}(");
    let timed_out_values = format!("waiting for counter {c} to reach {}; it held {t}", t + 1);
    let stopped = format!("{core_name}: stopped before entry {position} ({family}(");
    let stopped_values = format!("(counter {c} at {t} of {})", t + 1);
    assert!(
        f.records.iter().any(|r| (r.starts_with(&timed_out) && r.ends_with(&timed_out_values))
            || (r.starts_with(&stopped) && r.ends_with(&stopped_values))),
        "{f}"
    );
}

#[test]
fn a_table_whose_tiles_reach_outside_their_tensors_is_stopped_before_memory_is_corrupted() {
    let Some(mut options) = common::emulator_options() else { return };
    let tf = common::taskflows::guarded();
    let compiled = compiled_without_flags(&tf);
    // Reshape the gmm family's grid from [2, 2] (src, b) to [4, 1]: the same instances, now
    // decoded as src = 0..3, whose rows lie past the 16 of `recv` for src >= 2. A consistent table
    // with a valid checksum: only run time can tell.
    let mut doc: serde_json::Value = serde_json::from_str(&compiled.table.to_json()).unwrap();
    for f in doc["families"].as_array_mut().unwrap() {
        if f["name"] == "gmm" {
            assert_eq!(f["grid"], serde_json::json!([2, 2]));
            f["grid"] = serde_json::json!([4, 1]);
        }
    }
    for rank in doc["ranks"].as_array_mut().unwrap() {
        for core in rank["cores"].as_array_mut().unwrap() {
            for e in core["entries"].as_array_mut().unwrap() {
                e.as_object_mut().unwrap().remove("coords");
            }
        }
    }
    let table = ScheduleTable::from_json(&doc.to_string()).unwrap();
    let kernel = kernel_for_table(&tf, compiled, table);
    let emulation = Emulation::build(&kernel, &options).unwrap_or_else(|e| panic!("{e}"));
    let mut inputs = Inputs::random(&tf, 3);
    for rank in 0..2 {
        let counts = hpmoe_host::exec::HostTensor::from_f32(hpmoe_core::model::DType::I32, &[2], &[8.0, 8.0]);
        inputs.set_rank("send_counts", rank, counts);
        let slots: Vec<f32> = (0..16).map(|i| (i % 16) as f32).collect();
        inputs.set_rank(
            "slot_of",
            rank,
            hpmoe_host::exec::HostTensor::from_f32(hpmoe_core::model::DType::I32, &[8, 2], &slots),
        );
    }
    // The certificate check refuses the reshaped grid: the device would run other tiles.
    refused(emulation.run(&tf, &inputs), &[CertFault::Shape]);
    options.uncertified_for_fault_injection = true;
    let emulation = Emulation::build(emulation.kernel().clone(), &options).unwrap_or_else(|e| panic!("{e}"));
    let f = failure(emulation.run(&tf, &inputs));
    assert!(
        f.findings
            .iter()
            .any(|x| x.kind == "gm_out_of_bounds" && x.tile.as_deref().is_some_and(|t| t.contains("gmm("))),
        "{f}"
    );
}
