//! The scheduler's results, read by the table builder, the simulator and the executor.

use crate::graph::Csr;
use crate::ids::{CoreId, CounterId, IdVec, NodeId, RankId};
use serde::{Deserialize, Serialize};

/// Where and in which order every node runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placement {
    /// Per node: its global core (`rank * cores_per_rank + local core`).
    pub core_of: IdVec<NodeId, CoreId>,
    /// Per node: index in its core's queue.
    pub position: IdVec<NodeId, u32>,
    /// Row `c`: the nodes global core `c` runs, in order. One row per core of the profile
    /// (`profile.total_cores()` rows), empty rows included.
    pub queues: Csr,
    /// Per node: estimated start and finish under the cost model used to schedule, in ns.
    pub start_ns: IdVec<NodeId, u64>,
    pub finish_ns: IdVec<NodeId, u64>,
    /// Estimated makespan, ns.
    pub makespan_ns: u64,
}

/// A node waits until `counter` (on its own rank) is at least `target`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Wait {
    pub counter: CounterId,
    pub target: u32,
}

/// After finishing, a node adds 1 to `counter` on rank `rank`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Signal {
    pub rank: RankId,
    pub counter: CounterId,
}

/// The synchronisation of a placement: which nodes wait on which counter, and whom each
/// node signals. Each counter is only ever incremented (monotone) and is waited on by
/// exactly one node, whose target is the number of signals the counter receives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyncPlan {
    /// Per node: its wait, if it has cross-core predecessors left after reduction.
    pub waits: IdVec<NodeId, Option<Wait>>,
    /// Per node: offsets into `signal_list` (`len = nodes + 1`).
    pub signal_offsets: Vec<u32>,
    pub signal_list: Vec<Signal>,
    /// Counters used on each rank (ids `0..counters_per_rank[r]`).
    pub counters_per_rank: IdVec<RankId, u32>,
    /// Dependency edges between different cores, before and after reduction.
    pub cross_edges_before: u64,
    pub cross_edges_after: u64,
}

impl SyncPlan {
    /// The signals node `n` sends when it finishes.
    pub fn signals(&self, n: NodeId) -> &[Signal] {
        let n = n.index();
        &self.signal_list[self.signal_offsets[n] as usize..self.signal_offsets[n + 1] as usize]
    }
}
