//! The independent certificate check (`hpmoe_core::certify::verify`): the tables hpmoe plans are
//! certified, with or without hardware flags, up to the DeepSeek-V3 layer; a table is refused
//! when its flag plan is left out, when a wait is deleted, when a target is lowered, and when two
//! entries of a core swap places across a dependency; and the clocks' memory budget changes how
//! many passes the check makes, never its answer.

use hpmoe_core::certify::{CertFault, FlagSync, certify, certify_blobs, verify, verify_within};
use hpmoe_core::ids::RankId;
use hpmoe_core::schedule::SimpleCost;
use hpmoe_core::table::{EntryRecord, NO_WAIT, ScheduleTable, TableView};
use hpmoe_host::moe::MoeShape;

fn flags(c: &hpmoe_core::Compiled) -> FlagSync<'_> {
    FlagSync::from(&c.flags)
}

#[test]
fn planned_tables_are_certified() {
    for shape in [MoeShape::tiny(2), MoeShape::tiny(4), MoeShape::tiny_natural(2)] {
        let tf = shape.taskflow().unwrap();
        let c = hpmoe_core::plan(&tf).unwrap();
        let cert = verify(&tf, &c.expanded, c.table.view(), Some(flags(&c))).unwrap();
        assert_eq!(cert.dependencies, c.expanded.dag.edges() as u64);
        let plain = hpmoe_core::compile(&tf, &SimpleCost::default()).unwrap();
        verify(&tf, &plain.expanded, plain.table.view(), None).unwrap();
    }
}

#[test]
fn a_flagged_table_without_its_flag_plan_is_refused() {
    let tf = MoeShape::tiny(2).taskflow().unwrap();
    let c = hpmoe_core::plan(&tf).unwrap();
    assert!(!c.flags.edges.is_empty());
    let err = verify(&tf, &c.expanded, c.table.view(), None).unwrap_err();
    assert_eq!(err.fault, CertFault::Unenforced, "{err}");
}

/// `table` with its entries replaced.
fn with_entries<'a>(view: TableView<'a>, entries: &'a [EntryRecord]) -> TableView<'a> {
    TableView { entries, ..view }
}

#[test]
fn a_deleted_wait_or_a_lowered_target_is_refused() {
    let tf = MoeShape::tiny(2).taskflow().unwrap();
    let c = hpmoe_core::compile(&tf, &SimpleCost::default()).unwrap();
    let view = c.table.view();
    let (mut deleted, mut lowered) = (0, 0);
    for (i, e) in view.entries.iter().enumerate() {
        if e.wait().is_none() {
            continue;
        }
        let mut entries = view.entries.to_vec();
        entries[i].wait_counter = NO_WAIT;
        entries[i].wait_target = 0;
        assert!(verify(&tf, &c.expanded, with_entries(view, &entries), None).is_err(), "entry {i} without its wait");
        deleted += 1;
        let mut entries = view.entries.to_vec();
        entries[i].wait_target -= 1;
        let err = verify(&tf, &c.expanded, with_entries(view, &entries), None).unwrap_err();
        assert_eq!(err.fault, CertFault::Target, "{err}");
        lowered += 1;
    }
    assert!(deleted > 10 && lowered == deleted);
}

#[test]
fn swapping_dependent_entries_of_a_core_is_refused() {
    let tf = MoeShape::tiny(2).taskflow().unwrap();
    let c = hpmoe_core::compile(&tf, &SimpleCost::default()).unwrap();
    let view = c.table.view();
    let space = &c.expanded.space;
    let mut refused = 0;
    for core in 0..view.cores.len() as u32 {
        let rank = RankId::new(core / view.header.cores_per_rank);
        let first = view.cores[core as usize].first_entry as usize;
        let count = view.cores[core as usize].entry_count as usize;
        for i in first..first + count.saturating_sub(1) {
            let (a, b) = (space.node(rank, view.entries[i].instance), space.node(rank, view.entries[i + 1].instance));
            if !c.expanded.dag.succ.row(a).contains(&b) {
                continue;
            }
            let mut entries = view.entries.to_vec();
            entries.swap(i, i + 1);
            assert!(verify(&tf, &c.expanded, with_entries(view, &entries), None).is_err(), "swap {i}");
            refused += 1;
        }
    }
    assert!(refused > 0, "no core runs two dependent tiles back to back");
}

/// The planned DeepSeek-V3 table at `ep` is certified, with the default clock budget and with
/// one of 1 MiB that forces more passes (bands of a few cores), to the same certificate.
fn deepseek_v3_is_certified(ep: u32) {
    let tf = MoeShape::deepseek_v3(ep, 4096).taskflow().unwrap();
    let c = hpmoe_core::plan(&tf).unwrap();
    let cert = verify(&tf, &c.expanded, c.table.view(), Some(flags(&c))).unwrap_or_else(|e| panic!("EP {ep}: {e}"));
    assert_eq!(cert.dependencies, c.expanded.dag.edges() as u64, "EP {ep}");
    let small = verify_within(&tf, &c.expanded, c.table.view(), Some(flags(&c)), 1 << 20).unwrap();
    assert!(small.clock_passes > cert.clock_passes, "EP {ep}: {small:?} vs {cert:?}");
    assert_eq!((small.dependencies, small.happens_before_edges), (cert.dependencies, cert.happens_before_edges));
}

#[test]
fn the_deepseek_v3_table_at_ep_8_is_certified() {
    deepseek_v3_is_certified(8);
}

#[test]
#[ignore = "about 25 s in the dev profile (planning dominates); run with --ignored, or --release"]
fn the_deepseek_v3_table_at_ep_16_is_certified() {
    deepseek_v3_is_certified(16);
}

/// Every single-entry fault of `c`'s table of one kind: the errors `verify` gives with the
/// default budget and with one so small that each pass keeps a single core's clock entries.
fn budgets_agree(tf: &hpmoe_core::model::Taskflow, c: &hpmoe_core::Compiled, entries: &[EntryRecord]) {
    let view = with_entries(c.table.view(), entries);
    let big = verify(tf, &c.expanded, view, Some(flags(c)));
    let tiny = verify_within(tf, &c.expanded, view, Some(flags(c)), 1);
    match (&big, &tiny) {
        (Ok(a), Ok(b)) => assert_eq!(a.dependencies, b.dependencies),
        (Err(a), Err(b)) => assert_eq!(a.fault, b.fault, "{a} / {b}"),
        _ => panic!("the budget changed the answer: {big:?} / {tiny:?}"),
    }
}

#[test]
fn the_clock_budget_never_changes_the_answer() {
    let tf = MoeShape::tiny_natural(2).taskflow().unwrap();
    let c = hpmoe_core::plan(&tf).unwrap();
    let one_pass = verify(&tf, &c.expanded, c.table.view(), Some(flags(&c))).unwrap();
    let core_by_core = verify_within(&tf, &c.expanded, c.table.view(), Some(flags(&c)), 1).unwrap();
    assert_eq!(one_pass.clock_passes, 1);
    assert!(core_by_core.clock_passes > 1, "{core_by_core:?}");
    let entries = c.table.view().entries;
    for i in 0..entries.len() {
        let mut e = entries.to_vec();
        if e[i].wait().is_some() {
            e[i].wait_counter = NO_WAIT;
            e[i].wait_target = 0;
            budgets_agree(&tf, &c, &e);
        }
        if i + 1 < entries.len() {
            let mut e = entries.to_vec();
            e.swap(i, i + 1);
            budgets_agree(&tf, &c, &e);
        }
    }
}

/// `c`'s table with the wait of its first waiting entry deleted, as a blob with a valid
/// checksum (the decoder accepts it: a deleted wait breaks no invariant it checks).
fn without_first_wait(c: &hpmoe_core::Compiled) -> Vec<u8> {
    let view = c.table.view();
    let mut entries = view.entries.to_vec();
    let i = entries.iter().position(|e| e.wait().is_some()).unwrap();
    entries[i].wait_counter = NO_WAIT;
    entries[i].wait_target = 0;
    with_entries(view, &entries).to_owned().to_bytes()
}

#[test]
fn the_user_entry_points_certify_planned_tables_and_blobs_and_refuse_tampered_ones() {
    let tf = MoeShape::tiny_natural(2).taskflow().unwrap();
    let c = hpmoe_core::plan(&tf).unwrap();
    let edges = c.expanded.dag.edges() as u64;
    assert_eq!(certify(&tf, &c.table, Some(&c.flags)).unwrap().dependencies, edges);
    let table_bin = c.table.to_bytes();
    assert_eq!(certify_blobs(&tf, &table_bin, Some(&c.flags_bin)).unwrap().dependencies, edges);
    // Without the flag plan the table leaves dependencies unenforced.
    assert_eq!(certify_blobs(&tf, &table_bin, None).unwrap_err().fault, CertFault::Unenforced);

    let tampered = without_first_wait(&c);
    let decoded = ScheduleTable::from_bytes(&tampered).expect("the decoder accepts a deleted wait");
    let err = certify(&tf, &decoded, Some(&c.flags)).unwrap_err();
    assert!(matches!(err.fault, CertFault::Unenforced | CertFault::Target), "{err}");
    assert!(err.to_string().contains(" on rank "), "the error names instances: {err}");
    // The flag plan names the original table's checksum: the pair does not decode.
    assert_eq!(certify_blobs(&tf, &tampered, Some(&c.flags_bin)).unwrap_err().fault, CertFault::Decode);
    let err = certify_blobs(&tf, &tampered, None).unwrap_err();
    assert!(matches!(err.fault, CertFault::Unenforced | CertFault::Target), "{err}");

    // Another taskflow's table, and a taskflow that fails its checks.
    let other = MoeShape::tiny(2).taskflow().unwrap();
    assert_eq!(certify(&other, &c.table, Some(&c.flags)).unwrap_err().fault, CertFault::Shape);
    let mut broken = tf.clone();
    broken.families[0].grid.clear();
    broken.families[0].body.clear();
    let err = certify(&broken, &c.table, Some(&c.flags)).unwrap_err();
    assert_eq!(err.fault, CertFault::Taskflow, "{err}");
}
