//! Static scheduling: place every tile instance on a core of its kind, in an order, prove
//! the orders deadlock-free, drop implied synchronisations, and give each remaining wait a
//! monotone counter with a target.

mod cost;
mod list;
mod priority;
mod proof;
mod reduce;
#[cfg(test)]
mod testutil;
mod types;

pub use cost::{CostModel, SimpleCost, UnitCost};
pub use list::list_schedule;
pub use priority::{bottom_levels, node_costs};
pub use proof::prove_deadlock_free;
pub use reduce::{CLOCK_CAP, reduce_cross_core_edges, reduce_cross_core_edges_keeping};
pub use types::{Placement, Signal, SyncPlan, Wait};
