//! Tile families: a named grid of tile instances on one core kind, each running the same
//! short list of ops on regions that depend on its grid coordinates.

use super::{Affine, CoreKind, Loc, OpSpec, Param, Region, WorkModel};
use serde::{Deserialize, Serialize};
use smallvec::SmallVec;

/// One named index range `name in 0..extent`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GridDim {
    /// The index's name, as region expressions and messages refer to it.
    pub name: String,
    /// Number of values, `0..extent` (> 0).
    pub extent: u64,
    /// Where it was declared.
    pub loc: Loc,
}

/// A call of a registered op on region arguments.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpCall {
    /// The op's name in the taskflow's [`OpRegistry`](super::OpRegistry).
    pub op: String,
    /// One region per parameter of the op, in the op's parameter order.
    pub args: SmallVec<[Region; 4]>,
    /// Where the call was written.
    pub loc: Loc,
}

/// One coordinate of an `after` entry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum IndexSel {
    /// The instance whose coordinate equals the expression (in this family's indices).
    At(Affine),
    /// The instances whose coordinate lies in `start .. end` (half-open; in this family's
    /// indices).
    Range {
        /// First coordinate selected.
        start: Affine,
        /// One past the last coordinate selected.
        end: Affine,
    },
    /// Every value of that coordinate.
    All,
}

impl IndexSel {
    /// The coordinates it selects, as a half-open range `lo .. hi`, for the instance at
    /// `coords` on `rank`, along a target dimension of `extent`; `None` when an expression
    /// overflows. The range may reach outside `0 .. extent`: what that means is the caller's
    /// (see [`After`]).
    pub fn bounds(&self, coords: &[u64], rank: u64, extent: u64) -> Option<(i64, i64)> {
        match self {
            IndexSel::All => Some((0, i64::try_from(extent).ok()?)),
            IndexSel::At(e) => {
                let v = e.eval(coords, rank).ok()?;
                Some((v, v.checked_add(1)?))
            }
            IndexSel::Range { start, end } => Some((start.eval(coords, rank).ok()?, end.eval(coords, rank).ok()?)),
        }
    }
}

/// An explicit dependency: every instance of this family runs after the named instances of
/// `family`, on the same rank.
///
/// An entry naming the family itself (`after(step(s - 1))` in `step`) chains its instances:
/// where the selected instance lies outside the grid (`s = 0`), that instance simply has no
/// such dependency, and a range is cut to the grid. An entry naming another family must stay
/// inside that family's grid (anything else is an error), and no instance may wait for itself.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct After {
    /// The family waited for (possibly this family itself: a chain).
    pub family: String,
    /// One selector per grid dimension of `family`.
    pub indices: SmallVec<[IndexSel; 4]>,
    /// Where the entry was written.
    pub loc: Loc,
}

/// A run-time condition on a tile's work, for buffers filled to a count known only at run
/// time (capacity padding): the instance runs its body only when the `i32` element `count`
/// holds a value greater than `above` (evaluated for the instance). Otherwise it does no
/// work, but it still waits for its inputs and signals its waiters, so the static schedule,
/// every dependency and every counter target stay as they are.
///
/// A tile covering rows `b·B .. b·B + B` of a buffer holding `count` valid rows guards
/// itself with `above = b·B`: it runs when at least one of its rows is valid.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Guard {
    /// One `i32` element on the tile's own rank, read before the body runs.
    pub count: Region,
    /// The bound, evaluated for the instance: the body runs when `count > above`.
    pub above: Affine,
    /// Where the guard was written.
    pub loc: Loc,
}

impl Guard {
    /// The name the guard goes by in messages and in the DSL.
    pub const OP: &'static str = "run_if_above";

    /// Whether an instance whose count reads `count` and whose bound evaluates to `above`
    /// runs its body: the one statement of the guard's meaning, which the host executor, the
    /// simulator's [`Activity`](crate::cost::Activity) and `#[taskflow]` host tiles share (the
    /// AscendC backend writes the same comparison in C++).
    pub fn runs(count: i64, above: i64) -> bool {
        count > above
    }

    /// The guard's read seen as an op call with one read parameter, `count`, so expansion
    /// and the checks treat it like any other access.
    pub fn spec() -> &'static OpSpec {
        static SPEC: std::sync::LazyLock<OpSpec> = std::sync::LazyLock::new(|| {
            OpSpec::new(
                Guard::OP,
                CoreKind::Aiv,
                vec![Param::read("count")],
                WorkModel::Vector { flops_per_element: 0 },
                "runs the tile's body only when the i32 element `count` is greater than `above`",
            )
        });
        &SPEC
    }
}

/// A `#[tile(...)]` function: a grid of instances, all running `body`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TileFamily {
    /// The family's name, unique among the taskflow's families.
    pub name: String,
    /// The core kind every instance runs on.
    pub core: CoreKind,
    /// The grid dimensions, outermost first (at most [`crate::limits::MAX_GRID_DIMS`]).
    pub grid: SmallVec<[GridDim; 4]>,
    /// The op calls every instance runs, in order.
    pub body: Vec<OpCall>,
    /// Explicit dependencies beyond the data dependencies expansion derives.
    pub after: Vec<After>,
    /// Makes the body conditional on a run-time count (see [`Guard`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guard: Option<Guard>,
    /// Where the family was declared.
    pub loc: Loc,
}

impl TileFamily {
    /// Number of instances, `None` if it overflows `u64`.
    pub fn instances(&self) -> Option<u64> {
        self.grid.iter().try_fold(1u64, |acc, d| acc.checked_mul(d.extent))
    }

    /// The grid indices' names, in order.
    pub fn index_names(&self) -> Vec<String> {
        self.grid.iter().map(|d| d.name.clone()).collect()
    }

    /// `name(i, j - 1)`: an `after` entry on this family that runs each instance after the one
    /// before it along grid dimension `k` (for helps). `name` alone without a grid.
    pub fn chain_entry(&self, k: usize) -> String {
        if self.grid.is_empty() {
            return self.name.clone();
        }
        let parts: Vec<String> = self
            .grid
            .iter()
            .enumerate()
            .map(|(j, d)| if j == k { format!("{} - 1", d.name) } else { d.name.clone() })
            .collect();
        format!("{}({})", self.name, parts.join(", "))
    }

    /// `name(i=1, j=2)` for messages.
    pub fn instance_name(&self, coords: &[u64]) -> String {
        let parts: Vec<String> = self.grid.iter().zip(coords).map(|(d, c)| format!("{}={c}", d.name)).collect();
        format!("{}({})", self.name, parts.join(", "))
    }
}
