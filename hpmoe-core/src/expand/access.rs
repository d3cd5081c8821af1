//! Concrete regions: a region evaluated for one tile instance on one rank.

use crate::limits::MAX_TENSOR_DIMS;
use crate::model::{RankSel, Region};
use std::fmt;

/// A concrete box in a tensor: `start[k] .. start[k] + len[k]` for `k < dims`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Extent {
    /// First element index per dimension (entries past `dims` are 0).
    pub start: [u32; MAX_TENSOR_DIMS],
    /// Elements per dimension (entries past `dims` are 0).
    pub len: [u32; MAX_TENSOR_DIMS],
    /// Dimensions in use: the tensor's rank.
    pub dims: u8,
}

impl Extent {
    /// Whether the two boxes share an element (both must be of the same tensor and rank).
    pub fn overlaps(&self, o: &Extent) -> bool {
        (0..self.dims as usize).all(|k| self.start[k] < o.end(k) && o.start[k] < self.end(k))
    }

    /// One past the last index of dimension `k`.
    pub fn end(&self, k: usize) -> u32 {
        self.start[k] + self.len[k]
    }

    /// Elements in the box.
    pub fn volume(&self) -> u64 {
        (0..self.dims as usize).map(|k| u64::from(self.len[k])).product()
    }

    /// The row-major index, in a tensor of `shape`, of the element at offsets `at` from the box's
    /// start (missing offsets are 0: `&[]` is the box's first element).
    pub fn flat_index(&self, shape: &[u64], at: &[u64]) -> u64 {
        (0..self.dims as usize).fold(0u64, |acc, k| {
            let index = u64::from(self.start[k]).saturating_add(at.get(k).copied().unwrap_or(0));
            acc.saturating_mul(shape[k]).saturating_add(index)
        })
    }

    /// Elements shared with `o` (0 when disjoint).
    pub fn intersection_volume(&self, o: &Extent) -> u64 {
        (0..self.dims as usize)
            .map(|k| {
                let lo = self.start[k].max(o.start[k]);
                let hi = self.end(k).min(o.end(k));
                u64::from(hi.saturating_sub(lo))
            })
            .product()
    }

    /// The overlap of two overlapping boxes.
    pub fn intersection(&self, o: &Extent) -> Extent {
        let mut out = *self;
        for k in 0..self.dims as usize {
            out.start[k] = self.start[k].max(o.start[k]);
            out.len[k] = self.end(k).min(o.end(k)).saturating_sub(out.start[k]);
        }
        out
    }
}

impl fmt::Display for Extent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        for k in 0..self.dims as usize {
            if k > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{}..{}", self.start[k], self.end(k))?;
        }
        f.write_str("]")
    }
}

/// Why a region could not be evaluated for an instance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RegionFault {
    /// A start, length or rank expression overflows 64-bit arithmetic.
    Overflow,
    /// The box leaves the tensor in dimension `dim`.
    OutOfBounds {
        /// The dimension.
        dim: usize,
        /// The box's start in it.
        start: i64,
        /// The box's length in it.
        len: u64,
        /// The tensor's extent in it.
        extent: u64,
    },
    /// A remote region's rank is not one of the ranks.
    RankOutOfRange(i64),
}

impl fmt::Display for RegionFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RegionFault::Overflow => f.write_str("a region expression overflows 64-bit arithmetic"),
            RegionFault::OutOfBounds { dim, start, len, extent } => write!(
                f,
                "dimension {dim} is {start}..{} but the tensor has {extent}",
                start.saturating_add(i64::try_from(*len).unwrap_or(i64::MAX))
            ),
            RegionFault::RankOutOfRange(rank) => write!(f, "rank {rank} is not one of the ranks"),
        }
    }
}

impl std::error::Error for RegionFault {}

/// Evaluates `region` of a tensor with `shape` for the instance at `coords` on `rank`.
/// Returns the rank whose copy is addressed and the box.
pub fn eval_region(
    region: &Region,
    shape: &[u64],
    coords: &[u64],
    rank: u32,
    ranks: u32,
) -> Result<(u32, Extent), RegionFault> {
    let dest = match &region.rank {
        RankSel::Local => rank,
        RankSel::Remote(e) => {
            let r = e.eval(coords, u64::from(rank)).map_err(|_| RegionFault::Overflow)?;
            if r < 0 || r >= i64::from(ranks) {
                return Err(RegionFault::RankOutOfRange(r));
            }
            r as u32
        }
    };
    let mut ext = Extent { start: [0; MAX_TENSOR_DIMS], len: [0; MAX_TENSOR_DIMS], dims: shape.len() as u8 };
    for (k, &extent) in shape.iter().enumerate() {
        let (start, len) = match region.dims.get(k) {
            Some(d) => (d.start.eval(coords, u64::from(rank)).map_err(|_| RegionFault::Overflow)?, d.len),
            None => (0, extent),
        };
        let end = start.checked_add(i64::try_from(len).map_err(|_| RegionFault::Overflow)?);
        if start < 0 || end.is_none_or(|e| e > extent as i64) {
            return Err(RegionFault::OutOfBounds { dim: k, start, len, extent });
        }
        // Extents are at most MAX_DIM_EXTENT (u32), checked with the shapes.
        ext.start[k] = start as u32;
        ext.len[k] = len as u32;
    }
    Ok((dest, ext))
}

#[cfg(test)]
mod tests {
    use super::RegionFault;

    #[test]
    fn faults_read_as_sentences() {
        let out = RegionFault::OutOfBounds { dim: 1, start: 6, len: 4, extent: 8 };
        assert_eq!(out.to_string(), "dimension 1 is 6..10 but the tensor has 8");
        assert_eq!(RegionFault::RankOutOfRange(-1).to_string(), "rank -1 is not one of the ranks");
        assert_eq!(RegionFault::Overflow.to_string(), "a region expression overflows 64-bit arithmetic");
    }
}
