//! The independent certificate check (`hpmoe_core::certify::verify`): the tables hpmoe plans are
//! certified, with or without hardware flags; a table is refused when its flag plan is left out,
//! when a wait is deleted, when a target is lowered, and when two entries of a core swap places
//! across a dependency.

use hpmoe_core::certify::{CertFault, FlagSync, verify};
use hpmoe_core::moe::MoeShape;
use hpmoe_core::schedule::SimpleCost;
use hpmoe_core::table::{EntryRecord, NO_WAIT, TableView};

fn flags(c: &hpmoe_core::Compiled) -> FlagSync<'_> {
    FlagSync { set_after: &c.flags.set_after, waits_before: &c.flags.waits_before }
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
    let per_rank = c.expanded.space.per_rank;
    let mut refused = 0;
    for core in 0..view.cores.len() as u32 {
        let rank = core / view.header.cores_per_rank;
        let first = view.cores[core as usize].first_entry as usize;
        let count = view.cores[core as usize].entry_count as usize;
        for i in first..first + count.saturating_sub(1) {
            let (a, b) = (rank * per_rank + view.entries[i].instance, rank * per_rank + view.entries[i + 1].instance);
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
