//! Checks on the expanded instance DAG and on the schedule, one file per family of checks:
//! dependency cycles and deadlocks, the ordering of conflicting accesses, and the table's limits.
//! Each collects all its errors; none stops at the first. The checks on the taskflow as written,
//! which run before expansion, are [`crate::resolve`]'s.

mod accumulation;
mod cycle;
mod ordering;
mod table_limits;

pub(crate) use cycle::{cycle_error, deadlock_error};
pub(crate) use ordering::check_ordering;
pub(crate) use table_limits::check_table_limits;

use crate::expand::InstanceSpace;
use crate::ids::NodeId;
use crate::model::Taskflow;

/// `gmm1(e=0, m=3) on rank 2`.
pub fn node_name(tf: &Taskflow, space: &InstanceSpace, node: NodeId) -> String {
    let local = space.local_of(node);
    let f = &tf.families[space.family_of_local(local)];
    format!("{} on rank {}", f.instance_name(&space.coords_of_local(local)), space.rank_of(node))
}
