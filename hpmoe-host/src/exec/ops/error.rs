//! Why an op's reference body refuses its arguments or fails on them, as data: the
//! arguments involved (their descriptions), the sizes and indices, and the relation that
//! does not hold. [`RefOp::check`](super::RefOp::check) and [`RefOp::run`](super::RefOp::run)
//! return an [`OpError`]; so do [`Arg::store`](super::Arg::store) and the registry.

use super::ArgDesc;
use hpmoe_core::dsl::ProgramError;
use hpmoe_core::model::DType;
use std::fmt;
use std::sync::Arc;

/// Why an op body refuses or fails, or why a body cannot be registered.
#[derive(Clone, Debug)]
pub enum OpError {
    /// The op takes another number of arguments.
    Arity {
        /// Arguments the op takes.
        expected: usize,
        /// Arguments it was given.
        got: usize,
    },
    /// An argument's element type is not one the op takes.
    Type {
        /// The argument.
        arg: ArgDesc,
        /// The type it must have; `None`: a floating-point type (bf16, f16 or f32).
        expected: Option<DType>,
    },
    /// A copy's source and destination (in that order) differ in type.
    DifferentTypes(Box<[ArgDesc; 2]>),
    /// The arguments' shapes do not fit together.
    Shapes(Box<ShapeMismatch>),
    /// The body stored into an argument the op's signature only reads.
    ReadOnly {
        /// The argument.
        arg: ArgDesc,
    },
    /// The body stored another number of elements than the argument's box holds.
    StoreLength {
        /// The argument.
        arg: ArgDesc,
        /// Elements stored.
        stored: usize,
    },
    /// A gathering op's index points past what it indexes.
    IndexOutOfRange(Box<OutOfRange>),
    /// A `#[taskflow]` program's own op (`#[op] fn …`) failed.
    UserOp {
        /// The op.
        op: String,
        /// What went wrong.
        problem: Box<UserOpProblem>,
    },
    /// [`OpImpls::register`](super::OpImpls::register): the op already has a body.
    AlreadyRegistered {
        /// The op.
        op: String,
    },
    /// Another body's own error (an op body written outside hpmoe-host; see [`OpError::other`]).
    Other(Arc<dyn std::error::Error + Send + Sync>),
}

impl OpError {
    /// An op body's own error, for bodies whose failures none of the kinds above describe.
    pub fn other(error: impl std::error::Error + Send + Sync + 'static) -> Self {
        OpError::Other(Arc::new(error))
    }
}

/// A gathering op's index past what it indexes ([`OpError::IndexOutOfRange`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutOfRange {
    /// Which index.
    pub at: IndexAt,
    /// Its value.
    pub value: i32,
    /// The argument it indexes.
    pub of: ArgDesc,
    /// The rows (or, for [`IndexAt::Choice`], the choices) that argument has.
    pub len: usize,
}

/// Equal when the kind and data are; [`OpError::Other`] by its message.
impl PartialEq for OpError {
    fn eq(&self, other: &Self) -> bool {
        use OpError as E;
        match (self, other) {
            (E::Arity { expected: a, got: b }, E::Arity { expected: c, got: d }) => (a, b) == (c, d),
            (E::Type { arg: a, expected: b }, E::Type { arg: c, expected: d }) => (a, b) == (c, d),
            (E::DifferentTypes(a), E::DifferentTypes(b)) => a == b,
            (E::Shapes(a), E::Shapes(b)) => a == b,
            (E::ReadOnly { arg: a }, E::ReadOnly { arg: b }) => a == b,
            (E::StoreLength { arg: a, stored: b }, E::StoreLength { arg: c, stored: d }) => (a, b) == (c, d),
            (E::IndexOutOfRange(a), E::IndexOutOfRange(b)) => a == b,
            (E::UserOp { op: a, problem: b }, E::UserOp { op: c, problem: d }) => (a, b) == (c, d),
            (E::AlreadyRegistered { op: a }, E::AlreadyRegistered { op: b }) => a == b,
            (E::Other(a), E::Other(b)) => a.to_string() == b.to_string(),
            _ => false,
        }
    }
}

impl Eq for OpError {}

/// Argument shapes that do not fit together (checked before the run, by
/// [`RefOp::check`](super::RefOp::check)). Matrix-shaped ops read a box as `rows × cols`
/// ([`ArgDesc::rows`], [`ArgDesc::cols`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ShapeMismatch {
    /// Two arguments must hold as many elements.
    SameElements(ArgDesc, ArgDesc),
    /// Two arguments must have the same rows and columns.
    SameMatrix(ArgDesc, ArgDesc),
    /// `wide` must have the rows of `narrow` and twice its columns (a gate half and an up half).
    TwiceColumns {
        /// The argument with both halves.
        wide: ArgDesc,
        /// The argument with one.
        narrow: ArgDesc,
    },
    /// `many` must have `k ≥ 1` times the rows of `few`, and its columns.
    KTimesRows {
        /// The argument with `k` rows per row of `few`.
        many: ArgDesc,
        /// The other.
        few: ArgDesc,
    },
    /// `arg` needs one `item` per row (or element) of `of`: `count` of them.
    OnePer {
        /// The argument with the wrong size.
        arg: ArgDesc,
        /// What it holds one of per unit of `of`.
        item: Item,
        /// Per row or per element.
        per: Per,
        /// The argument it is counted against.
        of: ArgDesc,
        /// How many rows or elements `of` has.
        count: usize,
    },
    /// The three arguments of a matmul do not multiply.
    NoProduct {
        /// The product form, for the transposed matmuls (`a [M, K] · (b [N, K])ᵀ = c [M, N]`).
        form: Option<&'static str>,
        /// `a`, `b` and `c` as `rows × cols`.
        dims: [(usize, usize); 3],
    },
    /// A gather table has no rows.
    EmptyTable {
        /// The table.
        table: ArgDesc,
    },
    /// A gather table's rows (every dimension but the first) are not as long as `other`'s rows.
    TableRows {
        /// The table.
        table: ArgDesc,
        /// Elements of one of its rows.
        row: usize,
        /// The argument whose rows they must match.
        other: ArgDesc,
    },
    /// A slot layout's rows are not a whole number of slots: `x` must have `C ≥ 1` rows per
    /// element of `counts`.
    Slots {
        /// The rows in slots.
        x: ArgDesc,
        /// One count per slot.
        counts: ArgDesc,
    },
}

/// What an argument holds one of, per row or element of another ([`ShapeMismatch::OnePer`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Item {
    /// A scale.
    Scale,
    /// A weight.
    Weight,
    /// An element.
    Element,
    /// A row.
    Row,
    /// A row of weights.
    RowOfWeights,
    /// An index.
    Index,
    /// A row of indices.
    RowOfIndices,
}

impl Item {
    fn name(self) -> &'static str {
        match self {
            Item::Scale => "scale",
            Item::Weight => "weight",
            Item::Element => "element",
            Item::Row => "row",
            Item::RowOfWeights => "row of weights",
            Item::Index => "index",
            Item::RowOfIndices => "row of indices",
        }
    }
}

/// Per row or per element ([`ShapeMismatch::OnePer`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Per {
    /// Per row.
    Row,
    /// Per element.
    Element,
}

/// Which index of a gathering op is out of range ([`OpError::IndexOutOfRange`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndexAt {
    /// `index[row, col]`, a row of the table.
    Element {
        /// Row of `index`.
        row: usize,
        /// Column of `index`.
        col: usize,
    },
    /// `index[i]`, a choice (a row-major element of `[T, k]` weights).
    Choice(usize),
    /// The token of `index[i]` (`index[i] / k`), a row of the table.
    TokenOf(usize),
}

/// What went wrong in a `#[taskflow]` program's own op ([`OpError::UserOp`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UserOpProblem {
    /// It takes another number of regions.
    Regions {
        /// Regions its signature has.
        expected: usize,
        /// Regions it was given.
        got: usize,
    },
    /// A region's values do not fit its shape.
    ValuesDoNotFit,
    /// The user's body failed.
    Body(ProgramError),
    /// The body changed the size of an argument.
    ChangedSize {
        /// The parameter.
        param: String,
    },
}

impl fmt::Display for ShapeMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ShapeMismatch::SameElements(a, b) => {
                write!(f, "{} and {} have different element counts", a.describe(), b.describe())
            }
            ShapeMismatch::SameMatrix(a, b) => write!(
                f,
                "{} ({}×{}) and {} ({}×{}) must have the same rows and columns",
                a.describe(),
                a.rows(),
                a.cols(),
                b.describe(),
                b.rows(),
                b.cols()
            ),
            ShapeMismatch::TwiceColumns { wide, narrow } => {
                write!(f, "{} must have the rows of {} and twice its columns", wide.describe(), narrow.describe())
            }
            ShapeMismatch::KTimesRows { many, few } => write!(
                f,
                "{} must have k times the rows of {} (k ≥ 1) and its columns",
                many.describe(),
                few.describe()
            ),
            ShapeMismatch::OnePer { arg, item, per, of, count } => {
                let (unit, units) = match per {
                    Per::Row => ("row", if *count == 1 { "row" } else { "rows" }),
                    Per::Element => ("element", if *count == 1 { "element" } else { "elements" }),
                };
                write!(
                    f,
                    "{} needs one {} per {unit} of {} ({count} {units})",
                    arg.describe(),
                    item.name(),
                    of.describe()
                )
            }
            ShapeMismatch::NoProduct { form, dims: [(ar, ac), (br, bc), (cr, cc)] } => {
                f.write_str("shapes do not multiply")?;
                if let Some(form) = form {
                    write!(f, " as {form}")?;
                }
                write!(f, ": a {ar}×{ac}, b {br}×{bc}, c {cr}×{cc}")
            }
            ShapeMismatch::EmptyTable { table } => write!(f, "{} has no rows to gather", table.describe()),
            ShapeMismatch::TableRows { table, row, other } => write!(
                f,
                "the rows of {} ({row} elements) must be as long as the rows of {}",
                table.describe(),
                other.describe()
            ),
            ShapeMismatch::Slots { x, counts } => write!(
                f,
                "{} must be slots of C ≥ 1 rows each, one slot per element of {}",
                x.describe(),
                counts.describe()
            ),
        }
    }
}

impl fmt::Display for IndexAt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IndexAt::Element { row, col } => write!(f, "index[{row}, {col}]"),
            IndexAt::Choice(i) => write!(f, "index[{i}]"),
            IndexAt::TokenOf(i) => write!(f, "the token of index[{i}]"),
        }
    }
}

impl fmt::Display for UserOpProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UserOpProblem::Regions { expected, got } => write!(f, "takes {expected} regions, got {got}"),
            UserOpProblem::ValuesDoNotFit => f.write_str("a region's values do not fit its shape"),
            UserOpProblem::Body(e) => write!(f, "{e}"),
            UserOpProblem::ChangedSize { param } => write!(f, "changed the size of its argument `{param}`"),
        }
    }
}

impl fmt::Display for OpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OpError::Arity { expected, got } => write!(f, "takes {expected} arguments, got {got}"),
            OpError::Type { arg, expected: None } => write!(f, "{} must be bf16, f16 or f32", arg.describe()),
            OpError::Type { arg, expected: Some(t) } => write!(f, "{} must be {}", arg.describe(), t.name()),
            OpError::DifferentTypes(pair) => {
                write!(f, "{} and {} differ in type; use `cast`", pair[0].describe(), pair[1].describe())
            }
            OpError::Shapes(m) => write!(f, "{m}"),
            OpError::ReadOnly { arg } => write!(f, "wrote to {}, which the op's signature only reads", arg.describe()),
            OpError::StoreLength { arg, stored } => write!(f, "stored {stored} elements into {}", arg.describe()),
            OpError::IndexOutOfRange(e) => {
                let OutOfRange { at, value, of, len } = &**e;
                let what = if matches!(at, IndexAt::Choice(_)) { "choices" } else { "rows" };
                write!(f, "{at} = {value} is out of range: {} has {len} {what}", of.describe())
            }
            OpError::UserOp { op, problem }
                if matches!(**problem, UserOpProblem::Regions { .. } | UserOpProblem::ChangedSize { .. }) =>
            {
                write!(f, "`{op}` {problem}")
            }
            OpError::UserOp { op, problem } => write!(f, "`{op}`: {problem}"),
            OpError::AlreadyRegistered { op } => write!(f, "op `{op}` already has a reference implementation"),
            OpError::Other(e) => write!(f, "{e}"),
        }
    }
}

/// The message includes a wrapped error's ([`UserOpProblem::Body`], [`OpError::Other`]), so
/// [`source`](std::error::Error::source) is `None`; the wrapped error is the variant's field.
impl std::error::Error for OpError {}

impl From<ShapeMismatch> for OpError {
    fn from(m: ShapeMismatch) -> Self {
        OpError::Shapes(Box::new(m))
    }
}
