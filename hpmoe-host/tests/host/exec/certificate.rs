//! Every constructor of the executor certifies its table first: a table with one wait deleted and
//! its checksum resealed (which decodes: it breaks no invariant the decoder checks) is refused with
//! the certificate's error, naming the instances; only the fault-injection constructor takes it.

use hpmoe_core::certify::CertFault;
use hpmoe_core::dsl::Program;
use hpmoe_core::dsl::pack::pack;
use hpmoe_core::table::{NO_WAIT, ScheduleTable, TableView};
use hpmoe_host::exec::{ExecError, Executor, OpImpls};
use hpmoe_host::moe::MoeShape;

/// `table` with the wait of its first waiting entry deleted, decoded from a resealed blob.
fn without_first_wait(table: &ScheduleTable) -> ScheduleTable {
    let view = table.view();
    let mut entries = view.entries.to_vec();
    let i = entries.iter().position(|e| e.wait().is_some()).expect("a waiting entry");
    entries[i].wait_counter = NO_WAIT;
    entries[i].wait_target = 0;
    let blob = TableView { entries: &entries, ..view }.to_owned().to_bytes();
    ScheduleTable::from_bytes(&blob).expect("a deleted wait decodes")
}

/// The error is the certificate's, for a dependency the tampered table leaves unenforced.
fn refused_by_the_certificate(result: Result<Executor, ExecError>) {
    let err = result.expect_err("a tampered table was accepted");
    let cert = err.certificate().unwrap_or_else(|| panic!("not the certificate's error: {err}"));
    assert!(matches!(cert.fault, CertFault::Unenforced | CertFault::Target), "{err}");
    assert!(err.to_string().contains("not certified") && err.to_string().contains(" on rank "), "{err}");
}

#[test]
fn every_constructor_refuses_a_table_with_a_deleted_wait() {
    let tf = MoeShape::tiny(2).taskflow().unwrap();
    let impls = OpImpls::builtin();
    let plain = hpmoe_core::compile(&tf, &hpmoe_core::schedule::SimpleCost::default()).unwrap();
    assert!(Executor::new(&tf, &plain.table, &impls).is_ok());
    refused_by_the_certificate(Executor::new(&tf, &without_first_wait(&plain.table), &impls));

    let mut planned = hpmoe_core::plan(&tf).unwrap();
    assert!(Executor::for_compiled(&tf, &planned, &impls).is_ok());
    let tampered = without_first_wait(&planned.table);
    refused_by_the_certificate(Executor::with_flags(&tf, &tampered, &planned.flags, &impls));
    // The fault-injection constructor takes it: the run-time diagnostics are what it tests.
    assert!(Executor::uncertified_for_fault_injection(&tf, &tampered, Some(&planned.flags), &impls).is_ok());
    planned.table = tampered;
    refused_by_the_certificate(Executor::for_compiled(&tf, &planned, &impls));
}

#[test]
fn a_program_with_a_deleted_wait_is_refused() {
    let tf = MoeShape::tiny(2).taskflow().unwrap();
    let planned = hpmoe_core::plan(&tf).unwrap();
    let ir_json: &'static str = Box::leak(tf.to_json().into_boxed_str());
    let table_packed: &'static [u8] = Box::leak(pack(&planned.table.to_bytes()).into_boxed_slice());
    let flags_bytes: &'static [u8] = Box::leak(planned.flags_bin.clone().into_boxed_slice());
    let program = Program {
        name: "tiny",
        ir_json,
        table_packed,
        flags_bytes,
        grids: &[],
        tiles: &[],
        user_ops: &[],
        kernel_source: Err("not emitted"),
        kernel_header: "",
        kernel_launcher: "",
    };
    let impls = OpImpls::builtin();
    assert!(Executor::for_program(&program, &impls).is_ok());
    // The tampered table, and its flag plan resealed to name the new checksum.
    let tampered = without_first_wait(&planned.table);
    let mut flags = planned.flags_bin.clone();
    flags[32..36].copy_from_slice(&tampered.checksum().to_le_bytes());
    let crc = crc32fast::hash(&flags[16..]);
    flags[12..16].copy_from_slice(&crc.to_le_bytes());
    let tampered = Program {
        table_packed: Box::leak(pack(&tampered.to_bytes()).into_boxed_slice()),
        flags_bytes: Box::leak(flags.into_boxed_slice()),
        ..program
    };
    assert!(tampered.flag_plan().is_ok(), "the resealed flag plan decodes");
    refused_by_the_certificate(Executor::for_program(&tampered, &impls));
}
