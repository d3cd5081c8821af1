//! Where each section of the binary blob lies ([`Layout`]), computed from record counts alone, and
//! the fixed offsets of the file header; the format itself is described in [`super::binary`]
//! (sections at [`Layout`], the directory at [`DIRECTORY_OFFSET`]).
//! Both the blob's reader and writer ([`super::binary`]) and the view's size accessors
//! ([`TableView::layout`](super::TableView::layout)) use it, so it depends on neither.

use super::records::{CoreRecord, EntryRecord, FamilyRecord, SignalRecord, TableHeader};

/// Bytes of the file header, which the first section follows.
pub const FILE_HEADER_SIZE: usize = 104;
/// Offset of the CRC-32 field in the file header.
pub const CHECKSUM_OFFSET: usize = 12;
/// The CRC-32 covers the blob from this offset to its end.
pub const CHECKSUM_START: usize = 16;
/// Offset of the section directory in the file header.
pub const DIRECTORY_OFFSET: usize = 56;
/// Section names, in blob (and directory) order.
pub const SECTION_NAMES: [&str; 6] = ["families", "cores", "counters", "entries", "signals", "names"];

/// Where one section lies in the blob.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Section {
    pub offset: u64,
    pub bytes: u64,
}

/// Offsets and sizes of every section, as the counts imply them. Sizes are computed with
/// saturating arithmetic, so absurd counts give an absurd (never matching) total instead of
/// overflowing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// In [`SECTION_NAMES`] order.
    pub sections: [Section; 6],
    pub total: u64,
}

impl Layout {
    /// Layout for the given record counts and length of the names text.
    pub fn new(families: u64, cores: u64, ranks: u64, entries: u64, signals: u64, names_len: u64) -> Layout {
        let sizes = [
            families.saturating_mul(FamilyRecord::SIZE as u64),
            cores.saturating_mul(CoreRecord::SIZE as u64),
            ranks.saturating_mul(4),
            entries.saturating_mul(EntryRecord::SIZE as u64),
            signals.saturating_mul(SignalRecord::SIZE as u64),
            names_len.saturating_add(3) / 4 * 4,
        ];
        let mut offset = FILE_HEADER_SIZE as u64;
        let sections = sizes.map(|bytes| {
            let s = Section { offset, bytes };
            offset = offset.saturating_add(bytes);
            s
        });
        Layout { sections, total: offset }
    }

    /// Layout implied by a header's counts (`names_len` from the directory).
    pub(super) fn of_header(h: &TableHeader, names_len: u64) -> Layout {
        let cores = u64::from(h.ranks) * u64::from(h.cores_per_rank);
        let (entries, signals) = (h.entry_count.into(), h.signal_count.into());
        Layout::new(h.families.into(), cores, h.ranks.into(), entries, signals, names_len)
    }
}
