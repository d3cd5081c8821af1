//! Why a reference function (the MoE layer's forward and backward on the host,
//! [`super::moe_reference`], [`super::moe_backward_reference`] and their input builders) refused
//! its shape, routing or inputs, as data.

use crate::moe::ShapeError;
use std::fmt;

/// Why a reference function refused its arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReferenceError {
    /// The shape breaks rules of the layout.
    Shape(ShapeError),
    /// Balanced routing: `wgrad_rows` does not divide the rows per expert.
    WgradRows {
        /// The shape's `wgrad_rows`.
        wgrad_rows: u64,
        /// Rows per expert.
        rows_per_expert: u64,
    },
    /// A size does not fit the host's `usize`.
    SizeOverflow(u64),
    /// The function needs another routing or dispatch than the shape's (what it needs).
    Unsupported(&'static str),
    /// The routing lists another number of ranks than the shape has.
    RoutingRanks {
        /// Ranks of the routing.
        routing: usize,
        /// Ranks of the shape.
        shape: usize,
    },
    /// A rank's routing has another number of choices or counts than the shape.
    RoutingLengths {
        /// The rank.
        rank: usize,
        /// Choices of the routing.
        choices: usize,
        /// Counts of the routing.
        counts: usize,
        /// Choices of the shape (`tokens_per_rank * top_k`).
        shape_choices: u64,
        /// Counts of the shape (experts).
        shape_counts: u64,
    },
    /// A send count is negative or above the capacity.
    SendCount {
        /// The rank.
        rank: usize,
        /// The count, when one is named.
        count: Option<i64>,
        /// The capacity (rows of an expert's slot).
        capacity: u64,
    },
    /// A choice's slot is not a row it may occupy.
    Slot {
        /// The rank.
        rank: usize,
        /// The choice (index into `slot_of`).
        choice: usize,
        /// Whether the message names it as `slot_of[choice]` (the input) or `choice choice` (a
        /// routing).
        in_input: bool,
        /// What is wrong with it.
        problem: SlotProblem,
    },
    /// An input is missing on a rank.
    MissingInput {
        /// The input.
        name: String,
        /// The rank.
        rank: usize,
    },
    /// An input has another number of elements than the shape needs.
    InputLength {
        /// The input.
        name: String,
        /// The rank.
        rank: usize,
        /// Its elements.
        elements: usize,
        /// Elements the shape needs.
        needed: usize,
    },
    /// A rank's `slot_of` or `xs` does not fit the shape.
    SlotsDoNotFit {
        /// The rank.
        rank: usize,
    },
    /// A sent slot below its expert's count carries no choice: `slot_of` has a gap.
    SlotGap {
        /// The sending rank.
        rank: usize,
        /// The slot.
        slot: usize,
    },
}

/// What is wrong with a natural-routing slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlotProblem {
    /// Negative but not `-1` (the mark of a dropped choice).
    Negative(i32),
    /// Past the rows of `xs`.
    PastRows {
        /// The slot.
        slot: u64,
        /// Rows of `xs`.
        rows: u64,
    },
    /// Past its expert's send count: a padding row.
    Padding {
        /// The slot.
        slot: u64,
        /// Its row in the expert's slot.
        row: u64,
        /// The expert.
        expert: u64,
        /// The expert's send count.
        count: i32,
    },
    /// Out of range, past its expert's count, or already taken by another choice.
    NotFree(usize),
}

impl fmt::Display for SlotProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SlotProblem::Negative(slot) => write!(f, "slot {slot}: dropped choices are -1"),
            SlotProblem::PastRows { slot, rows } => write!(f, "slot {slot} is past the {rows} rows of xs"),
            SlotProblem::Padding { slot, row, expert, count } => {
                write!(f, "slot {slot} is row {row} of expert {expert}'s slot, past its count {count}: padding")
            }
            SlotProblem::NotFree(slot) => write!(f, "slot {slot} is not a free sent row"),
        }
    }
}

impl fmt::Display for ReferenceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReferenceError::Shape(e) => write!(f, "{e}"),
            ReferenceError::WgradRows { wgrad_rows, rows_per_expert } => {
                write!(f, "wgrad_rows {wgrad_rows} does not divide the {rows_per_expert} rows per expert")
            }
            ReferenceError::SizeOverflow(v) => write!(f, "size {v} does not fit usize"),
            ReferenceError::Unsupported(what) => f.write_str(what),
            ReferenceError::RoutingRanks { routing, shape } => {
                write!(f, "the routing is for {routing} ranks, the shape has {shape}")
            }
            ReferenceError::RoutingLengths { rank, choices, counts, shape_choices, shape_counts } => write!(
                f,
                "rank {rank}: the routing has {choices} choices and {counts} counts, the shape {shape_choices} and {shape_counts}"
            ),
            ReferenceError::SendCount { rank, count: Some(c), capacity } => {
                write!(f, "rank {rank}: a send count of {c} is outside 0..={capacity}")
            }
            ReferenceError::SendCount { rank, count: None, capacity } => {
                write!(f, "rank {rank}: a send count is outside 0..={capacity}")
            }
            ReferenceError::Slot { rank, choice, in_input: true, problem: SlotProblem::NotFree(slot) } => {
                write!(f, "rank {rank}: slot_of[{choice}] = {slot} is not a free sent row")
            }
            ReferenceError::Slot { rank, choice, in_input: true, problem } => {
                write!(f, "rank {rank}, slot_of[{choice}]: {problem}")
            }
            ReferenceError::Slot { rank, choice, in_input: false, problem } => {
                write!(f, "rank {rank}, choice {choice}: {problem}")
            }
            ReferenceError::MissingInput { name, rank } => write!(f, "input `{name}` missing for rank {rank}"),
            ReferenceError::InputLength { name, rank, elements, needed } => {
                write!(f, "input `{name}` on rank {rank} has {elements} elements, the shape needs {needed}")
            }
            ReferenceError::SlotsDoNotFit { rank } => {
                write!(f, "rank {rank}: `slot_of` or `xs` does not fit the shape")
            }
            ReferenceError::SlotGap { rank, slot } => {
                write!(f, "rank {rank}: sent slot {slot} carries no choice (slot_of has a gap)")
            }
        }
    }
}

/// The message includes the wrapped error's, so [`source`](std::error::Error::source) is `None`
/// (the Rust API guidelines' rule: one or the other, so a printer walking the chain shows each
/// message once); the wrapped error is the variant's field, typed.
impl std::error::Error for ReferenceError {}

impl From<ShapeError> for ReferenceError {
    fn from(e: ShapeError) -> Self {
        ReferenceError::Shape(e)
    }
}
