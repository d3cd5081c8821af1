//! The binary blob: [`ScheduleTable::to_bytes`] and [`ScheduleTable::from_bytes`].
//!
//! Little-endian throughout. A 104-byte file header, then six sections in a fixed order,
//! each starting at a multiple of 4 bytes and following the previous one without a gap:
//!
//! | offset | bytes | field |
//! |-------:|------:|-------|
//! | 0  | 8 | magic `HPMOETBL` |
//! | 8  | 4 | format version (1) |
//! | 12 | 4 | CRC-32 (IEEE) of bytes `16 .. total_bytes`: everything after this field |
//! | 16 | 4 | `total_bytes`, the blob's length |
//! | 20 | 36 | `ranks`, `cores_per_rank`, `aic_per_rank`, `aiv_per_aic`, `families`, `instances_per_rank`, `counters_per_rank_max`, `entry_count`, `signal_count` (u32 each) |
//! | 56 | 48 | section directory: `(offset, bytes)` as two u32 for families, cores, counters, entries, signals, names |
//!
//! Sections: families (28 bytes each), cores (8 bytes each, `ranks * cores_per_rank` of
//! them), counters (u32 per rank), entries (16 bytes each), signals (8 bytes each), names
//! (the table's name then each family's, UTF-8, each followed by a NUL byte, then zero
//! bytes up to a multiple of 4). The layout is canonical: the decoder requires every
//! offset and size to be exactly what the counts imply, and every reserved or padding byte
//! to be zero, so a table has exactly one blob and `from_bytes(b)?.to_bytes() == b`.

use super::ScheduleTable;
use super::error::TableError;
use super::inconsistency::Inconsistency;
use super::layout::{CHECKSUM_OFFSET, CHECKSUM_START, DIRECTORY_OFFSET, FILE_HEADER_SIZE, Layout, SECTION_NAMES};
use super::records::{CoreRecord, EntryRecord, FORMAT_VERSION, FamilyRecord, MAGIC, SignalRecord, TableHeader};
use crate::limits::MAX_GRID_DIMS;

impl ScheduleTable {
    /// The table's checksum: the CRC-32 the binary form carries in its header (what a kernel
    /// generated for this table expects, and what a flag plan names as its table). Computed
    /// over the same bytes as [`ScheduleTable::to_bytes`] writes, through a small buffer, without
    /// the blob itself (at 10^6 entries a 38 MB buffer written only to read 4 bytes of it).
    pub fn checksum(&self) -> u32 {
        let mut crc = Crc::new();
        self.write_checked(&mut Writer { out: &mut crc, len: CHECKSUM_START });
        crc.finish()
    }

    /// The binary blob (layout in the [module docs](self)). Deterministic: equal tables give
    /// equal bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.view().layout().total as usize);
        out.extend_from_slice(&self.header.magic);
        out.extend_from_slice(&self.header.version.to_le_bytes());
        out.extend_from_slice(&[0; 4]); // the checksum, filled in last
        debug_assert_eq!(out.len(), CHECKSUM_START);
        self.write_checked(&mut Writer { out: &mut out, len: CHECKSUM_START });
        let crc = crc32fast::hash(&out[CHECKSUM_START..]);
        out[CHECKSUM_OFFSET..CHECKSUM_OFFSET + 4].copy_from_slice(&crc.to_le_bytes());
        out
    }

    /// The bytes the checksum covers: everything from [`CHECKSUM_START`] to the end.
    fn write_checked(&self, out: &mut Writer<impl Out>) {
        let view = self.view();
        let layout = view.layout();
        let h = &self.header;
        out.u32(layout.total as u32);
        for v in [h.ranks, h.cores_per_rank, h.aic_per_rank, h.aiv_per_aic, h.families, h.instances_per_rank] {
            out.u32(v);
        }
        for v in [h.counters_per_rank_max, h.entry_count, h.signal_count] {
            out.u32(v);
        }
        debug_assert_eq!(out.len, DIRECTORY_OFFSET);
        for s in layout.sections {
            out.u32(s.offset as u32);
            out.u32(s.bytes as u32);
        }
        debug_assert_eq!(out.len, FILE_HEADER_SIZE);
        for f in &self.families {
            out.u32(f.first_instance);
            out.u32(f.instance_count);
            out.array([f.core_kind, f.dims]);
            out.u16(f.reserved);
            f.extents.iter().for_each(|&e| out.u32(e));
        }
        for c in &self.cores {
            out.u32(c.first_entry);
            out.u32(c.entry_count);
        }
        self.counters_per_rank.iter().for_each(|&n| out.u32(n));
        // Entries and signals a record at a time (there are millions of them).
        for e in &self.entries {
            let mut record = [0u8; 16];
            record[0..4].copy_from_slice(&e.instance.to_le_bytes());
            record[4..8].copy_from_slice(&e.wait_counter.to_le_bytes());
            record[8..10].copy_from_slice(&e.wait_target.to_le_bytes());
            record[10..12].copy_from_slice(&e.signal_count.to_le_bytes());
            record[12..16].copy_from_slice(&e.first_signal.to_le_bytes());
            out.array(record);
        }
        for s in &self.signals {
            let mut record = [0u8; 8];
            record[0..4].copy_from_slice(&s.counter.to_le_bytes());
            record[4..6].copy_from_slice(&s.rank.to_le_bytes());
            record[6..8].copy_from_slice(&s.reserved.to_le_bytes());
            out.array(record);
        }
        out.bytes(self.names.as_bytes());
        let padding = (layout.total as usize).checked_sub(out.len).expect("the layout holds every record");
        out.bytes(&vec![0; padding]);
    }

    /// Decodes and validates a blob written by [`ScheduleTable::to_bytes`].
    ///
    /// Checks, in order: length of the file header, magic, version, total size against the
    /// blob's length, checksum, every section's offset and size against the header's counts,
    /// zero padding, names, then every invariant of [`super::TableView::validate`]. Never panics and
    /// never allocates more than a small multiple of the blob's length.
    pub fn from_bytes(bytes: &[u8]) -> Result<ScheduleTable, TableError> {
        let len = bytes.len() as u64;
        if let Some(magic) = bytes.get(..8)
            && magic != MAGIC
        {
            return Err(TableError::BadMagic { found: magic.try_into().unwrap_or_default() });
        }
        if bytes.len() < FILE_HEADER_SIZE {
            return Err(TableError::TooShort { len, needed: FILE_HEADER_SIZE as u64 });
        }
        let mut r = Reader { bytes, at: 8 };
        let version = r.u32();
        if version != FORMAT_VERSION {
            return Err(TableError::UnsupportedVersion { found: version, supported: FORMAT_VERSION });
        }
        let stored = r.u32();
        let declared = r.u32();
        if u64::from(declared) != len {
            return Err(TableError::SizeMismatch { declared: declared.into(), actual: len });
        }
        let computed = crc32fast::hash(&bytes[CHECKSUM_START..]);
        if stored != computed {
            return Err(TableError::ChecksumMismatch { stored, computed });
        }
        let header = TableHeader {
            magic: MAGIC,
            version,
            ranks: r.u32(),
            cores_per_rank: r.u32(),
            aic_per_rank: r.u32(),
            aiv_per_aic: r.u32(),
            families: r.u32(),
            instances_per_rank: r.u32(),
            counters_per_rank_max: r.u32(),
            entry_count: r.u32(),
            signal_count: r.u32(),
        };
        let directory: [(u32, u32); 6] = std::array::from_fn(|_| (r.u32(), r.u32()));
        let layout = Layout::of_header(&header, u64::from(directory[5].1));
        for ((name, &(offset, size)), expected) in SECTION_NAMES.iter().zip(&directory).zip(&layout.sections) {
            if u64::from(offset) != expected.offset || u64::from(size) != expected.bytes {
                return Err(TableError::BadSection {
                    section: name,
                    offset,
                    bytes: size,
                    expected_offset: expected.offset,
                    expected_bytes: expected.bytes,
                });
            }
        }
        if layout.total != len {
            return Err(TableError::SizeMismatch { declared: layout.total, actual: len });
        }
        // From here every section lies inside `bytes`, so the counts are bounded by its length.
        let section = |i: usize| {
            let s = layout.sections[i];
            &bytes[s.offset as usize..(s.offset + s.bytes) as usize]
        };
        let families = section(0).chunks_exact(FamilyRecord::SIZE).map(read_family).collect();
        let cores = section(1)
            .chunks_exact(CoreRecord::SIZE)
            .map(|c| {
                let mut r = Reader { bytes: c, at: 0 };
                CoreRecord { first_entry: r.u32(), entry_count: r.u32() }
            })
            .collect();
        let counters_per_rank = section(2).chunks_exact(4).map(|c| Reader { bytes: c, at: 0 }.u32()).collect();
        let entries = section(3)
            .chunks_exact(EntryRecord::SIZE)
            .map(|c| {
                let mut r = Reader { bytes: c, at: 0 };
                EntryRecord {
                    instance: r.u32(),
                    wait_counter: r.u32(),
                    wait_target: r.u16(),
                    signal_count: r.u16(),
                    first_signal: r.u32(),
                }
            })
            .collect();
        let signals = section(4)
            .chunks_exact(SignalRecord::SIZE)
            .map(|c| {
                let mut r = Reader { bytes: c, at: 0 };
                SignalRecord { counter: r.u32(), rank: r.u16(), reserved: r.u16() }
            })
            .collect();
        let names = read_names(section(5), header.families)?;
        let table = ScheduleTable { names, header, families, cores, counters_per_rank, entries, signals };
        table.view().validate()?;
        Ok(table)
    }
}

fn read_family(c: &[u8]) -> FamilyRecord {
    let mut r = Reader { bytes: c, at: 0 };
    let first_instance = r.u32();
    let instance_count = r.u32();
    let (core_kind, dims) = (r.u8(), r.u8());
    let reserved = r.u16();
    let extents: [u32; MAX_GRID_DIMS] = std::array::from_fn(|_| r.u32());
    FamilyRecord { first_instance, instance_count, core_kind, dims, reserved, extents }
}

/// The names text: `families + 1` NUL-terminated UTF-8 strings, then up to 3 zero bytes.
fn read_names(section: &[u8], families: u32) -> Result<String, TableError> {
    let mut end = 0;
    for _ in 0..=families {
        let Some(nul) = section[end..].iter().position(|&b| b == 0) else {
            let expected = u64::from(families) + 1;
            return Err(Inconsistency::TooFewNames { expected }.into());
        };
        end += nul + 1;
    }
    if section.len() - end >= 4 || section[end..].iter().any(|&b| b != 0) {
        return Err(Inconsistency::NamesTrailing.into());
    }
    String::from_utf8(section[..end].to_vec())
        .map_err(|e| Inconsistency::NamesNotUtf8 { valid_up_to: e.utf8_error().valid_up_to() }.into())
}

/// Appends little-endian integers.
/// Writes little-endian integers to `out`, counting the bytes (from where it starts).
struct Writer<'a, O> {
    out: &'a mut O,
    len: usize,
}

impl<O: Out> Writer<'_, O> {
    fn bytes(&mut self, bytes: &[u8]) {
        self.out.put(bytes);
        self.len += bytes.len();
    }

    fn array<const N: usize>(&mut self, bytes: [u8; N]) {
        self.out.put_array(bytes);
        self.len += N;
    }

    fn u32(&mut self, v: u32) {
        self.array(v.to_le_bytes());
    }

    fn u16(&mut self, v: u16) {
        self.array(v.to_le_bytes());
    }
}

/// Where [`ScheduleTable::write_checked`] writes: the blob, or its checksum.
trait Out {
    fn put(&mut self, bytes: &[u8]);

    /// [`Out::put`] of a few bytes whose count the compiler knows (a field).
    fn put_array<const N: usize>(&mut self, bytes: [u8; N]) {
        self.put(&bytes);
    }
}

impl Out for Vec<u8> {
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
}

/// Bytes the checksum buffers before hashing them: small enough to stay in cache, large
/// enough that hashing runs over long slices (a call per field would cost more than it hashes).
const CRC_BUFFER: usize = 1 << 16;

/// The CRC-32 of the bytes put, as [`crc32fast::hash`] of them all would give it: filled
/// into `buffer` up to `at`, hashed whenever the next bytes would not fit.
struct Crc {
    buffer: Box<[u8; CRC_BUFFER]>,
    at: usize,
    hasher: crc32fast::Hasher,
}

impl Out for Crc {
    fn put(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            if self.at == CRC_BUFFER {
                self.flush();
            }
            let n = bytes.len().min(CRC_BUFFER - self.at);
            self.buffer[self.at..self.at + n].copy_from_slice(&bytes[..n]);
            self.at += n;
            bytes = &bytes[n..];
        }
    }

    fn put_array<const N: usize>(&mut self, bytes: [u8; N]) {
        if self.at + N > CRC_BUFFER {
            self.flush();
        }
        self.buffer[self.at..self.at + N].copy_from_slice(&bytes);
        self.at += N;
    }
}

impl Crc {
    fn new() -> Crc {
        Crc { buffer: Box::new([0; CRC_BUFFER]), at: 0, hasher: crc32fast::Hasher::new() }
    }

    fn flush(&mut self) {
        self.hasher.update(&self.buffer[..self.at]);
        self.at = 0;
    }

    fn finish(mut self) -> u32 {
        self.flush();
        self.hasher.finalize()
    }
}

/// Reads little-endian integers from a slice whose length the caller has checked.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take<const N: usize>(&mut self) -> [u8; N] {
        let mut out = [0u8; N];
        out.copy_from_slice(&self.bytes[self.at..self.at + N]);
        self.at += N;
        out
    }

    fn u8(&mut self) -> u8 {
        u8::from_le_bytes(self.take())
    }

    fn u16(&mut self) -> u16 {
        u16::from_le_bytes(self.take())
    }

    fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take())
    }
}

#[cfg(test)]
mod tests {
    use super::{CRC_BUFFER, Crc, Out};

    /// xorshift64: a deterministic stream of pseudo-random numbers below `n`.
    struct Rng(u64);
    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }
    }

    #[test]
    fn the_buffered_crc_is_the_crc_of_everything_put() {
        // Pieces of every size up to beyond the buffer, so it flushes mid-stream, at its
        // edge and not at all.
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for total in [0, 5, CRC_BUFFER - 1, CRC_BUFFER, CRC_BUFFER + 1, 5 * CRC_BUFFER + 77] {
            let bytes: Vec<u8> = (0..total).map(|_| rng.below(256) as u8).collect();
            let mut crc = Crc::new();
            let mut at = 0;
            while at < total {
                // Fields (a known count of bytes) and slices of any length up to beyond the buffer.
                if rng.below(2) == 0 && at + 4 <= total {
                    crc.put_array::<4>(bytes[at..at + 4].try_into().unwrap());
                    at += 4;
                    continue;
                }
                let piece = (1 + rng.below(2 * CRC_BUFFER as u64) as usize).min(total - at);
                crc.put(&bytes[at..at + piece]);
                at += piece;
            }
            assert_eq!(crc.finish(), crc32fast::hash(&bytes), "{total} bytes");
        }
    }
}
