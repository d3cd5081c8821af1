//! Why an example could not run, as data: one variant per kind of failure, carrying the
//! typed error of the hpmoe step that failed and what it failed on (the taskflow, the file,
//! the option). A wrong result is not an error: it is a check that did not pass
//! ([`crate::HostCheck`]).

use hpmoe_ascendc::{EmitErrors, EmulateError};
use hpmoe_core::Diagnostics;
use hpmoe_core::cost::{ActivityError, ProfileError};
use hpmoe_core::expand::TooManyInstances;
use hpmoe_core::model::{DuplicateOp, SourceMap};
use hpmoe_host::exec::{ExecError, ReferenceError};
use hpmoe_host::moe::{Pass, ShapeError};
use hpmoe_host::sim::SimError;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

/// Why an example could not run.
#[derive(Clone, Debug)]
pub enum ExampleError {
    /// An option the example does not know; `usage` lists those it does.
    UnknownOption {
        /// The option as given.
        option: String,
        /// The example's usage text.
        usage: String,
    },
    /// An option that takes a number (within its type's range) got `value`.
    NotANumber {
        /// The option.
        option: String,
        /// What it was given.
        value: String,
    },
    /// An option that takes one of a few names got `value`.
    NotAChoice {
        /// The option.
        option: String,
        /// What it was given.
        value: String,
        /// The names it takes.
        choices: Vec<String>,
    },
    /// `--profile` names no preset and no readable profile file, or a profile field cannot take
    /// a value.
    Profile(ProfileError),
    /// A cost profile has no field called `field`.
    UnknownProfileField {
        /// The field name as given.
        field: String,
    },
    /// `--rank` names a rank the run does not have.
    RankOutOfRange {
        /// The rank asked for.
        rank: u32,
        /// Ranks the run has.
        ranks: u32,
    },
    /// A layer shape that hpmoe's MoE builder refuses: every rule it breaks.
    Shape(ShapeError),
    /// A taskflow with more tile instances than node ids can number.
    Numbering(TooManyInstances),
    /// A routing's guard counts cannot be evaluated on a taskflow.
    Routing(ActivityError),
    /// A backward check was asked to run the forward pass.
    NotABackwardPass(Pass),
    /// A shared expert whose sizes do not tile: what is wrong, and the sizes.
    SharedExpert {
        /// What is wrong, e.g. `every size must be positive`.
        problem: &'static str,
        /// The shared expert's sizes, as text.
        sizes: String,
    },
    /// The taskflow lacks a part a step needs: a `family` or `tensor` called `name`.
    MissingPart {
        /// `family` or `tensor`.
        part: &'static str,
        /// The name looked for.
        name: String,
    },
    /// The routed layer's taskflow does not end with the family the variant replaces.
    UnexpectedLastFamily {
        /// The family the variant replaces.
        expected: &'static str,
        /// The taskflow's last family, `None` if it has none.
        found: Option<String>,
    },
    /// The variant's user op is already registered.
    DuplicateOp(DuplicateOp),
    /// A taskflow failed the checks; `sources` places its diagnostics in Rust code.
    Plan {
        /// The taskflow's name.
        taskflow: String,
        /// Every error the checks found.
        diagnostics: Diagnostics,
        /// The taskflow's source map, to print each diagnostic at its Rust code.
        sources: SourceMap,
    },
    /// The simulator could not run a taskflow's table.
    Simulate {
        /// The taskflow's name.
        taskflow: String,
        /// The simulator's error.
        error: SimError,
    },
    /// The backend cannot emit a taskflow's kernel.
    Emit {
        /// The taskflow's name.
        taskflow: String,
        /// Every emission error.
        errors: EmitErrors,
    },
    /// The host executor could not run a taskflow.
    Execute {
        /// The taskflow's name.
        taskflow: String,
        /// The executor's error.
        error: ExecError,
    },
    /// The CPU emulator could not run a taskflow's kernel.
    Emulate {
        /// The taskflow's name.
        taskflow: String,
        /// The emulator's error.
        error: EmulateError,
    },
    /// The reference implementation refused its shape or inputs.
    Reference(ReferenceError),
    /// A DSL source file has no `#[taskflow(.., ranks = 8)]` to compile at another EP.
    NoTaskflowAtEp8 {
        /// The file, as named in the messages.
        file: String,
    },
    /// A DSL source file asked for with INT8 dispatch includes none of the BF16 layout files
    /// that have an INT8 counterpart (`hpmoe_examples::dsl_check::INT8_LAYOUTS`).
    NoInt8Layout {
        /// The file, as named in the messages.
        file: String,
    },
    /// A DSL source file has no taskflow of the name asked for.
    NoTaskflowNamed {
        /// The file, as named in the messages.
        file: String,
        /// The taskflow's name.
        name: String,
    },
    /// The DSL front-end (`hpmoe_core::syntax`) refused a source file: each of its errors at
    /// its position.
    Frontend {
        /// The file, as named in the messages.
        file: String,
        /// Each error with where it starts (`path:line:column`).
        errors: Vec<(hpmoe_core::model::SourcePos, String)>,
    },
    /// A reference input is missing on a rank.
    MissingInput {
        /// The input tensor's name.
        name: String,
        /// The rank it is missing on.
        rank: u32,
    },
    /// `got` expected tensors were given for `ranks` ranks.
    ExpectedPerRank {
        /// The output tensor compared.
        output: String,
        /// Expected tensors given.
        got: usize,
        /// Ranks of the run (one expected tensor each).
        ranks: u32,
    },
    /// A run left no `output` tensor on `rank`.
    MissingOutput {
        /// The output tensor's name.
        output: String,
        /// The rank it is missing on.
        rank: u32,
    },
    /// A simulated rank ran no tile of a family the step measures (`dispatch`, `shared-expert`).
    NothingRan {
        /// The rank measured.
        rank: u32,
        /// The family measured (`dispatch`, `shared-expert`).
        what: &'static str,
    },
    /// A simulated run has no ranks.
    NoRanks,
    /// A file or folder could not be written: what was being done (`write`, `create`, `write
    /// the kernel to`), to which path, and the system's reason.
    Io {
        /// What was being done: `write`, `create`, `write the kernel to`.
        doing: &'static str,
        /// The file or folder.
        path: PathBuf,
        /// The operating system's error.
        reason: Arc<std::io::Error>,
    },
    /// The results could not be serialised as JSON.
    Json(Arc<serde_json::Error>),
}

impl ExampleError {
    /// `doing` (`write`, `create`, ...) `path` failed with `error`.
    pub fn io(doing: &'static str, path: impl Into<PathBuf>, error: std::io::Error) -> Self {
        ExampleError::Io { doing, path: path.into(), reason: Arc::new(error) }
    }

    /// Diagnostics of `tf`'s checks, placed by its source map.
    pub fn plan(tf: &hpmoe_core::model::Taskflow, diagnostics: Diagnostics) -> Self {
        ExampleError::Plan { taskflow: tf.name.clone(), diagnostics, sources: tf.sources.clone() }
    }
}

impl fmt::Display for ExampleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExampleError::UnknownOption { option, usage } => write!(f, "unknown option {option}; options: {usage}"),
            ExampleError::NotANumber { option, value } => write!(f, "{option} takes a number, got {value}"),
            ExampleError::NotAChoice { option, value, choices } => {
                write!(f, "{option} takes one of {}, got {value}", choices.join(", "))
            }
            ExampleError::Profile(e) => write!(f, "{e}"),
            ExampleError::UnknownProfileField { field } => write!(f, "no field {field}"),
            ExampleError::RankOutOfRange { rank, ranks } => write!(f, "--rank {rank} is not a rank of EP {ranks}"),
            ExampleError::Shape(e) => write!(f, "{e}"),
            ExampleError::Numbering(e) => write!(f, "{e}"),
            ExampleError::Routing(e) => write!(f, "{e}"),
            ExampleError::NotABackwardPass(pass) => {
                write!(f, "the backward checks run the backward or the training step, not the {}", pass.name())
            }
            ExampleError::Reference(e) => write!(f, "{e}"),
            ExampleError::NoTaskflowAtEp8 { file } => {
                write!(f, "{file} has no `#[taskflow(.., ranks = 8)]` to compile at another EP")
            }
            ExampleError::NoInt8Layout { file } => write!(
                f,
                "{file} includes none of the BF16 layout files of `examples/dsl/` that have an INT8-dispatch counterpart"
            ),
            ExampleError::NoTaskflowNamed { file, name } => write!(f, "{file} has no taskflow `{name}`"),
            ExampleError::Frontend { file, errors } => {
                write!(f, "the DSL front-end refused {file}:")?;
                errors.iter().try_for_each(|(at, message)| write!(f, "\n{at}: error: {message}"))
            }
            ExampleError::SharedExpert { problem, sizes } => write!(f, "invalid shared expert: {problem}: {sizes}"),
            ExampleError::MissingPart { part, name } => write!(f, "the taskflow has no {part} `{name}`"),
            ExampleError::UnexpectedLastFamily { expected, found } => {
                write!(f, "expected MoeShape's taskflow to end with `{expected}`, found {found:?}")
            }
            ExampleError::DuplicateOp(e) => write!(f, "{e}"),
            ExampleError::Plan { diagnostics, sources, .. } => f.write_str(&diagnostics.render(sources)),
            ExampleError::Simulate { error, .. } => write!(f, "{error}"),
            ExampleError::Emit { taskflow, errors } => write!(f, "{taskflow}: cannot emit the kernel: {errors}"),
            ExampleError::Execute { error, .. } => write!(f, "{error}"),
            ExampleError::Emulate { error, .. } => write!(f, "{error}"),
            ExampleError::MissingInput { name, rank } => write!(f, "input `{name}` missing for rank {rank}"),
            ExampleError::ExpectedPerRank { output, got, ranks } => {
                write!(f, "{got} expected `{output}` tensors for {ranks} ranks")
            }
            ExampleError::MissingOutput { output, rank } => write!(f, "the run has no `{output}` on rank {rank}"),
            ExampleError::NothingRan { rank, what } => write!(f, "rank {rank} ran no {what} tile"),
            ExampleError::NoRanks => f.write_str("the run has no ranks"),
            ExampleError::Io { doing, path, reason } => write!(f, "cannot {doing} {}: {reason}", path.display()),
            ExampleError::Json(reason) => write!(f, "cannot write the results as JSON: {reason}"),
        }
    }
}

/// The message includes the wrapped error's, so [`source`](std::error::Error::source) is `None`
/// (the Rust API guidelines' rule: one or the other, so a printer walking the chain shows each
/// message once); the wrapped error is the variant's field, typed.
impl std::error::Error for ExampleError {}

impl From<ProfileError> for ExampleError {
    fn from(e: ProfileError) -> Self {
        ExampleError::Profile(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_what_failed() {
        let e = ExampleError::NotANumber { option: "--ep".into(), value: "x".into() };
        assert_eq!(e.to_string(), "--ep takes a number, got x");
        let e = ExampleError::io("write", "/tmp/x/out.json", std::io::Error::other("disk full"));
        assert_eq!(e.to_string(), "cannot write /tmp/x/out.json: disk full");
        let e = ExampleError::NothingRan { rank: 3, what: "dispatch" };
        assert_eq!(e.to_string(), "rank 3 ran no dispatch tile");
    }
}
