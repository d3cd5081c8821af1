//! Regions: rectangular slices of a tensor whose bounds are affine in the grid indices.

use super::{Affine, Loc};
use serde::{Deserialize, Serialize};
use smallvec::SmallVec;

/// One dimension of a region: `start .. start + len`, with a constant extent.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct DimSlice {
    /// First index, affine in the grid indices and the rank.
    pub start: Affine,
    /// Number of indices (a compile-time constant, > 0).
    pub len: u64,
}

/// Which rank's copy of the tensor a region addresses.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum RankSel {
    /// The executing rank's own copy.
    #[default]
    Local,
    /// The copy on the rank the expression evaluates to (only a `put` destination may be remote).
    Remote(Affine),
}

/// A rectangular slice of a tensor.
///
/// `dims` gives the leading dimensions; dimensions past `dims.len()` are taken whole, so
/// `w13.at(e)` is `[e..e+1, all, all]`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Region {
    /// The tensor's name.
    pub tensor: String,
    /// Whose copy of the tensor: the executing rank's, or another's.
    pub rank: RankSel,
    /// The leading dimensions' slices (see above); the rest are taken whole.
    pub dims: SmallVec<[DimSlice; 4]>,
    /// Where the region was written.
    pub loc: Loc,
}

impl Region {
    /// The whole tensor on the executing rank.
    pub fn whole(tensor: impl Into<String>) -> Self {
        Region { tensor: tensor.into(), rank: RankSel::Local, dims: SmallVec::new(), loc: Loc::NONE }
    }

    /// Narrows the next dimension to the single index `i` (like `tensor[i]`).
    pub fn at(self, i: impl Into<Affine>) -> Self {
        self.slice(i, 1)
    }

    /// Narrows the next dimension to `start .. start + len`.
    pub fn slice(mut self, start: impl Into<Affine>, len: u64) -> Self {
        self.dims.push(DimSlice { start: start.into(), len });
        self
    }

    /// Takes the next dimension whole (`extent` must equal the tensor's extent there).
    pub fn all(self, extent: u64) -> Self {
        self.slice(0, extent)
    }

    /// Addresses the copy on rank `dst` instead of the executing rank.
    pub fn on(mut self, dst: impl Into<Affine>) -> Self {
        self.rank = RankSel::Remote(dst.into());
        self
    }

    /// The same region, recorded as written at `loc`.
    pub fn with_loc(mut self, loc: Loc) -> Self {
        self.loc = loc;
        self
    }

    /// Whether it addresses another rank's copy ([`RankSel::Remote`]).
    pub fn is_remote(&self) -> bool {
        matches!(self.rank, RankSel::Remote(_))
    }
}
