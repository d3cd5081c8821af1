//! Reading a rank's diagnostics area after a launch (layout in `hpmoe/abi.h`): which cores
//! finished, and for each one that stopped early, where and why, in the schedule's terms.
//!
//! ```
//! use hpmoe_ascendc::diag::{DiagStatus, decode};
//! // A host program copies the `diag` buffer back after the launch; here, two cores' worth.
//! let mut area = vec![0u8; 64 + 2 * 64];
//! area[64..68].copy_from_slice(&2u32.to_le_bytes()); // core 0: done
//! let d = decode(&area, 2).unwrap();
//! assert_eq!(d.records[0].status, DiagStatus::Done);
//! assert_eq!(d.records[1].status, DiagStatus::NotRun);
//! assert!(!d.aborted);
//! ```

use crate::error::DiagError;
use hpmoe_core::table::ScheduleTable;
use std::fmt;

/// Bytes of the area's header (`hpmoe_diag_header`: the rank's abort word, then reserved
/// words); the per-core records follow it.
pub const HEADER_BYTES: usize = 64;
/// Bytes of each core's record (`hpmoe_diag_record`); the area of a rank with `C` cores is
/// `HEADER_BYTES + C * RECORD_BYTES` bytes (`HPMOE_DIAG_BYTES(C)`).
pub const RECORD_BYTES: usize = 64;

/// `hpmoe_diag_record.status`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiagStatus {
    /// `HPMOE_STATUS_NOT_RUN` (0): the record is still the host's zeros; the core never started.
    NotRun,
    /// `HPMOE_STATUS_RUNNING` (1): the core started and either is still running or was killed
    /// before it could write a final status.
    Running,
    /// `HPMOE_STATUS_DONE` (2): the core ran every entry of its list.
    Done,
    /// `HPMOE_STATUS_WAIT_TIMEOUT` (3): a counter wait timed out; the record's `counter`,
    /// `expected` and `seen` say which wait and how far it got.
    WaitTimeout,
    /// `HPMOE_STATUS_FLAG_TIMEOUT` (4): an AIC waited too long for its AIVs to consume its hardware
    /// flag sets (the back-pressure bound of 15 pending sets).
    FlagTimeout,
    /// `HPMOE_STATUS_ABORTED` (5): the core stopped because another core of its rank failed.
    Aborted,
    /// `HPMOE_STATUS_BAD_TABLE` (6): the table or the flag plan was rejected at start; the record's
    /// `detail` is the `HPMOE_TABLE_*` / `HPMOE_FLAGS_*` reason.
    BadTable,
    /// `HPMOE_STATUS_BAD_LAUNCH` (7): the launch's block count or PE count differs from the
    /// machine the table was built for.
    BadLaunch,
    /// `HPMOE_STATUS_BAD_TILE` (8): an entry names an instance this core kind cannot run.
    BadTile,
    /// A status code this version of the reader does not know (the kernel is newer than the host).
    Unknown(u32),
}

impl DiagStatus {
    /// The status of a record's `status` word; codes past 8 are kept as [`DiagStatus::Unknown`].
    pub fn from_code(code: u32) -> Self {
        match code {
            0 => DiagStatus::NotRun,
            1 => DiagStatus::Running,
            2 => DiagStatus::Done,
            3 => DiagStatus::WaitTimeout,
            4 => DiagStatus::FlagTimeout,
            5 => DiagStatus::Aborted,
            6 => DiagStatus::BadTable,
            7 => DiagStatus::BadLaunch,
            8 => DiagStatus::BadTile,
            other => DiagStatus::Unknown(other),
        }
    }
}

/// One core's `hpmoe_diag_record`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DiagRecord {
    /// How the core ended (or where it is, if still running).
    pub status: DiagStatus,
    /// Global core id: `rank * cores_per_rank + local core`.
    pub core: u32,
    /// Position in the core's list of the entry it was running or waiting for.
    pub entry: u32,
    /// That entry's tile instance, as a local instance id of the rank.
    pub instance: u32,
    /// The counter the failed wait was on; with bit 31 set (`HPMOE_DIAG_FLAG_COUNTER`) the wait was
    /// on a hardware flag and the low bits are the flag id.
    pub counter: u32,
    /// The value the wait needed (its target).
    pub expected: i32,
    /// The value the wait last read: `expected - seen` signals were missing when it gave up.
    pub seen: i32,
    /// Entries the core completed.
    pub tiles_done: u32,
    /// AIV: hardware-flag waits completed (its AIC reads this for back-pressure); 0 on an AIC.
    pub flag_consumed: u32,
    /// AIC: hardware flags set; 0 on an AIV.
    pub flag_set: u32,
    /// For [`DiagStatus::BadTable`], the `HPMOE_TABLE_*` / `HPMOE_FLAGS_*` reason code; 0 otherwise.
    pub detail: u32,
}

/// A rank's whole area.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostics {
    /// A core of the rank stopped early.
    pub aborted: bool,
    /// By local core id (AIC first, then AIV).
    pub records: Vec<DiagRecord>,
}

/// Decodes the area of a rank with `cores_per_rank` cores.
pub fn decode(area: &[u8], cores_per_rank: usize) -> Result<Diagnostics, DiagError> {
    let need = HEADER_BYTES + RECORD_BYTES * cores_per_rank;
    if area.len() < need {
        return Err(DiagError::AreaTooSmall { bytes: area.len(), cores: cores_per_rank, need });
    }
    let word = |at: usize| u32::from_le_bytes(area[at..at + 4].try_into().expect("4 bytes"));
    let records = (0..cores_per_rank)
        .map(|c| {
            let base = HEADER_BYTES + RECORD_BYTES * c;
            let w = |i: usize| word(base + 4 * i);
            DiagRecord {
                status: DiagStatus::from_code(w(0)),
                core: w(1),
                entry: w(2),
                instance: w(3),
                counter: w(4),
                expected: w(5) as i32,
                seen: w(6) as i32,
                tiles_done: w(7),
                flag_consumed: w(8),
                flag_set: w(9),
                detail: w(10),
            }
        })
        .collect();
    Ok(Diagnostics { aborted: word(0) != 0, records })
}

/// A record in the schedule's terms, e.g. `r0.aiv1: waited for counter 3 to reach 2 before
/// entry 4, swiglu(1, 0, 1), and saw 1 after the timeout`.
pub fn describe(record: &DiagRecord, table: &ScheduleTable) -> String {
    Describe { record, table }.to_string()
}

struct Describe<'a> {
    record: &'a DiagRecord,
    table: &'a ScheduleTable,
}

impl fmt::Display for Describe<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = self.record;
        let view = self.table.view();
        let core =
            if (r.core as usize) < view.core_count() { view.core_name(r.core) } else { format!("core {}", r.core) };
        let tile = match view.coords_of_instance(r.instance) {
            Some((fam, coords)) => {
                let c: Vec<String> = coords.iter().map(u32::to_string).collect();
                format!("{}({})", view.family_name(fam), c.join(", "))
            }
            None => format!("instance {}", r.instance),
        };
        match r.status {
            DiagStatus::NotRun => write!(f, "{core}: never started"),
            DiagStatus::Running => write!(f, "{core}: started but never finished ({} tiles done)", r.tiles_done),
            DiagStatus::Done => write!(f, "{core}: done, {} tiles", r.tiles_done),
            DiagStatus::WaitTimeout => write!(
                f,
                "{core}: timed out before entry {} ({tile}) waiting for counter {} to reach {}; it held {}",
                r.entry, r.counter, r.expected, r.seen
            ),
            DiagStatus::FlagTimeout => write!(
                f,
                "{core}: its AIVs did not consume hardware flag {} in time at entry {} ({tile}): {} sets, {} consumed",
                r.counter & !0x8000_0000,
                r.entry,
                r.expected,
                r.seen
            ),
            DiagStatus::Aborted => write!(
                f,
                "{core}: stopped before entry {} ({tile}) because another core failed (counter {} at {} of {})",
                r.entry, r.counter, r.seen, r.expected
            ),
            DiagStatus::BadTable => {
                write!(f, "{core}: rejected the table or flag plan (HPMOE_TABLE/FLAGS code {})", r.detail)
            }
            DiagStatus::BadLaunch => {
                write!(
                    f,
                    "{core}: launched with {} blocks, the table needs {} (or a wrong PE count)",
                    r.seen, r.expected
                )
            }
            DiagStatus::BadTile => write!(f, "{core}: entry {} names {tile}, which this core kind cannot run", r.entry),
            DiagStatus::Unknown(code) => write!(f, "{core}: unknown status {code}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_records_and_describes_them_with_the_table() {
        let tf = hpmoe_host::moe::MoeShape::tiny(1).taskflow().unwrap();
        let c = hpmoe_core::compile(&tf, &hpmoe_core::schedule::SimpleCost::default()).unwrap();
        let mut area = vec![0u8; HEADER_BYTES + RECORD_BYTES * 6];
        area[0..4].copy_from_slice(&4u32.to_le_bytes());
        let rec = |c: usize, fields: [u32; 11], area: &mut Vec<u8>| {
            for (i, v) in fields.iter().enumerate() {
                let at = HEADER_BYTES + RECORD_BYTES * c + 4 * i;
                area[at..at + 4].copy_from_slice(&v.to_le_bytes());
            }
        };
        let swiglu = c.expanded.space.families[2].first + 3;
        rec(3, [3, 3, 7, swiglu, 12, 2, 1, 7, 0, 0, 0], &mut area);
        rec(0, [2, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0], &mut area);
        let d = decode(&area, 6).unwrap();
        assert!(d.aborted);
        assert_eq!(d.records[3].status, DiagStatus::WaitTimeout);
        assert_eq!(
            describe(&d.records[3], &c.table),
            "r0.aiv1: timed out before entry 7 (swiglu(0, 1, 1)) waiting for counter 12 to reach 2; it held 1"
        );
        assert_eq!(describe(&d.records[0], &c.table), "r0.aic0: done, 9 tiles");
        let short = decode(&area[..100], 6).unwrap_err();
        assert_eq!(short, DiagError::AreaTooSmall { bytes: 100, cores: 6, need: 448 });
        assert_eq!(short.to_string(), "the diagnostics area holds 100 bytes; 6 cores need 448");
    }
}
