//! The binary blob: layout, round trip, and rejection of every damaged blob.

use super::fixture::{put_u32, reseal, tiny, u32_at};
use hpmoe_core::table::{ScheduleTable, TableError};

// Section offsets of the tiny table's blob (see `sizes_match_the_blob`).
const FAMILIES: usize = 104;
const CORES: usize = FAMILIES + 3 * 28;
const COUNTERS: usize = CORES + 6 * 8;
const ENTRIES: usize = COUNTERS + 2 * 4;
const SIGNALS: usize = ENTRIES + 14 * 16;
const NAMES: usize = SIGNALS + 12 * 8;
const TOTAL: usize = NAMES + 28;

fn blob() -> Vec<u8> {
    tiny().build("tiny").to_bytes()
}

#[test]
fn round_trips() {
    let t = tiny().build("tiny");
    let bytes = t.to_bytes();
    assert_eq!(ScheduleTable::from_bytes(&bytes), Ok(t));
}

#[test]
fn layout_is_the_documented_one() {
    let b = blob();
    assert_eq!(b.len(), TOTAL);
    assert_eq!(&b[..8], b"HPMOETBL");
    assert_eq!(u32_at(&b, 8), 1);
    assert_eq!(u32_at(&b, 12), crc32fast::hash(&b[16..]));
    assert_eq!(u32_at(&b, 16), TOTAL as u32);
    let counts: Vec<u32> = (0..9).map(|i| u32_at(&b, 20 + 4 * i)).collect();
    assert_eq!(counts, [2, 3, 1, 2, 3, 7, 3, 14, 12]);
    let directory: Vec<u32> = (0..12).map(|i| u32_at(&b, 56 + 4 * i)).collect();
    let expected = [FAMILIES, 84, CORES, 48, COUNTERS, 8, ENTRIES, 224, SIGNALS, 96, NAMES, 28];
    assert_eq!(directory, expected.map(|v| v as u32));
    // gmm: instances 4..6, aic, one dimension of 2.
    assert_eq!(
        b[FAMILIES + 28..FAMILIES + 56],
        [4, 0, 0, 0, 2, 0, 0, 0, 0, 1, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
    );
    // Rank 0's AIC: entries 0..2; its first entry: gmm[0] waits for counter 0 to reach 2, one signal.
    assert_eq!((u32_at(&b, CORES), u32_at(&b, CORES + 4)), (0, 2));
    assert_eq!(b[ENTRIES..ENTRIES + 16], [4, 0, 0, 0, 0, 0, 0, 0, 2, 0, 1, 0, 0, 0, 0, 0]);
    assert_eq!(&b[NAMES..], b"tiny\0dispatch\0gmm\0combine\0\0\0");
}

#[test]
fn every_truncation_is_rejected() {
    let b = blob();
    for len in 0..b.len() {
        assert!(ScheduleTable::from_bytes(&b[..len]).is_err(), "accepted a blob cut to {len} bytes");
    }
    let mut longer = b.clone();
    longer.extend_from_slice(&[0; 4]);
    assert!(matches!(ScheduleTable::from_bytes(&longer), Err(TableError::SizeMismatch { .. })));
}

#[test]
fn every_bit_flip_is_rejected() {
    let b = blob();
    for byte in 0..b.len() {
        for bit in 0..8 {
            let mut flipped = b.clone();
            flipped[byte] ^= 1 << bit;
            let result = ScheduleTable::from_bytes(&flipped);
            assert!(result.is_err(), "accepted a blob with bit {bit} of byte {byte} flipped");
        }
    }
}

#[test]
fn header_errors_say_what_is_wrong() {
    let b = blob();
    let mut magic = b.clone();
    magic[0] = b'X';
    let err = ScheduleTable::from_bytes(&magic).unwrap_err();
    assert!(matches!(err, TableError::BadMagic { .. }));
    assert!(err.to_string().contains("XPMOETBL"), "{err}");

    let mut version = b.clone();
    put_u32(&mut version, 8, 2);
    let err = ScheduleTable::from_bytes(&version).unwrap_err();
    assert_eq!(err, TableError::UnsupportedVersion { found: 2, supported: 1 });

    let mut flipped = b.clone();
    flipped[ENTRIES] ^= 1;
    let err = ScheduleTable::from_bytes(&flipped).unwrap_err();
    assert!(matches!(err, TableError::ChecksumMismatch { .. }), "{err}");

    let err = ScheduleTable::from_bytes(&b[..50]).unwrap_err();
    assert_eq!(err, TableError::TooShort { len: 50, needed: 104 });
}

/// Tampers with a blob, fixes its checksum, and returns the decoder's error.
fn tampered(edit: impl FnOnce(&mut Vec<u8>)) -> TableError {
    let mut b = blob();
    edit(&mut b);
    reseal(&mut b);
    ScheduleTable::from_bytes(&b).expect_err("a tampered blob was accepted")
}

fn assert_inconsistent(err: TableError, needle: &str) {
    match &err {
        TableError::Inconsistent(inconsistency) => {
            let message = inconsistency.to_string();
            assert!(message.contains(needle), "{message}")
        }
        other => panic!("expected an inconsistency about {needle:?}, got {other:?}"),
    }
}

#[test]
fn huge_counts_are_rejected_before_allocating() {
    for (field, value) in [(48, u32::MAX), (52, u32::MAX), (20, u32::MAX), (24, u32::MAX), (36, 1 << 30)] {
        let err = tampered(|b| put_u32(b, field, value));
        assert!(matches!(err, TableError::BadSection { .. }), "field {field}: {err}");
    }
}

#[test]
fn sections_must_sit_where_the_counts_put_them() {
    let err = tampered(|b| put_u32(b, 56 + 8 * 3, ENTRIES as u32 + 4));
    assert!(matches!(err, TableError::BadSection { section: "entries", .. }), "{err}");
}

#[test]
fn bad_indices_are_rejected_after_a_valid_checksum() {
    assert_inconsistent(tampered(|b| put_u32(b, ENTRIES, 7)), "instance 7 is not below 7");
    assert_inconsistent(tampered(|b| put_u32(b, ENTRIES + 4, 3)), "waits on counter 3 but rank 0 has 3");
    assert_inconsistent(tampered(|b| b[SIGNALS + 4] = 2), "goes to rank 2 of 2");
    assert_inconsistent(tampered(|b| put_u32(b, SIGNALS, 9)), "counter 9 of rank");
    assert_inconsistent(tampered(|b| put_u32(b, ENTRIES + 12, 1)), "signals start at 1, expected 0");
    assert_inconsistent(tampered(|b| put_u32(b, CORES + 4, 3)), "core 1 entries start at 2, expected 3");
    assert_inconsistent(tampered(|b| b[FAMILIES + 8] = 7), "unknown core kind code 7");
    assert_inconsistent(tampered(|b| b[FAMILIES + 10] = 1), "reserved bytes must be 0");
    assert_inconsistent(tampered(|b| put_u32(b, FAMILIES + 12, 3)), "grid [3, 2] has 6 points but 4 instances");
    // The counter counts are u32s; their largest must be the header's maximum.
    assert_inconsistent(tampered(|b| put_u32(b, COUNTERS, 4)), "the ranks use at most 4");
    // Waiting for a target that the signals never reach would hang.
    assert_inconsistent(tampered(|b| b[ENTRIES + 8] = 3), "only 2 signals ever go to it");
    // Wait target without a wait.
    assert_inconsistent(tampered(|b| b[ENTRIES + 16 * 2 + 8] = 1), "no wait, but a wait target");
}

#[test]
fn fan_in_is_checked_however_many_counters_the_header_declares() {
    // Rank 0 declaring 1000 counters, more than the table has entries and signals: the
    // signals are counted by sorted keys instead of one slot per counter, with the same verdict.
    let many = |b: &mut Vec<u8>| {
        put_u32(b, COUNTERS, 1000);
        put_u32(b, 44, 1000); // the header's counters_per_rank_max
    };
    let mut b = blob();
    many(&mut b);
    reseal(&mut b);
    assert!(ScheduleTable::from_bytes(&b).is_ok(), "1000 counters of which 3 are used is a valid table");
    assert_inconsistent(
        tampered(|b| {
            many(b);
            b[ENTRIES + 8] = 3;
        }),
        "only 2 signals ever go to it",
    );
}

#[test]
fn names_section_must_be_exact() {
    assert_inconsistent(tampered(|b| b[TOTAL - 1] = b'x'), "besides its padding");
    assert_inconsistent(tampered(|b| b[NAMES + 25..].fill(b'x')), "fewer than 4 names");
    assert_inconsistent(tampered(|b| b[NAMES + 1] = 0xff), "names:");
}
