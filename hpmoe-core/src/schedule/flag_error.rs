//! Why a hardware flag id may not be used, and why a flag-plan blob does not decode: the errors
//! of [`super::flags`], as data (the ids, cores, counts and sizes involved) with messages.

use crate::ids::CoreId;
use std::fmt;

/// A flag id the kernel may not use ([`super::flags::check_flag_id`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlagIdError {
    /// Not a hardware cross-core flag id (those are 0..15).
    OutOfRange(u32),
    /// A library a kernel may run with holds it.
    Reserved {
        /// The id asked for.
        id: u16,
        /// The first id of the library's range.
        lo: u16,
        /// The last id of the library's range (inclusive).
        hi: u16,
        /// The library.
        owner: &'static str,
    },
}

impl fmt::Display for FlagIdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FlagIdError::OutOfRange(id) => write!(f, "hardware cross-core flag ids are 0..15, not {id}"),
            FlagIdError::Reserved { id, lo, hi, owner } => {
                write!(f, "flag id {id} is reserved by {owner} (ids {lo}..{hi})")
            }
        }
    }
}

impl std::error::Error for FlagIdError {}

/// Which part of a flag-plan blob ended early.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlagPlanPart {
    /// The per-core totals after the header.
    Totals,
    /// The per-entry ops after the totals.
    EntryOps,
}

/// Why a flag-plan blob does not decode for a table ([`super::flags::decode_plan`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FlagPlanError {
    /// Not a version-1 plan (magic `HPMOEFLG`).
    NotAPlan,
    /// The blob's length differs from its header's (or is shorter than a header).
    Size {
        /// Bytes in the blob.
        bytes: usize,
        /// Bytes the header says.
        header: usize,
    },
    /// The CRC-32 does not match the contents.
    Crc,
    /// The plan's core or entry count is not the table's.
    Shape {
        /// The table's cores.
        cores: usize,
        /// The table's entries.
        entries: u32,
    },
    /// The plan names another table's checksum.
    OtherTable,
    /// The plan's flag id is one the kernel may not use.
    FlagId(FlagIdError),
    /// The blob ends inside a part.
    Truncated(FlagPlanPart),
    /// An AIC entry's op is more than one set.
    AicOp {
        /// The AIC.
        core: CoreId,
        /// The op found.
        op: u8,
    },
    /// An AIC's total is not the sum of its entries' sets.
    AicTotal {
        /// The AIC.
        core: CoreId,
        /// Its total.
        total: u32,
        /// The sets of its entries.
        sets: u32,
    },
    /// An AIV's total is not its AIC's sets, or its list waits more often than that.
    AivTotal {
        /// The AIV.
        core: CoreId,
        /// The waits of its entries.
        list_waits: u32,
        /// Its total.
        total: u32,
        /// Its own AIC.
        aic: CoreId,
        /// That AIC's total.
        sets: u32,
    },
    /// No flag id, yet some core sets or waits on a flag.
    NoFlagId,
    /// The padding after the per-entry ops is not zero.
    Padding,
}

impl fmt::Display for FlagPlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FlagPlanError::NotAPlan => f.write_str("not a version-1 hpmoe flag plan (magic HPMOEFLG)"),
            FlagPlanError::Size { bytes, header } => {
                write!(f, "the blob holds {bytes} bytes, its header says {header}")
            }
            FlagPlanError::Crc => f.write_str("the CRC-32 does not match the contents"),
            FlagPlanError::Shape { cores, entries } => {
                write!(f, "the plan is for another shape of table ({cores} cores, {entries} entries expected)")
            }
            FlagPlanError::OtherTable => f.write_str("the plan belongs to another table (its table checksum differs)"),
            FlagPlanError::FlagId(e) => e.fmt(f),
            FlagPlanError::Truncated(FlagPlanPart::Totals) => f.write_str("the blob ends inside the per-core totals"),
            FlagPlanError::Truncated(FlagPlanPart::EntryOps) => f.write_str("the blob ends inside the per-entry ops"),
            FlagPlanError::AicOp { core, op } => {
                write!(f, "core {core} (an AIC) has flag op {op} on an entry; an AIC sets at most once")
            }
            FlagPlanError::AicTotal { core, total, sets } => {
                write!(f, "core {core}'s flag total is {total}, but its entries set the flag {sets} times")
            }
            FlagPlanError::AivTotal { core, list_waits, total, aic, sets } => write!(
                f,
                "core {core} waits {list_waits} times in its list and {total} in all, but its AIC (core {aic}) sets the flag {sets} times"
            ),
            FlagPlanError::NoFlagId => f.write_str("the plan names no flag id, yet its cores set or wait on a flag"),
            FlagPlanError::Padding => f.write_str("the padding after the per-entry ops is not zero"),
        }
    }
}

/// `FlagId` is transparent: its message is the id error's, with no source of its own.
impl std::error::Error for FlagPlanError {}
