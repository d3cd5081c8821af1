//! Diagnostics: every check reports here, and all of them are returned together.

use crate::model::{Loc, SourceMap};
use serde::Serialize;
use std::fmt;

/// What went wrong, one variant per distinct check. Stable, so tests and tools can match.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ErrorKind {
    /// Two tensors, two tile families, or two grid indices of one family share a name.
    DuplicateName,
    /// A region, `after` entry or guard names a tensor the taskflow does not declare.
    UnknownTensor,
    /// An `after` entry names a tile family the taskflow does not declare.
    UnknownTile,
    /// An op call names an op neither built in nor registered by the taskflow.
    UnknownOp,
    /// Wrong number of op arguments, region dimensions, or `after` indices.
    ArityMismatch,
    /// A region expression mentions a grid index the family does not have.
    UnknownIndex,
    /// An op on a core kind that cannot run it (matmul on aiv, put on aic, ...).
    WrongCoreKind,
    /// A remote region where the op's parameter is local, or a local one where remote is required.
    RemoteMismatch,
    /// A put into a tensor that is not symmetric.
    PutIntoNonSymmetric,
    /// A write into a kernel input.
    WriteToInput,
    /// A `run_if_above` guard whose count is not one local `i32` element, or that a tile
    /// sets twice or reads from a tensor its own body writes.
    BadGuard,
    /// A tensor shape that is empty, has a zero or oversized extent, or too many dimensions.
    BadShape,
    /// A profile with no cores or ranks, or more than the limits.
    BadProfile,
    /// A grid dimension of extent 0: the family would have no instances.
    EmptyGrid,
    /// A family with more than [`crate::limits::MAX_GRID_DIMS`] grid dimensions, or more than
    /// [`crate::limits::MAX_FAMILY_INSTANCES`] instances per rank.
    GridTooLarge,
    /// More than [`crate::limits::MAX_INSTANCES`] tile instances over all ranks.
    TooManyInstances,
    /// More than [`crate::limits::MAX_EDGES`] dependency edges over all ranks (counted on the
    /// families before expansion, or on the instances).
    TooManyEdges,
    /// A tile body with too many ops or an op with too many arguments.
    TileTooLarge,
    /// A region that leaves its tensor: a length of 0 or past the dimension's extent (on the
    /// families), or a start whose instance's region ends past it (on the instances).
    RegionOutOfBounds,
    /// A remote region (`.on(rank)`) whose rank is past the profile's ranks for some instance.
    RankOutOfRange,
    /// An `after` entry selects an instance outside the target's grid.
    AfterOutOfRange,
    /// An expression overflows 64-bit arithmetic.
    Overflow,
    /// A read of scratch / output / symmetric data that no earlier tile writes.
    UnwrittenRead,
    /// A write that may run before an earlier tile's read of the same data.
    UnorderedWriteAfterRead,
    /// Two writes of the same data with no order between them.
    UnorderedWriteAfterWrite,
    /// Two instances of one tile family add into the same data (read-modify-write) with no
    /// order between them: the sum's order would depend on the schedule.
    UnorderedAccumulation,
    /// Dependencies form a cycle.
    Cycle,
    /// Per-core orders plus dependencies form a cycle (the cores would deadlock).
    Deadlock,
    /// A tile's ops need more UB (AIV) or L1 (AIC) than the core has (see `check_footprint`).
    FootprintTooLarge,
    /// The ordering check ran out of its visit budget.
    CheckBudget,
    /// A core kind whose instances cannot fit [`crate::limits::MAX_TASKS_PER_CORE`] entries per
    /// core of the table, however they are spread.
    TooManyTasks,
    /// A rank needs more than [`crate::limits::MAX_COUNTERS_PER_RANK`] event counters.
    TooManyCounters,
    /// A wait needs more than [`crate::limits::MAX_FAN_IN`] signals before it releases.
    FanInTooLarge,
    /// A tile sends more than [`crate::limits::MAX_SIGNALS_PER_TILE`] signals.
    TooManySignals,
    /// A stage produced something a later stage rejects: a bug in hpmoe, never in user code.
    Internal,
}

impl ErrorKind {
    /// Short stable name (`unknown_tensor`), used in messages' codes and as the kind's JSON form.
    pub const fn code(self) -> &'static str {
        match self {
            ErrorKind::DuplicateName => "duplicate_name",
            ErrorKind::UnknownTensor => "unknown_tensor",
            ErrorKind::UnknownTile => "unknown_tile",
            ErrorKind::UnknownOp => "unknown_op",
            ErrorKind::ArityMismatch => "arity_mismatch",
            ErrorKind::UnknownIndex => "unknown_index",
            ErrorKind::WrongCoreKind => "wrong_core_kind",
            ErrorKind::RemoteMismatch => "remote_mismatch",
            ErrorKind::PutIntoNonSymmetric => "put_into_non_symmetric",
            ErrorKind::WriteToInput => "write_to_input",
            ErrorKind::BadGuard => "bad_guard",
            ErrorKind::BadShape => "bad_shape",
            ErrorKind::BadProfile => "bad_profile",
            ErrorKind::EmptyGrid => "empty_grid",
            ErrorKind::GridTooLarge => "grid_too_large",
            ErrorKind::TooManyInstances => "too_many_instances",
            ErrorKind::TooManyEdges => "too_many_edges",
            ErrorKind::TileTooLarge => "tile_too_large",
            ErrorKind::RegionOutOfBounds => "region_out_of_bounds",
            ErrorKind::RankOutOfRange => "rank_out_of_range",
            ErrorKind::AfterOutOfRange => "after_out_of_range",
            ErrorKind::Overflow => "overflow",
            ErrorKind::UnwrittenRead => "unwritten_read",
            ErrorKind::UnorderedWriteAfterRead => "unordered_write_after_read",
            ErrorKind::UnorderedWriteAfterWrite => "unordered_write_after_write",
            ErrorKind::UnorderedAccumulation => "unordered_accumulation",
            ErrorKind::Cycle => "cycle",
            ErrorKind::Deadlock => "deadlock",
            ErrorKind::FootprintTooLarge => "footprint_too_large",
            ErrorKind::CheckBudget => "check_budget",
            ErrorKind::TooManyTasks => "too_many_tasks",
            ErrorKind::TooManyCounters => "too_many_counters",
            ErrorKind::FanInTooLarge => "fan_in_too_large",
            ErrorKind::TooManySignals => "too_many_signals",
            ErrorKind::Internal => "internal",
        }
    }
}

impl Serialize for ErrorKind {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.code())
    }
}

/// A secondary location with a message (`note: first declared here`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Note {
    /// Where the note points (a declaration, the other side of a conflict).
    pub loc: Loc,
    /// What it says there.
    pub message: String,
}

/// One error at one place in user code.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// Which check failed: stable, for tests and tools to match.
    pub kind: ErrorKind,
    /// The IR node it is about; a [`SourceMap`] turns it into `file:line:column`.
    pub loc: Loc,
    /// The message, one line, naming what is wrong with the values involved.
    pub message: String,
    /// How to fix it, when the check knows.
    pub help: Option<String>,
    /// Related places: the first declaration of a duplicate, the other access of a conflict.
    pub notes: Vec<Note>,
}

impl Diagnostic {
    /// An error of `kind` at `loc`, without help or notes.
    pub fn new(kind: ErrorKind, loc: Loc, message: impl Into<String>) -> Self {
        Diagnostic { kind, loc, message: message.into(), help: None, notes: Vec::new() }
    }

    /// Adds the help line.
    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// Adds a note at `loc`.
    pub fn note(mut self, loc: Loc, message: impl Into<String>) -> Self {
        self.notes.push(Note { loc, message: message.into() });
        self
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.message)?;
        if let Some(h) = &self.help {
            write!(f, "\n  help: {h}")?;
        }
        for n in &self.notes {
            write!(f, "\n  note: {}", n.message)?;
        }
        Ok(())
    }
}

/// All the errors of one taskflow, in the order the checks found them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Diagnostics {
    /// The errors, in the order the checks found them.
    pub errors: Vec<Diagnostic>,
}

impl Diagnostics {
    /// Adds one error.
    pub fn push(&mut self, d: Diagnostic) {
        self.errors.push(d);
    }

    /// Whether no error was found.
    pub fn is_empty(&self) -> bool {
        self.errors.is_empty()
    }

    /// Number of errors.
    pub fn len(&self) -> usize {
        self.errors.len()
    }

    /// Appends every error of `other`.
    pub fn extend(&mut self, other: Diagnostics) {
        self.errors.extend(other.errors);
    }

    /// The kind of each error, in order (what the tests compare).
    pub fn kinds(&self) -> Vec<ErrorKind> {
        self.errors.iter().map(|d| d.kind).collect()
    }

    /// `Ok(value)` if no error was collected.
    pub fn into_result<T>(self, value: T) -> Result<T, Diagnostics> {
        if self.is_empty() { Ok(value) } else { Err(self) }
    }

    /// Renders every error with `file:line:col` where the source map knows it.
    pub fn render(&self, sources: &SourceMap) -> String {
        let mut out = String::new();
        for d in &self.errors {
            let at = sources.get(d.loc).map(|p| format!("{p}: ")).unwrap_or_default();
            out.push_str(&format!("error[{}]: {at}{d}\n", d.kind.code()));
        }
        out
    }
}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.errors.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "error[{}]: {d}", d.kind.code())?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostics {}

/// Caps how many errors of one kind a check reports; the rest become one summary line.
#[derive(Debug)]
pub(crate) struct Capped<'a> {
    out: &'a mut Diagnostics,
    kind: ErrorKind,
    reported: usize,
    suppressed: usize,
    loc: Loc,
}

impl<'a> Capped<'a> {
    pub(crate) fn new(out: &'a mut Diagnostics, kind: ErrorKind) -> Self {
        Capped { out, kind, reported: 0, suppressed: 0, loc: Loc::NONE }
    }

    pub(crate) fn push(&mut self, d: Diagnostic) {
        if self.reported < crate::limits::MAX_ERRORS_PER_CHECK {
            self.reported += 1;
            self.loc = d.loc;
            self.out.push(d);
        } else {
            self.suppressed += 1;
        }
    }
}

impl Drop for Capped<'_> {
    fn drop(&mut self) {
        if self.suppressed > 0 {
            let msg = format!("... and {} more errors of this kind ({})", self.suppressed, self.kind.code());
            self.out.push(Diagnostic::new(self.kind, self.loc, msg));
        }
    }
}
