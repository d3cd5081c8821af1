//! Why a schedule table could not be built, decoded or imported.

use super::inconsistency::{Inconsistency, JsonProblem};
use std::fmt;

/// An error from building, decoding (binary or JSON) or validating a schedule table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TableError {
    /// The blob is shorter than its fixed header.
    TooShort {
        /// Bytes the blob holds.
        len: u64,
        /// Bytes of the fixed header.
        needed: u64,
    },
    /// The blob does not start with [`super::MAGIC`].
    BadMagic {
        /// The blob's first 8 bytes.
        found: [u8; 8],
    },
    /// The blob or document has a format version this code does not read.
    UnsupportedVersion {
        /// The version the blob or document declares.
        found: u32,
        /// The one this code reads ([`super::FORMAT_VERSION`]).
        supported: u32,
    },
    /// The header's total size disagrees with the blob's length.
    SizeMismatch {
        /// Total size the header declares, bytes.
        declared: u64,
        /// The blob's length, bytes.
        actual: u64,
    },
    /// The CRC-32 stored in the header is not the CRC-32 of the covered bytes.
    ChecksumMismatch {
        /// The CRC-32 in the header.
        stored: u32,
        /// The CRC-32 of the bytes it covers.
        computed: u32,
    },
    /// A section's offset or size in the directory is not the one its record count implies.
    BadSection {
        /// The section's name (`families`, `cores`, `counters`, `entries`, `signals`, `names`).
        section: &'static str,
        /// Its offset in the directory.
        offset: u32,
        /// Its size in the directory.
        bytes: u32,
        /// The offset the counts imply.
        expected_offset: u64,
        /// The size the counts imply.
        expected_bytes: u64,
    },
    /// A value does not fit the field the format stores it in (a limit of the format).
    TooLarge {
        /// What does not fit.
        what: Quantity,
        /// Its value.
        value: u64,
        /// The largest the field can store.
        limit: u64,
    },
    /// The records contradict each other (an index out of range, a count that does not add
    /// up, an unknown code, ...): which record and why.
    Inconsistent(Box<Inconsistency>),
    /// The JSON text is not a schedule table document.
    Json(Box<JsonProblem>),
}

/// A quantity the binary format stores in a field of fixed width ([`TableError::TooLarge`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Quantity {
    /// The number of ranks.
    Ranks,
    /// Cores per rank (AICs and their AIVs).
    CoresPerRank,
    /// The size of the binary table in bytes.
    TableBytes,
    /// The counters one rank uses.
    RankCounters {
        /// The rank.
        rank: usize,
    },
    /// The entries of one core (global core index).
    CoreEntries {
        /// The core.
        core: usize,
    },
    /// The grid dimensions of a family.
    GridDims {
        /// The family's name.
        family: String,
    },
    /// Instances per rank, counted up to and including a family.
    InstancesUpTo {
        /// The family's name.
        family: String,
    },
    /// The number of entries of the whole table.
    Entries,
    /// The wait target of an instance (its fan-in).
    WaitTarget {
        /// The instance (per-rank index).
        instance: u32,
    },
    /// The signals one instance sends.
    InstanceSignals {
        /// The instance (per-rank index).
        instance: u32,
    },
    /// The number of signals of the whole table.
    Signals,
}

impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Quantity::Ranks => f.write_str("number of ranks"),
            Quantity::CoresPerRank => f.write_str("cores per rank"),
            Quantity::TableBytes => f.write_str("size of the binary table in bytes"),
            Quantity::RankCounters { rank } => write!(f, "counters of rank {rank}"),
            Quantity::CoreEntries { core } => write!(f, "entries of core {core}"),
            Quantity::GridDims { family } => write!(f, "grid dimensions of family `{family}`"),
            Quantity::InstancesUpTo { family } => write!(f, "instances per rank up to family `{family}`"),
            Quantity::Entries => f.write_str("number of entries"),
            Quantity::WaitTarget { instance } => write!(f, "wait target of instance {instance}"),
            Quantity::InstanceSignals { instance } => write!(f, "signals of instance {instance}"),
            Quantity::Signals => f.write_str("number of signals"),
        }
    }
}

impl TableError {
    pub(crate) fn too_large(what: Quantity, value: u64, limit: u64) -> Self {
        TableError::TooLarge { what, value, limit }
    }
}

impl fmt::Display for TableError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TableError::TooShort { len, needed } => {
                write!(f, "schedule table blob is {len} bytes, shorter than its {needed}-byte header")
            }
            TableError::BadMagic { found } => {
                write!(
                    f,
                    "not a schedule table blob: magic is {:?}, expected {:?}",
                    found.escape_ascii().to_string(),
                    { super::MAGIC.escape_ascii().to_string() }
                )
            }
            TableError::UnsupportedVersion { found, supported } => {
                write!(
                    f,
                    "schedule table format version {found} is not supported (this build reads version {supported})"
                )
            }
            TableError::SizeMismatch { declared, actual } => {
                write!(f, "schedule table header declares {declared} bytes but the blob has {actual}")
            }
            TableError::ChecksumMismatch { stored, computed } => {
                write!(
                    f,
                    "schedule table checksum mismatch: header says {stored:#010x}, contents give {computed:#010x}"
                )
            }
            TableError::BadSection { section, offset, bytes, expected_offset, expected_bytes } => write!(
                f,
                "schedule table section `{section}` is at {offset} with {bytes} bytes, \
                 but the header's counts put it at {expected_offset} with {expected_bytes} bytes"
            ),
            TableError::TooLarge { what, value, limit } => {
                write!(f, "{what} is {value}, more than the schedule table format allows ({limit})")
            }
            TableError::Inconsistent(message) => write!(f, "inconsistent schedule table: {message}"),
            TableError::Json(message) => write!(f, "invalid schedule table JSON: {message}"),
        }
    }
}

impl std::error::Error for TableError {}
