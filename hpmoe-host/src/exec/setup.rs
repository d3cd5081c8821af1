//! Why a run could not start ([`super::ExecError::Setup`]), as data: the taskflow's
//! diagnostics, the ops without a body or rejecting their arguments (all of them), what
//! differs between a table and the taskflow, a flag plan that does not fit the table, or the
//! inputs and memory.

use super::ops::OpError;
use hpmoe_core::Diagnostics;
use hpmoe_core::dsl::ProgramError;
use hpmoe_core::model::{CoreKind, DType, SourceMap};
use std::fmt;

/// Why a run could not start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SetupError {
    /// The taskflow fails its checks: every error, with the source map that places them.
    Checks {
        /// The taskflow's name.
        taskflow: String,
        /// The checks' errors.
        diagnostics: Diagnostics,
        /// The taskflow's source map.
        sources: SourceMap,
    },
    /// The instance DAG has a cycle.
    Cycle,
    /// Ops without a reference body, or whose body rejects its arguments: all of them.
    Ops(Vec<OpProblem>),
    /// A `#[taskflow]` program's IR, table or flag plan does not decode.
    Program(ProgramError),
    /// The schedule table was built for another taskflow.
    Table(Box<TableMismatch>),
    /// The flag plan does not fit the table.
    Flags(FlagPlanMismatch),
    /// The inputs or the memory for the tensors.
    Memory(MemoryError),
}

impl fmt::Display for SetupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SetupError::Checks { taskflow, diagnostics, sources } => {
                write!(f, "taskflow `{taskflow}` does not pass the checks:\n{}", diagnostics.render(sources))
            }
            SetupError::Cycle => f.write_str("the instance DAG has a cycle"),
            SetupError::Ops(problems) => {
                for (i, p) in problems.iter().enumerate() {
                    if i > 0 {
                        f.write_str("\n")?;
                    }
                    write!(f, "{p}")?;
                }
                Ok(())
            }
            SetupError::Program(e) => write!(f, "{e}"),
            SetupError::Table(e) => write!(f, "{e}"),
            SetupError::Flags(e) => write!(f, "{e}"),
            SetupError::Memory(e) => write!(f, "{e}"),
        }
    }
}

/// The message includes the wrapped error's, so [`source`](std::error::Error::source) is `None`
/// (the Rust API guidelines' rule: one or the other, so a printer walking the chain shows each
/// message once); the wrapped error is the variant's field, typed.
impl std::error::Error for SetupError {}

/// An op call the executor cannot run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OpProblem {
    /// No reference body is registered for the op.
    NoBody {
        /// The op.
        op: String,
        /// The tile family calling it.
        tile: String,
    },
    /// The body's check refuses the call's arguments.
    Rejected {
        /// The op.
        op: String,
        /// The tile family calling it.
        tile: String,
        /// The arguments, described (`src bf16[8, 32]`).
        args: Vec<String>,
        /// The body's reason.
        reason: OpError,
    },
}

impl fmt::Display for OpProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OpProblem::NoBody { op, tile } => write!(
                f,
                "op `{op}` (called in tile `{tile}`) has no reference implementation; register one in OpImpls"
            ),
            OpProblem::Rejected { op, tile, args, reason } => {
                write!(f, "op `{op}` in tile `{tile}` rejects its arguments ({}): {reason}", args.join(", "))
            }
        }
    }
}

/// A tile family as a table or a taskflow has it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FamilyShape {
    /// Its name.
    pub name: String,
    /// Its core kind (`None`: a table's unknown kind code).
    pub kind: Option<CoreKind>,
    /// Its grid extents.
    pub grid: Vec<u32>,
}

impl fmt::Display for FamilyShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` {:?} {:?}", self.name, self.kind, self.grid)
    }
}

/// What differs between a schedule table and the taskflow it is run for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TableDifference {
    /// The machine: ranks, AICs per rank, AIVs per AIC.
    Machine {
        /// The table's.
        table: [u32; 3],
        /// The taskflow's.
        taskflow: [u32; 3],
    },
    /// The number of tile families.
    FamilyCount {
        /// The table's.
        table: usize,
        /// The taskflow's.
        taskflow: usize,
    },
    /// One family's name, core kind or grid.
    Family {
        /// The family's index.
        index: usize,
        /// The table's.
        table: FamilyShape,
        /// The taskflow's.
        taskflow: FamilyShape,
    },
}

/// A schedule table built for another taskflow: the first difference found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableMismatch {
    /// The table's name.
    pub table: String,
    /// The taskflow's name.
    pub taskflow: String,
    /// What differs.
    pub difference: TableDifference,
}

impl fmt::Display for TableMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "schedule table `{}` does not belong to taskflow `{}`: ", self.table, self.taskflow)?;
        let triple = |[a, b, c]: [u32; 3]| format!("({a}, {b}, {c})");
        match &self.difference {
            TableDifference::Machine { table, taskflow } => write!(
                f,
                "the machine (ranks, AIC per rank, AIV per AIC) is {} in the table, {} in the taskflow",
                triple(*table),
                triple(*taskflow)
            ),
            TableDifference::FamilyCount { table, taskflow } => {
                write!(f, "the number of tile families is {table} in the table, {taskflow} in the taskflow")
            }
            TableDifference::Family { index, table, taskflow } => {
                write!(f, "family {index} is {table} in the table, {taskflow} in the taskflow")
            }
        }
    }
}

impl std::error::Error for TableMismatch {}

/// A flag plan that does not fit the table it is run with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FlagPlanMismatch {
    /// The machine does not pair two AIVs with each AIC.
    NotTwoAivsPerAic,
    /// The plan covers another number of nodes.
    Nodes {
        /// Nodes of the plan.
        plan: usize,
        /// Nodes of the table.
        table: usize,
    },
}

impl fmt::Display for FlagPlanMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FlagPlanMismatch::NotTwoAivsPerAic => f.write_str("a flag plan needs two AIVs per AIC"),
            FlagPlanMismatch::Nodes { plan, table } => {
                write!(f, "the flag plan covers {plan} nodes, the table {table}")
            }
        }
    }
}

impl std::error::Error for FlagPlanMismatch {}

/// Why the tensors could not be allocated or filled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MemoryError {
    /// All ranks' tensors need more host memory than the limit.
    OverLimit {
        /// Bytes needed (`u64::MAX` if the sum overflows).
        bytes: u64,
        /// The limit (`RunOptions::max_host_bytes`).
        limit: u64,
    },
    /// A tensor has more elements than the host can index.
    TensorTooLarge {
        /// The tensor.
        tensor: String,
    },
    /// An input has no data for a rank.
    MissingInput {
        /// The input.
        input: String,
        /// The rank.
        rank: u32,
    },
    /// An input's data has another element type or shape than the taskflow declares.
    InputShape {
        /// The input.
        input: String,
        /// The rank.
        rank: u32,
        /// The data's element type and shape.
        given: (DType, Vec<u64>),
        /// The declared element type and shape.
        declared: (DType, Vec<u64>),
    },
}

impl fmt::Display for MemoryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MemoryError::OverLimit { bytes, limit } => write!(
                f,
                "the tensors of all ranks need {bytes} bytes of host memory, more than the limit of {limit} \
                 (RunOptions::max_host_bytes)"
            ),
            MemoryError::TensorTooLarge { tensor } => write!(f, "tensor `{tensor}` is too large"),
            MemoryError::MissingInput { input, rank } => write!(f, "input `{input}` has no data for rank {rank}"),
            MemoryError::InputShape { input, rank, given, declared } => write!(
                f,
                "input `{input}` on rank {rank} is {} {:?}, but the taskflow declares {} {:?}",
                given.0.name(),
                given.1,
                declared.0.name(),
                declared.1
            ),
        }
    }
}

impl std::error::Error for MemoryError {}
