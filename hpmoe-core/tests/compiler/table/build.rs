//! Building a table from scheduler results, and what it refuses.

use super::fixture::{placement_of, queue_rows, tiny};
use hpmoe_core::ids::{CounterId, NodeId};
use hpmoe_core::model::CoreKind;
use hpmoe_core::schedule::Wait;
use hpmoe_core::table::{EntryRecord, NO_WAIT, Quantity, SignalRecord, TableError};

#[test]
fn tiny_table_has_every_core_entry_wait_and_signal() {
    let t = tiny().build("tiny");
    let h = *t.header();
    assert_eq!((h.ranks, h.cores_per_rank, h.aic_per_rank, h.aiv_per_aic), (2, 3, 1, 2));
    assert_eq!((h.families, h.instances_per_rank, h.counters_per_rank_max), (3, 7, 3));
    assert_eq!((h.entry_count, h.signal_count), (14, 12));
    assert_eq!(t.name(), "tiny");
    assert_eq!((0..3).map(|f| t.family_name(f)).collect::<Vec<_>>(), ["dispatch", "gmm", "combine"]);
    assert_eq!(t.counters_per_rank(), &[3, 3]);

    // Rank 1's AIC (global core 3) runs gmm[0] then gmm[1], each waiting for two puts.
    let gmm = t.core_entries(3);
    assert_eq!(gmm.len(), 2);
    assert_eq!(gmm[0].instance, 4);
    assert_eq!(gmm[0].wait(), Some(Wait { counter: CounterId::new(0), target: 2 }));
    assert_eq!(gmm[1].wait(), Some(Wait { counter: CounterId::new(1), target: 2 }));
    assert_eq!(t.entry_signals(&gmm[1]), &[SignalRecord { counter: 2, rank: 1, reserved: 0 }]);

    // Rank 1's first AIV (global core 4): dispatch[0, 0], dispatch[0, 1], combine.
    let aiv = t.core_entries(4);
    assert_eq!(aiv.iter().map(|e| e.instance).collect::<Vec<_>>(), [0, 1, 6]);
    assert_eq!(
        aiv[0],
        EntryRecord { instance: 0, wait_counter: NO_WAIT, wait_target: 0, signal_count: 1, first_signal: 8 }
    );
    assert_eq!(t.entry_signals(&aiv[1]), &[SignalRecord { counter: 1, rank: 0, reserved: 0 }]);
    assert_eq!(aiv[2].wait(), Some(Wait { counter: CounterId::new(2), target: 2 }));
    assert!(t.entry_signals(&aiv[2]).is_empty());

    let view = t.view();
    assert_eq!(view.coords_of_instance(3).unwrap(), (0, smallvec::smallvec![1, 1]));
    assert_eq!(view.coords_of_instance(5).unwrap(), (1, smallvec::smallvec![1]));
    assert_eq!(view.coords_of_instance(6).unwrap(), (2, smallvec::smallvec![]));
    assert_eq!(view.coords_of_instance(7), None);
    assert_eq!(view.core_kind(3), CoreKind::Aic);
    assert_eq!(view.core_name(5), "r1.aiv1");
}

#[test]
fn sizes_match_the_blob() {
    let t = tiny().build("tiny");
    let bytes = t.to_bytes();
    assert_eq!(t.total_bytes(), bytes.len());
    // 104 header + 3*28 families + 6*8 cores + 2*4 counters + 14*16 entries + 12*8 signals
    // + "tiny\0dispatch\0gmm\0combine\0" (26 bytes, padded to 28).
    assert_eq!(bytes.len(), 104 + 84 + 48 + 8 + 224 + 96 + 28);
    assert_eq!(t.bytes_per_entry(), bytes.len() as f64 / 14.0);
}

#[test]
fn same_inputs_give_identical_outputs() {
    let (a, b) = (tiny().build("tiny"), tiny().build("tiny"));
    assert_eq!(a.to_bytes(), b.to_bytes());
    assert_eq!(a.to_json(), b.to_json());
    assert_eq!(a.c_header("TINY_H"), b.c_header("TINY_H"));
    assert_eq!(a.to_rust_source("TINY"), b.to_rust_source("TINY"));
}

fn inconsistent(result: Result<hpmoe_core::table::ScheduleTable, TableError>, needle: &str) {
    match result {
        Err(TableError::Inconsistent(i)) => assert!(i.to_string().contains(needle), "{i}"),
        other => panic!("expected an inconsistency about {needle:?}, got {other:?}"),
    }
}

#[test]
fn refuses_a_node_queued_on_another_rank() {
    let mut inputs = tiny();
    let mut rows: Vec<Vec<u32>> = queue_rows(&inputs);
    let moved = rows[3].pop().unwrap(); // rank 1's gmm[1] onto rank 0's AIC
    rows[0].push(moved);
    inputs.placement = placement_of(14, rows);
    inconsistent(inputs.try_build("tiny"), "not on the node's rank");
}

#[test]
fn refuses_missing_duplicated_and_misplaced_instances() {
    let inputs = tiny();
    let rows: Vec<Vec<u32>> = queue_rows(&inputs);

    let mut missing = tiny();
    let mut r = rows.clone();
    r[2].pop();
    missing.placement = placement_of(14, r);
    inconsistent(missing.try_build("tiny"), "need exactly 14");

    let mut twice = tiny();
    let mut r = rows.clone();
    r[2][0] = r[1][0];
    twice.placement = placement_of(14, r);
    inconsistent(twice.try_build("tiny"), "listed twice");

    let mut wrong_kind = tiny();
    let mut r = rows;
    let gmm = r[0].pop().unwrap();
    r[1].push(gmm);
    wrong_kind.placement = placement_of(14, r);
    inconsistent(wrong_kind.try_build("tiny"), "the core is aiv");
}

#[test]
fn refuses_a_wait_no_signals_can_release() {
    let mut inputs = tiny();
    inputs.sync.waits[NodeId::new(6)] = Some(Wait { counter: CounterId::new(2), target: 3 });
    inconsistent(inputs.try_build("tiny"), "only 2 signals ever go to it");
}

#[test]
fn refuses_counters_out_of_range() {
    let mut inputs = tiny();
    inputs.sync.counters_per_rank = vec![3, 2].into();
    // Rank 1's combine waits on counter 2, which rank 1 no longer has.
    inconsistent(inputs.try_build("tiny"), "rank 1 has 2");
}

#[test]
fn reports_values_beyond_the_format() {
    let mut inputs = tiny();
    inputs.sync.waits[NodeId::new(6)] = Some(Wait { counter: CounterId::new(2), target: 70_000 });
    match inputs.try_build("tiny") {
        Err(e @ TableError::TooLarge { value: 70_000, limit: 65_535, what: Quantity::WaitTarget { instance: 6 } }) => {
            assert_eq!(
                e.to_string(),
                "wait target of instance 6 is 70000, more than the schedule table format allows (65535)"
            )
        }
        other => panic!("expected TooLarge, got {other:?}"),
    }
    let mut names = tiny();
    names.family_names[1] = "g\0mm".into();
    inconsistent(names.try_build("tiny"), "NUL");
}

#[test]
#[should_panic(expected = "cannot build the schedule table of `tiny`")]
fn build_panics_on_inconsistent_inputs() {
    let mut inputs = tiny();
    inputs.family_names.pop();
    inputs.build("tiny");
}
