//! The scheduler's results, read by the table builder, the simulator and the executor: where
//! and in which order every node runs ([`Placement`]) and how the cores synchronise
//! ([`SyncPlan`], of [`Wait`]s and [`Signal`]s).
//!
//! They live apart from [`crate::schedule`], which produces them and re-exports them (their
//! public path is `hpmoe_core::schedule::*`), so that [`crate::table`] can read them without
//! depending on the scheduler: the scheduler's flag planning (`schedule::flags::decode_plan`)
//! reads a [`crate::table::ScheduleTable`], and the two modules would otherwise import each
//! other.

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
    pub queues: Csr<CoreId, NodeId>,
    /// Per node: estimated start under the cost model used to schedule, in ns.
    pub start_ns: IdVec<NodeId, u64>,
    /// Per node: estimated finish under the same model, in ns.
    pub finish_ns: IdVec<NodeId, u64>,
    /// Estimated makespan, ns.
    pub makespan_ns: u64,
}

/// A node waits until `counter` (on its own rank) is at least `target`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Wait {
    /// The counter's id on the waiting node's rank.
    pub counter: CounterId,
    /// The number of signals it must have received: every producer the wait stands for sends one.
    pub target: u32,
}

/// After finishing, a node adds 1 to `counter` on rank `rank`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Signal {
    /// The rank whose counter is incremented (a put's destination, or the node's own rank).
    pub rank: RankId,
    /// The counter's id on that rank.
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
    /// The signals of every node, node by node (see [`SyncPlan::signals`]).
    pub signal_list: Vec<Signal>,
    /// Counters used on each rank (ids `0..counters_per_rank[r]`).
    pub counters_per_rank: IdVec<RankId, u32>,
    /// Dependency edges between different cores, before reduction.
    pub cross_edges_before: u64,
    /// Dependency edges between different cores after reduction (each one a signal).
    pub cross_edges_after: u64,
}

impl SyncPlan {
    /// The signals node `n` sends when it finishes.
    pub fn signals(&self, n: NodeId) -> &[Signal] {
        let n = n.index();
        &self.signal_list[self.signal_offsets[n] as usize..self.signal_offsets[n + 1] as usize]
    }
}
