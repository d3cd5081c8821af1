//! Grid expansion: tile families → tile instances on every rank → the instance DAG.
//!
//! Node ids are global: `node = rank * per_rank + local`, where `local` numbers the instances
//! of one rank family by family (declaration order), each family's grid in row-major order.
//! Every rank has the same instances; edges may differ per rank (regions may mention `RANK`).

mod access;
mod boxes;
mod deps;
mod faults;
mod interval;
mod plan;
mod space;
mod work;

pub use access::{Extent, RegionFault};
// Not API: hpmoe-host's executor places each op argument of an instance with it, exactly as
// expansion does, so that the two cannot disagree on a region's box.
#[doc(hidden)]
pub use access::eval_region;
pub(crate) use deps::{Expansion, Hazard, HazardKind, expand};
pub use space::{FamilySpan, InstanceSpace, TooManyInstances, decode};
pub(crate) use work::gathered;

use crate::graph::Dag;
use crate::ids::{IdVec, NodeId, RankId};
use crate::model::CoreKind;
use serde::{Deserialize, Serialize};

/// What one tile instance does, for the cost model (the same for every instance of a family).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Work {
    /// Floating-point (or integer) operations.
    pub flops: u64,
    /// Bytes read from and written to the rank's own global memory.
    pub bytes: u64,
    /// Bytes written into another rank's memory (puts).
    pub remote_bytes: u64,
}

/// The expanded taskflow: instances, their DAG, and per-family facts later stages need.
#[derive(Clone, Debug)]
pub struct Expanded {
    /// How global node ids map to rank, family and grid coordinates.
    pub space: InstanceSpace,
    /// Dependencies between global node ids (data edges and explicit `after` edges).
    pub dag: Dag,
    /// Per family (declaration order): core kind and work of one instance.
    pub family_core: Vec<CoreKind>,
    /// Per family (declaration order): the work of one instance, which the cost model prices.
    pub family_work: Vec<Work>,
    /// Per node: for a tile that puts to another rank, `(dst - rank) mod ranks` of its first
    /// put (1..ranks); 0 otherwise. The scheduler orders equal-priority puts by it so that
    /// ranks do not all write to the same peer at once.
    pub rotation: IdVec<NodeId, u32>,
}

impl Expanded {
    /// Number of nodes (tile instances of all ranks).
    pub fn nodes(&self) -> usize {
        self.dag.nodes()
    }

    /// Core kind of a node.
    pub fn core_kind(&self, node: NodeId) -> CoreKind {
        self.family_core[self.space.family_of(node)]
    }

    /// Work of a node.
    pub fn work(&self, node: NodeId) -> Work {
        self.family_work[self.space.family_of(node)]
    }

    /// The rank a node's (first) put writes into, by its [`rotation`](Self::rotation): its own
    /// rank for a node that puts to no other.
    pub fn destination(&self, node: NodeId) -> RankId {
        let ranks = self.space.ranks.max(1);
        RankId::new((self.space.rank_of(node).raw() + self.rotation[node]) % ranks)
    }
}
