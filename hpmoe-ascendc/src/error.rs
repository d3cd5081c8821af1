//! The backend's errors as data, the way the core's [`hpmoe_core::Diagnostics`] are: each has a
//! kind (an enum with a stable [`code`](EmitErrorKind::code)), a location where there is one,
//! and a message; where a step can find more than one, it collects them all. Every module of the
//! crate that fails imports its error from here, so none imports another for its errors.
//!
//! | error | of | location |
//! |---|---|---|
//! | [`EmitError`] / [`EmitErrors`] | [`crate::emit()`]: what the backend cannot turn into C++ | taskflow, tile, the op call's or region's [`Loc`] |
//! | [`ToolkitError`] | [`crate::toolchain`], [`crate::check`]: finding and running a compiler | toolkit root, source file |
//! | [`DiagError`] | [`crate::diag::decode`]: reading a diagnostics area | — |
//! | [`BuildError`] | [`crate::Build`]: everything above, per file and taskflow | `file:line:column` |

use hpmoe_core::Diagnostic;
use hpmoe_core::certify::CertError;
use hpmoe_core::model::{Loc, SourcePos};
use std::fmt;
use std::path::PathBuf;

/// What the backend cannot emit, one variant per check. Stable, so tests and tools can match.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EmitErrorKind {
    /// An op call names an op the taskflow's registry does not hold.
    UnknownOp,
    /// An op call with the wrong number of arguments.
    ArityMismatch,
    /// A region or guard names a tensor the taskflow does not declare.
    UnknownTensor,
    /// A region that is not rows of one stride, or a tensor without dimensions.
    UnstridedRegion,
    /// A region larger than the runtime's views (2^32 - 1 elements).
    RegionTooLarge,
    /// A user op without an `emit` template.
    NoEmission,
    /// An `emit` template naming no parameter, or with an unmatched brace.
    BadTemplate,
    /// Two arguments that must have one element type do not.
    DTypeMismatch,
    /// An element type the op's AscendC wrapper does not take.
    UnsupportedDType,
    /// Argument shapes the op's AscendC wrapper cannot pair.
    ShapeMismatch,
    /// More rows per output row than one UB tile holds.
    TooManyRows,
    /// A put whose destination is not a remote region.
    PutWithoutRank,
    /// A `run_if_above` count that is not one local `i32` element.
    BadGuardCount,
    /// An AIC tile that signals another rank (only puts, on AIVs, may).
    RemoteSignalFromAic,
    /// The counts of an on-chip slot sum that are not one row or column of local `i32` elements.
    BadSlotCounts,
    /// An on-chip sum whose result no base block of whole fractals fitting L0C tiles.
    NoL0cBlock,
}

impl EmitErrorKind {
    /// Short stable name (`unstrided_region`).
    pub const fn code(self) -> &'static str {
        match self {
            EmitErrorKind::UnknownOp => "unknown_op",
            EmitErrorKind::ArityMismatch => "arity_mismatch",
            EmitErrorKind::UnknownTensor => "unknown_tensor",
            EmitErrorKind::UnstridedRegion => "unstrided_region",
            EmitErrorKind::RegionTooLarge => "region_too_large",
            EmitErrorKind::NoEmission => "no_emission",
            EmitErrorKind::BadTemplate => "bad_template",
            EmitErrorKind::DTypeMismatch => "dtype_mismatch",
            EmitErrorKind::UnsupportedDType => "unsupported_dtype",
            EmitErrorKind::ShapeMismatch => "shape_mismatch",
            EmitErrorKind::TooManyRows => "too_many_rows",
            EmitErrorKind::PutWithoutRank => "put_without_rank",
            EmitErrorKind::BadGuardCount => "bad_guard_count",
            EmitErrorKind::RemoteSignalFromAic => "remote_signal_from_aic",
            EmitErrorKind::BadSlotCounts => "bad_slot_counts",
            EmitErrorKind::NoL0cBlock => "no_l0c_block",
        }
    }
}

/// What is wrong with one op call or region, before the emitter knows where it is: the
/// emitter places it ([`EmitFault::at`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EmitFault {
    /// What is wrong.
    pub kind: EmitErrorKind,
    /// What is wrong, in words, naming the regions as written.
    pub message: String,
}

impl EmitFault {
    /// A fault of `kind`.
    pub fn new(kind: EmitErrorKind, message: impl Into<String>) -> Self {
        EmitFault { kind, message: message.into() }
    }

    /// The fault at `loc` of tile `family` of `taskflow`.
    pub fn at(self, taskflow: &str, family: &str, loc: Loc) -> EmitError {
        EmitError {
            kind: self.kind,
            taskflow: taskflow.into(),
            family: Some(family.into()),
            loc,
            message: self.message,
        }
    }
}

/// A taskflow the backend cannot turn into a kernel, at the offending declaration or op call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EmitError {
    /// What is wrong.
    pub kind: EmitErrorKind,
    /// The taskflow's name.
    pub taskflow: String,
    /// The tile family, when the error is in one.
    pub family: Option<String>,
    /// The offending op call, region or family in the taskflow's source map.
    pub loc: Loc,
    /// What is wrong, in words.
    pub message: String,
}

impl fmt::Display for EmitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.family {
            Some(fam) => write!(f, "taskflow `{}`, tile `{fam}`: {}", self.taskflow, self.message),
            None => write!(f, "taskflow `{}`: {}", self.taskflow, self.message),
        }
    }
}

impl std::error::Error for EmitError {}

/// Every emission error of one taskflow, in the order of its tiles and their op calls.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EmitErrors {
    /// Every error, in order.
    pub errors: Vec<EmitError>,
}

impl EmitErrors {
    /// The kinds, in order.
    pub fn kinds(&self) -> Vec<EmitErrorKind> {
        self.errors.iter().map(|e| e.kind).collect()
    }

    /// `Ok(value)` if no error was collected.
    pub fn into_result<T>(self, value: T) -> Result<T, EmitErrors> {
        if self.errors.is_empty() { Ok(value) } else { Err(self) }
    }
}

impl fmt::Display for EmitErrors {
    /// One error a line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.errors.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for EmitErrors {}

/// Environment variable naming the CANN toolkit's root (set by the toolkit's `set_env.sh`);
/// [`crate::toolchain::Toolkit::from_env`] reads it, [`ToolkitError::NoCompiler`]'s message
/// names it. Also `crate::toolchain::ASCEND_HOME_ENV`.
pub const ASCEND_HOME_ENV: &str = "ASCEND_HOME_PATH";

/// Why a compiler could not compile a file: the CANN toolkit's ([`crate::toolchain`]) or the
/// host compiler of a syntax check ([`crate::check`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToolkitError {
    /// `root` holds none of the compilers looked for.
    NoCompiler {
        /// The toolkit root searched (`ASCEND_HOME_PATH`, or the path given).
        root: PathBuf,
        /// The compiler paths tried under `root`, in order.
        looked_for: Vec<String>,
    },
    /// The compiler could not be started (the operating system's reason).
    CannotRun {
        /// The compiler's path.
        compiler: PathBuf,
        /// The operating system's error.
        reason: String,
    },
    /// The compiler rejected `source`; `output` is what it printed (stdout, then stderr).
    CompileFailed {
        /// The compiler that failed.
        compiler: PathBuf,
        /// The file it was compiling.
        source: PathBuf,
        /// Its standard output, then its standard error.
        output: String,
    },
}

impl fmt::Display for ToolkitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ToolkitError::NoCompiler { root, looked_for } => write!(
                f,
                "{}={} holds no Ascend C compiler (looked for {})",
                ASCEND_HOME_ENV,
                root.display(),
                looked_for.join(", ")
            ),
            ToolkitError::CannotRun { compiler, reason } => write!(f, "cannot run {}: {reason}", compiler.display()),
            ToolkitError::CompileFailed { compiler, source, output } => {
                write!(f, "{} failed on {}:\n{output}", compiler.display(), source.display())
            }
        }
    }
}

impl std::error::Error for ToolkitError {}

/// Why a diagnostics area could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DiagError {
    /// The area holds `bytes` bytes; `cores` cores need `need`.
    AreaTooSmall {
        /// Bytes the area holds.
        bytes: usize,
        /// Cores per rank the area was decoded for.
        cores: usize,
        /// Bytes those cores need: `HEADER_BYTES + cores * RECORD_BYTES`.
        need: usize,
    },
}

impl fmt::Display for DiagError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DiagError::AreaTooSmall { bytes, cores, need } => {
                write!(f, "the diagnostics area holds {bytes} bytes; {cores} cores need {need}")
            }
        }
    }
}

impl std::error::Error for DiagError {}

/// What kind of failure a [`BuildFailure`] is. Stable, so tests and tools can match.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BuildErrorKind {
    /// Neither `OUT_DIR` nor [`crate::Build::out_dir`] says where to write.
    NoOutDir,
    /// A source file could not be read.
    UnreadableSource,
    /// A source file's taskflow (or the file itself) failed the front-end or the checks.
    Source,
    /// A builder taskflow failed the checks.
    Taskflow,
    /// A planned table failed the certificate check: a bug of hpmoe.
    Uncertified,
    /// The backend cannot emit a taskflow.
    Emit,
    /// Two taskflows make kernels of one name.
    DuplicateKernel,
    /// The kernels could not be written.
    Write,
    /// The toolkit could not be found or failed.
    Toolkit,
}

impl BuildErrorKind {
    /// Short stable name (`duplicate_kernel`).
    pub const fn code(self) -> &'static str {
        match self {
            BuildErrorKind::NoOutDir => "no_out_dir",
            BuildErrorKind::UnreadableSource => "unreadable_source",
            BuildErrorKind::Source => "source",
            BuildErrorKind::Taskflow => "taskflow",
            BuildErrorKind::Uncertified => "uncertified",
            BuildErrorKind::Emit => "emit",
            BuildErrorKind::DuplicateKernel => "duplicate_kernel",
            BuildErrorKind::Write => "write",
            BuildErrorKind::Toolkit => "toolkit",
        }
    }
}

/// One failure of a build, with what is known of where. Its `Display` is the line (or lines)
/// the build reports: `src/moe.rs:12:5: error: ...`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BuildFailure {
    /// See [`BuildErrorKind::NoOutDir`].
    NoOutDir,
    /// `file` could not be read (the operating system's reason).
    UnreadableSource {
        /// The source file given to [`crate::Build::file`].
        file: PathBuf,
        /// The operating system's error.
        reason: String,
    },
    /// An error of the shared front-end or the checks, at its place in a source file.
    Source {
        /// File, line and column of the error.
        at: SourcePos,
        /// The front-end's or the check's message.
        message: String,
    },
    /// A check's diagnostic of builder taskflow `taskflow`, at the Rust code that declared the
    /// offending part when the taskflow's source map knows it.
    Taskflow {
        /// The taskflow's name.
        taskflow: String,
        /// Where the taskflow's source map places the diagnostic, if it does.
        at: Option<SourcePos>,
        /// The check's diagnostic (kind, location in the IR, message).
        diagnostic: Diagnostic,
    },
    /// The planned table of `taskflow` (of source `file`, if from one) is not certified.
    Uncertified {
        /// The source file the taskflow came from; `None` for a builder taskflow.
        file: Option<PathBuf>,
        /// The taskflow's name.
        taskflow: String,
        /// The first property the certificate found broken.
        error: CertError,
    },
    /// The backend cannot emit a taskflow: `error`, at `at` when known.
    Emit {
        /// Where in a source file the emission error's IR location was declared, if known.
        at: Option<SourcePos>,
        /// The emission error.
        error: EmitError,
    },
    /// Two taskflows make a kernel called `name`.
    DuplicateKernel {
        /// The kernel name both taskflows produce.
        name: String,
    },
    /// Writing into `dir` failed (the operating system's reason).
    Write {
        /// The folder written into.
        dir: PathBuf,
        /// The operating system's error.
        reason: String,
    },
    /// The toolkit could not be found or failed.
    Toolkit(ToolkitError),
}

impl BuildFailure {
    /// The failure's kind.
    pub fn kind(&self) -> BuildErrorKind {
        match self {
            BuildFailure::NoOutDir => BuildErrorKind::NoOutDir,
            BuildFailure::UnreadableSource { .. } => BuildErrorKind::UnreadableSource,
            BuildFailure::Source { .. } => BuildErrorKind::Source,
            BuildFailure::Taskflow { .. } => BuildErrorKind::Taskflow,
            BuildFailure::Uncertified { .. } => BuildErrorKind::Uncertified,
            BuildFailure::Emit { .. } => BuildErrorKind::Emit,
            BuildFailure::DuplicateKernel { .. } => BuildErrorKind::DuplicateKernel,
            BuildFailure::Write { .. } => BuildErrorKind::Write,
            BuildFailure::Toolkit(_) => BuildErrorKind::Toolkit,
        }
    }
}

/// `at: ` when there is a place, else nothing.
fn prefix(at: Option<&SourcePos>) -> String {
    at.map(|p| format!("{p}: ")).unwrap_or_default()
}

impl fmt::Display for BuildFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildFailure::NoOutDir => {
                f.write_str("error: OUT_DIR is not set: call Build::compile from a build script, or set Build::out_dir")
            }
            BuildFailure::UnreadableSource { file, reason } => {
                write!(f, "{}: error: cannot read the file: {reason}", file.display())
            }
            BuildFailure::Source { at, message } => write!(f, "{at}: error: {message}"),
            BuildFailure::Taskflow { at, diagnostic, .. } => {
                write!(f, "error[{}]: {}{diagnostic}", diagnostic.kind.code(), prefix(at.as_ref()))
            }
            BuildFailure::Uncertified { file, taskflow, error } => write!(
                f,
                "{}error: internal error: the planned schedule table of `{taskflow}` is not certified; please \
                 report this: {error}",
                file.as_ref().map(|p| format!("{}: ", p.display())).unwrap_or_default()
            ),
            BuildFailure::Emit { at, error } => write!(f, "{}error: {error}", prefix(at.as_ref())),
            BuildFailure::DuplicateKernel { name } => {
                write!(f, "error: two taskflows make a kernel named `{name}`; rename one")
            }
            BuildFailure::Write { dir, reason } => write!(f, "error: writing kernels to {}: {reason}", dir.display()),
            BuildFailure::Toolkit(e) => write!(f, "error: {e}"),
        }
    }
}

/// Why a build failed: every failure found, in the order of the build's files and taskflows.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BuildError {
    /// Every failure, in order.
    pub failures: Vec<BuildFailure>,
}

impl BuildError {
    /// A build error of one failure.
    pub fn of(failure: BuildFailure) -> Self {
        BuildError { failures: vec![failure] }
    }

    /// The kinds, in order.
    pub fn kinds(&self) -> Vec<BuildErrorKind> {
        self.failures.iter().map(BuildFailure::kind).collect()
    }

    /// The taskflows whose planned table failed the certificate check, with the check's error:
    /// a bug of hpmoe's planner, never a user's mistake.
    pub fn uncertified(&self) -> impl Iterator<Item = (&str, &CertError)> {
        self.failures.iter().filter_map(|f| match f {
            BuildFailure::Uncertified { taskflow, error, .. } => Some((taskflow.as_str(), error)),
            _ => None,
        })
    }
}

impl fmt::Display for BuildError {
    /// Each failure, a line (or lines) each.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for e in &self.failures {
            writeln!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for BuildError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_render_as_the_build_reports_them_and_keep_their_kind() {
        let at = SourcePos { file: "src/moe.rs".into(), line: 12, column: 5 };
        let emit = EmitFault::new(EmitErrorKind::ShapeMismatch, "shapes differ").at("moe", "gmm", Loc::NONE);
        let err = BuildError {
            failures: vec![
                BuildFailure::Emit { at: Some(at.clone()), error: emit },
                BuildFailure::Source { at, message: "unknown tensor `X`".into() },
                BuildFailure::DuplicateKernel { name: "moe".into() },
            ],
        };
        assert_eq!(err.kinds(), [BuildErrorKind::Emit, BuildErrorKind::Source, BuildErrorKind::DuplicateKernel]);
        assert_eq!(
            err.to_string(),
            "src/moe.rs:12:5: error: taskflow `moe`, tile `gmm`: shapes differ\n\
             src/moe.rs:12:5: error: unknown tensor `X`\n\
             error: two taskflows make a kernel named `moe`; rename one\n"
        );
        assert_eq!(err.uncertified().count(), 0);
    }
}
