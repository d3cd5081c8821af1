//! Checks, one file per family of checks. Each collects all its errors; none stops at the
//! first. The structural checks run on the taskflow as written; the rest on the expanded
//! instance DAG and on the schedule.

mod cycle;
mod footprint;
mod names;
mod ordering;
mod structure;
mod table_limits;

pub use cycle::{cycle_error, deadlock_error};
pub use footprint::{Piece, check_footprint, footprint, local_buffer, op_pieces};
pub use names::{closest, suggestion};
pub use ordering::check_ordering;
pub use structure::{Resolved, ResolvedCall, check_structure};
pub use table_limits::check_table_limits;

use crate::expand::InstanceSpace;
use crate::model::Taskflow;

/// `gmm1(e=0, m=3) on rank 2`.
pub fn node_name(tf: &Taskflow, space: &InstanceSpace, node: u32) -> String {
    let local = space.local_of(node);
    let f = &tf.families[space.family_of_local(local)];
    format!("{} on rank {}", f.instance_name(&space.coords_of_local(local)), space.rank_of(node))
}
