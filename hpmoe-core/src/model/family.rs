//! Tile families: a named grid of tile instances on one core kind, each running the same
//! short list of ops on regions that depend on its grid coordinates.

use super::{Affine, CoreKind, Loc, Region};
use serde::{Deserialize, Serialize};
use smallvec::SmallVec;

/// One named index range `name in 0..extent`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GridDim {
    pub name: String,
    pub extent: u64,
    pub loc: Loc,
}

/// A call of a registered op on region arguments.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpCall {
    pub op: String,
    pub args: SmallVec<[Region; 4]>,
    pub loc: Loc,
}

/// One coordinate of an `after` entry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum IndexSel {
    /// The instance whose coordinate equals the expression (in this family's indices).
    At(Affine),
    /// Every value of that coordinate.
    All,
}

/// An explicit dependency: every instance of this family runs after the named instances of
/// `family`, on the same rank.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct After {
    pub family: String,
    /// One selector per grid dimension of `family`.
    pub indices: SmallVec<[IndexSel; 4]>,
    pub loc: Loc,
}

/// A `#[tile(...)]` function: a grid of instances, all running `body`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TileFamily {
    pub name: String,
    pub core: CoreKind,
    pub grid: SmallVec<[GridDim; 4]>,
    pub body: Vec<OpCall>,
    pub after: Vec<After>,
    pub loc: Loc,
}

impl TileFamily {
    /// Number of instances, `None` if it overflows `u64`.
    pub fn instances(&self) -> Option<u64> {
        self.grid.iter().try_fold(1u64, |acc, d| acc.checked_mul(d.extent))
    }

    pub fn index_names(&self) -> Vec<String> {
        self.grid.iter().map(|d| d.name.clone()).collect()
    }

    /// `name(i=1, j=2)` for messages.
    pub fn instance_name(&self, coords: &[u64]) -> String {
        let parts: Vec<String> = self.grid.iter().zip(coords).map(|(d, c)| format!("{}={c}", d.name)).collect();
        format!("{}({})", self.name, parts.join(", "))
    }
}
