//! Why a schedule table could not be built, decoded or imported.

use std::fmt;

/// An error from building, decoding (binary or JSON) or validating a schedule table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TableError {
    /// The blob is shorter than its fixed header.
    TooShort { len: u64, needed: u64 },
    /// The blob does not start with [`super::MAGIC`].
    BadMagic { found: [u8; 8] },
    /// The blob or document has a format version this code does not read.
    UnsupportedVersion { found: u32, supported: u32 },
    /// The header's total size disagrees with the blob's length.
    SizeMismatch { declared: u64, actual: u64 },
    /// The CRC-32 stored in the header is not the CRC-32 of the covered bytes.
    ChecksumMismatch { stored: u32, computed: u32 },
    /// A section's offset or size in the directory is not the one its record count implies.
    BadSection { section: &'static str, offset: u32, bytes: u32, expected_offset: u64, expected_bytes: u64 },
    /// A value does not fit the field the format stores it in (a limit of the format).
    TooLarge { what: String, value: u64, limit: u64 },
    /// The records contradict each other (an index out of range, a count that does not add
    /// up, an unknown code, ...). The message says which record and why.
    Inconsistent(String),
    /// The JSON text is not a schedule table document.
    Json(String),
}

impl TableError {
    pub(crate) fn inconsistent(message: impl Into<String>) -> Self {
        TableError::Inconsistent(message.into())
    }

    pub(crate) fn too_large(what: impl Into<String>, value: u64, limit: u64) -> Self {
        TableError::TooLarge { what: what.into(), value, limit }
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
