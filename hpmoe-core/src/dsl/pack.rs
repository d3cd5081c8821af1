//! How a [`Program`](super::Program) carries its schedule table: packed, so that rustc reads
//! and compiles a tenth of the bytes.
//!
//! A `#[taskflow]` function's table is `'static` data in the user's binary. Written out as a
//! byte-string literal, the natural-routing DeepSeek layer's 11 MB table was 26 MB of tokens
//! for rustc to lex and then 11 MB of constant data to compile and link — most of what the
//! macro cost a build beyond its own work. The table's records are fixed-size little-endian
//! integers whose high bytes are mostly zero and whose low bytes repeat with a short period,
//! so a byte shuffle followed by a plain LZ77 pass shrinks it 9–16× (2.3 MB → 258 KB for the
//! balanced layer, 11.2 MB → 681 KB for the natural one).
//!
//! # Format
//!
//! ```text
//! "hpz1"                    magic
//! varint  len               bytes of the unpacked blob
//! u8      stride            1 ..= 64: the shuffle's record width
//! sequences …               over the shuffled blob, until `len` bytes are out:
//!   varint  literals        then that many literal bytes;
//!   varint  offset          (only if bytes remain) ≥ 1, how far back the match starts;
//!   varint  length − 4      the match's length (it may overlap its own output)
//! ```
//!
//! Varints are LEB128 (7 bits per byte, low first, at most 10 bytes). The shuffle writes
//! byte `j` of every `stride`-byte record of the blob's first `len / stride · stride` bytes
//! as plane `j` (all records' byte 0, then all byte 1, …), then the remaining tail as is.
//!
//! [`unpack`] checks everything it reads — magic, stride, varint widths, that no literal run
//! or match passes `len`, that offsets stay inside what is already out, that the input ends
//! exactly where the output is complete — and reports the first violation as an
//! [`UnpackError`]; it never panics and never allocates more than `len` (at most
//! [`MAX_UNPACKED`]) bytes. The table inside carries its own CRC, checked when it is decoded.

use std::fmt;

/// The first four bytes of a packed blob.
pub const MAGIC: [u8; 4] = *b"hpz1";
/// The largest blob [`unpack`] accepts (a schedule table addresses itself with `u32` offsets).
pub const MAX_UNPACKED: u64 = u32::MAX as u64;
/// The shuffle's record width [`pack`] uses: the table's records are 8 or 16 bytes wide.
pub const STRIDE: u8 = 8;
/// The shortest match the format encodes.
const MIN_MATCH: usize = 4;
/// Bits of the encoder's hash table (one candidate per 4-byte hash).
const HASH_BITS: u32 = 16;

/// Packs `blob` (deterministic: the same bytes give the same output).
pub fn pack(blob: &[u8]) -> Vec<u8> {
    let shuffled = shuffle(blob, usize::from(STRIDE));
    let mut out = Vec::with_capacity(blob.len() / 4 + 16);
    out.extend_from_slice(&MAGIC);
    put_varint(&mut out, blob.len() as u64);
    out.push(STRIDE);
    compress(&shuffled, &mut out);
    out
}

/// Why a packed blob does not unpack.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UnpackError {
    /// The blob does not start with [`MAGIC`].
    Magic,
    /// The blob ends inside a field (`at`: the byte offset where the field starts).
    Truncated {
        /// Byte offset of the field.
        at: usize,
    },
    /// A varint is longer than 10 bytes or does not fit 64 bits.
    Varint {
        /// Byte offset where the varint starts.
        at: usize,
    },
    /// The declared length is over [`MAX_UNPACKED`].
    TooLarge {
        /// The declared length, in bytes.
        len: u64,
    },
    /// The stride is 0 or over 64.
    Stride {
        /// The stride read.
        stride: u8,
    },
    /// A literal run or a match would pass the declared length.
    Overrun {
        /// Byte offset of the sequence.
        at: usize,
    },
    /// A match points before the start of the output (or has offset 0).
    Offset {
        /// Byte offset of the match.
        at: usize,
        /// How far back it points, in bytes.
        offset: u64,
    },
    /// Bytes follow the sequence that completed the output.
    Trailing {
        /// How many bytes follow.
        extra: usize,
    },
}

impl fmt::Display for UnpackError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UnpackError::Magic => write!(f, "not a packed blob (no `hpz1` magic)"),
            UnpackError::Truncated { at } => write!(f, "the packed blob ends inside a field at byte {at}"),
            UnpackError::Varint { at } => write!(f, "malformed varint at byte {at}"),
            UnpackError::TooLarge { len } => write!(f, "declared length {len} is over the {MAX_UNPACKED}-byte limit"),
            UnpackError::Stride { stride } => write!(f, "shuffle stride {stride} is outside 1..=64"),
            UnpackError::Overrun { at } => write!(f, "the sequence at byte {at} writes past the declared length"),
            UnpackError::Offset { at, offset } => {
                write!(f, "the match at byte {at} points {offset} bytes back, before the start of the output")
            }
            UnpackError::Trailing { extra } => write!(f, "{extra} bytes follow the end of the packed data"),
        }
    }
}

impl std::error::Error for UnpackError {}

/// Unpacks what [`pack`] made.
pub fn unpack(packed: &[u8]) -> Result<Vec<u8>, UnpackError> {
    if packed.get(..4) != Some(&MAGIC[..]) {
        return Err(UnpackError::Magic);
    }
    let mut r = Reader { bytes: packed, at: 4 };
    let len = r.varint()?;
    if len > MAX_UNPACKED {
        return Err(UnpackError::TooLarge { len });
    }
    let len = len as usize;
    let stride = r.byte()?;
    if stride == 0 || stride > 64 {
        return Err(UnpackError::Stride { stride });
    }
    // Grows as the data arrives: a forged length alone does not allocate.
    let mut out: Vec<u8> = Vec::with_capacity(len.min(packed.len().saturating_mul(16)));
    // Every sequence starts with a literal run (maybe empty), and the last one is nothing else.
    loop {
        let start = r.at;
        let literals = r.varint()?;
        if literals > (len - out.len()) as u64 {
            return Err(UnpackError::Overrun { at: start });
        }
        out.extend_from_slice(r.take(literals as usize)?);
        if out.len() == len {
            break;
        }
        let at = r.at;
        let offset = r.varint()?;
        let length = r.varint()?.saturating_add(MIN_MATCH as u64);
        if offset == 0 || offset > out.len() as u64 {
            return Err(UnpackError::Offset { at, offset });
        }
        if length > (len - out.len()) as u64 {
            return Err(UnpackError::Overrun { at });
        }
        let from = out.len() - offset as usize;
        for k in 0..length as usize {
            let b = out[from + k];
            out.push(b);
        }
    }
    if r.at != packed.len() {
        return Err(UnpackError::Trailing { extra: packed.len() - r.at });
    }
    Ok(unshuffle(&out, usize::from(stride)))
}

/// Byte `j` of every `stride`-byte record as plane `j`, then the tail.
fn shuffle(blob: &[u8], stride: usize) -> Vec<u8> {
    let records = blob.len() / stride;
    let mut out = Vec::with_capacity(blob.len());
    for j in 0..stride {
        out.extend((0..records).map(|r| blob[r * stride + j]));
    }
    out.extend_from_slice(&blob[records * stride..]);
    out
}

/// The inverse of [`shuffle`].
fn unshuffle(planes: &[u8], stride: usize) -> Vec<u8> {
    let records = planes.len() / stride;
    let mut out = vec![0u8; planes.len()];
    for j in 0..stride {
        for (r, &b) in planes[j * records..(j + 1) * records].iter().enumerate() {
            out[r * stride + j] = b;
        }
    }
    out[records * stride..].copy_from_slice(&planes[records * stride..]);
    out
}

/// Greedy LZ77 with one candidate per 4-byte hash; appends the sequences to `out`.
fn compress(data: &[u8], out: &mut Vec<u8>) {
    // The last position with each hash; `None` before one is seen.
    let mut table: Vec<Option<u32>> = vec![None; 1 << HASH_BITS];
    let hash = |i: usize| {
        let word = u32::from_le_bytes([data[i], data[i + 1], data[i + 2], data[i + 3]]);
        (word.wrapping_mul(0x9E37_79B1) >> (32 - HASH_BITS)) as usize
    };
    let (mut i, mut literal_start) = (0usize, 0usize);
    while i + MIN_MATCH <= data.len() {
        let h = hash(i);
        let candidate = table[h];
        table[h] = Some(i as u32);
        let Some(from) = candidate.map(|c| c as usize).filter(|&c| data[c..c + MIN_MATCH] == data[i..i + MIN_MATCH])
        else {
            i += 1;
            continue;
        };
        let mut length = MIN_MATCH;
        while i + length < data.len() && data[from + length] == data[i + length] {
            length += 1;
        }
        put_varint(out, (i - literal_start) as u64);
        out.extend_from_slice(&data[literal_start..i]);
        put_varint(out, (i - from) as u64);
        put_varint(out, (length - MIN_MATCH) as u64);
        // Index a few positions inside the match, so the next repeat of it is found.
        let end = i + length;
        let mut k = i + 1;
        while k + MIN_MATCH <= data.len() && k < end {
            table[hash(k)] = Some(k as u32);
            k += 4;
        }
        i = end;
        literal_start = end;
    }
    put_varint(out, (data.len() - literal_start) as u64);
    out.extend_from_slice(&data[literal_start..]);
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A cursor over the packed bytes that reports where it failed.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn byte(&mut self) -> Result<u8, UnpackError> {
        let b = *self.bytes.get(self.at).ok_or(UnpackError::Truncated { at: self.at })?;
        self.at += 1;
        Ok(b)
    }

    fn varint(&mut self) -> Result<u64, UnpackError> {
        let start = self.at;
        let mut v = 0u64;
        for shift in (0..70).step_by(7) {
            let b = self.byte()?;
            let bits = u64::from(b & 0x7f);
            if shift == 63 && bits > 1 {
                return Err(UnpackError::Varint { at: start });
            }
            v |= bits << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(UnpackError::Varint { at: start })
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], UnpackError> {
        let end =
            self.at.checked_add(n).filter(|&e| e <= self.bytes.len()).ok_or(UnpackError::Truncated { at: self.at })?;
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(blob: &[u8]) {
        let packed = pack(blob);
        assert_eq!(unpack(&packed).as_deref(), Ok(blob), "{} bytes", blob.len());
    }

    /// Records like a schedule table's: small little-endian integers, repeating with a period.
    fn table_like(records: usize) -> Vec<u8> {
        (0..records as u32).flat_map(|i| [i, i % 7, (i % 3) << 8 | 1, 5]).flat_map(u32::to_le_bytes).collect()
    }

    #[test]
    fn round_trips_short_empty_and_structured_blobs() {
        round_trip(&[]);
        round_trip(&[7]);
        round_trip(b"abc");
        round_trip(b"abcdabcdabcdabcdabcd");
        round_trip(&vec![0u8; 1000]);
        round_trip(&table_like(10_000));
        // Not a multiple of the stride: the tail is carried as is.
        round_trip(&table_like(999)[..999 * 16 - 3]);
    }

    #[test]
    fn round_trips_pseudo_random_blobs_of_every_small_length() {
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        for len in 0..300 {
            let blob: Vec<u8> = (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    // Few distinct values, so matches occur.
                    (x % 5) as u8
                })
                .collect();
            round_trip(&blob);
        }
    }

    #[test]
    fn shrinks_table_like_records_and_is_deterministic() {
        let blob = table_like(50_000);
        let packed = pack(&blob);
        assert!(packed.len() * 8 < blob.len(), "{} → {}", blob.len(), packed.len());
        assert_eq!(packed, pack(&blob));
    }

    #[test]
    fn every_truncation_is_an_error_and_no_flipped_bit_panics() {
        let blob = table_like(300);
        let packed = pack(&blob);
        for cut in 0..packed.len() {
            assert!(unpack(&packed[..cut]).is_err(), "cut at {cut} unpacked");
        }
        // A flipped bit is an error, a different blob (which the table's CRC then rejects), or
        // — when a match offset moves to an identical earlier run of this periodic data —
        // the same blob. None panics; almost all change something.
        let (mut same, mut total) = (0, 0);
        for i in 0..packed.len() {
            for bit in 0..8 {
                let mut bad = packed.clone();
                bad[i] ^= 1 << bit;
                total += 1;
                same += usize::from(unpack(&bad).as_deref() == Ok(&blob[..]));
            }
        }
        assert!(same * 20 < total, "{same} of {total} flips unpacked to the same blob");
    }

    #[test]
    fn rejects_malformed_headers_and_sequences() {
        assert_eq!(unpack(b"nope"), Err(UnpackError::Magic));
        let mut huge = MAGIC.to_vec();
        put_varint(&mut huge, MAX_UNPACKED + 1);
        assert_eq!(unpack(&huge), Err(UnpackError::TooLarge { len: MAX_UNPACKED + 1 }));
        let mut stride0 = MAGIC.to_vec();
        stride0.extend([1, 0]);
        assert_eq!(unpack(&stride0), Err(UnpackError::Stride { stride: 0 }));
        // A match before anything was written.
        let mut early = MAGIC.to_vec();
        early.extend([8, 8, 0, 1, 4]);
        assert_eq!(unpack(&early), Err(UnpackError::Offset { at: 7, offset: 1 }));
        // Literals past the declared length.
        let mut long = MAGIC.to_vec();
        long.extend([2, 8, 3, 1, 2, 3]);
        assert_eq!(unpack(&long), Err(UnpackError::Overrun { at: 6 }));
        // Bytes after the end.
        let mut trailing = pack(b"abcdefgh");
        trailing.push(0);
        assert_eq!(unpack(&trailing), Err(UnpackError::Trailing { extra: 1 }));
        // An overlong varint.
        let mut varint = MAGIC.to_vec();
        varint.extend([0xff; 11]);
        assert_eq!(unpack(&varint), Err(UnpackError::Varint { at: 4 }));
    }
}
