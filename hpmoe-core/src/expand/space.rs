//! Numbering of tile instances.

use crate::ids::{NodeId, RankId};
use serde::{Deserialize, Serialize};
use smallvec::SmallVec;

/// The local ids `first .. first + count` of one family, and its grid extents.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FamilySpan {
    /// The family's first local id.
    pub first: u32,
    /// Its number of instances per rank (the product of `extents`).
    pub count: u32,
    /// Its grid extents, outermost first; local ids run row-major over them.
    pub extents: SmallVec<[u32; 4]>,
}

/// Why [`InstanceSpace::of`] cannot number a taskflow's instances: more than node ids can
/// number (the checks report it as [`crate::error::ErrorKind::TooManyInstances`] or
/// [`crate::error::ErrorKind::GridTooLarge`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TooManyInstances {
    /// One tile family's grid alone (its product, or one extent) does not fit.
    Tile {
        /// The family's name.
        tile: String,
    },
    /// The families of all ranks together do not fit.
    Taskflow {
        /// The taskflow's name.
        taskflow: String,
    },
}

impl std::fmt::Display for TooManyInstances {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TooManyInstances::Tile { tile } => write!(f, "tile `{tile}` has too many instances to number"),
            TooManyInstances::Taskflow { taskflow } => {
                write!(f, "taskflow `{taskflow}` has too many instances to number")
            }
        }
    }
}

impl std::error::Error for TooManyInstances {}

/// How global node ids map to (rank, family, grid coordinates).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstanceSpace {
    /// Number of ranks; global node `n` is local instance `n % per_rank` of rank `n / per_rank`.
    pub ranks: u32,
    /// Instances of one rank.
    pub per_rank: u32,
    /// In family declaration order; spans are contiguous and cover `0..per_rank`.
    pub families: Vec<FamilySpan>,
}

impl InstanceSpace {
    /// Builds the numbering from each family's grid extents. The caller has checked the
    /// limits, so the counts fit in `u32`.
    pub fn new(ranks: u32, extents: impl IntoIterator<Item = SmallVec<[u32; 4]>>) -> Self {
        let mut families = Vec::new();
        let mut first = 0u32;
        for ext in extents {
            let count = ext.iter().map(|&e| e as u64).product::<u64>();
            let count = u32::try_from(count).expect("family size checked against limits");
            families.push(FamilySpan { first, count, extents: ext });
            first = first.checked_add(count).expect("instance count checked against limits");
        }
        InstanceSpace { ranks, per_rank: first, families }
    }

    /// The numbering of `tf`'s instances, without expanding it: for run-time data keyed by
    /// node id (such as [`crate::cost::Activity`]) before or apart from a compile.
    ///
    /// # Errors
    /// If the taskflow has more instances than node ids can number (the checks report it).
    pub fn of(tf: &crate::model::Taskflow) -> Result<Self, TooManyInstances> {
        let mut extents = Vec::with_capacity(tf.families.len());
        let mut per_rank = 0u64;
        for f in &tf.families {
            let too_many = || TooManyInstances::Tile { tile: f.name.clone() };
            per_rank = per_rank.checked_add(f.instances().ok_or_else(too_many)?).ok_or_else(too_many)?;
            extents.push(
                f.grid.iter().map(|g| u32::try_from(g.extent).map_err(|_| too_many())).collect::<Result<_, _>>()?,
            );
        }
        if per_rank.checked_mul(u64::from(tf.profile.ranks)).is_none_or(|n| n > u64::from(u32::MAX)) {
            return Err(TooManyInstances::Taskflow { taskflow: tf.name.clone() });
        }
        Ok(Self::new(tf.profile.ranks, extents))
    }

    /// Total nodes, all ranks.
    pub fn len(&self) -> usize {
        self.per_rank as usize * self.ranks as usize
    }

    /// Whether there are no nodes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The node ids `0..len`, all ranks.
    pub fn node_ids(&self) -> impl DoubleEndedIterator<Item = NodeId> + ExactSizeIterator + use<> {
        (0..self.len()).map(NodeId::from_index)
    }

    /// The global node id of local instance `local` on `rank`.
    #[inline]
    pub fn node(&self, rank: RankId, local: u32) -> NodeId {
        NodeId::new(rank.raw() * self.per_rank + local)
    }

    /// The rank global node `node` runs on.
    #[inline]
    pub fn rank_of(&self, node: NodeId) -> RankId {
        RankId::new(node.raw() / self.per_rank)
    }

    /// The local instance id of global node `node` (its id within its rank).
    #[inline]
    pub fn local_of(&self, node: NodeId) -> u32 {
        node.raw() % self.per_rank
    }

    /// Family index of a global node.
    #[inline]
    pub fn family_of(&self, node: NodeId) -> usize {
        self.family_of_local(self.local_of(node))
    }

    /// Family index of a local instance id.
    pub fn family_of_local(&self, local: u32) -> usize {
        self.families.partition_point(|f| f.first + f.count <= local)
    }

    /// Grid coordinates (row-major) of a local id within its family.
    pub fn coords_of_local(&self, local: u32) -> SmallVec<[u64; 4]> {
        let f = &self.families[self.family_of_local(local)];
        decode(local - f.first, &f.extents)
    }

    /// Local id of `coords` in family `family`.
    pub fn local_id(&self, family: usize, coords: &[u64]) -> u32 {
        let f = &self.families[family];
        let mut idx = 0u64;
        for (&c, &e) in coords.iter().zip(&f.extents) {
            idx = idx * e as u64 + c;
        }
        f.first + idx as u32
    }
}

/// Row-major decode of `index` in a grid of `extents`.
pub fn decode(mut index: u32, extents: &[u32]) -> SmallVec<[u64; 4]> {
    let mut out: SmallVec<[u64; 4]> = smallvec::smallvec![0; extents.len()];
    for (slot, &e) in out.iter_mut().zip(extents).rev() {
        *slot = (index % e) as u64;
        index /= e;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use smallvec::smallvec;

    #[test]
    fn numbering_round_trips() {
        let s = InstanceSpace::new(3, [smallvec![2, 3], smallvec![4], smallvec![]]);
        assert_eq!(s.per_rank, 6 + 4 + 1);
        assert_eq!(s.len(), 33);
        for local in 0..s.per_rank {
            let f = s.family_of_local(local);
            let c = s.coords_of_local(local);
            assert_eq!(s.local_id(f, &c), local);
        }
        assert_eq!(s.family_of(s.node(RankId::new(2), 10)), 2);
        assert_eq!(s.rank_of(NodeId::new(32)), RankId::new(2));
        assert_eq!(s.local_of(NodeId::new(32)), 10);
        assert_eq!(s.node_ids().len(), 33);
        assert_eq!(s.coords_of_local(4).as_slice(), &[1, 1]);
    }
}
