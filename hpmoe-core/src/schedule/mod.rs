//! Static scheduling: place every tile instance on a core of its kind, in an order, prove
//! the orders deadlock-free, drop implied synchronisations, and give each remaining wait a
//! monotone counter with a target.
//!
//! Stages, in order: [`cost`] (pluggable tile costs) → [`priority`] (bottom levels) →
//! [`list`] (list scheduling) → [`proof`] (deadlock freedom) → [`reduce`] (redundant
//! cross-core edges) → [`counters`] (counter ids, targets and signals).

pub mod cost;
pub mod counters;
pub mod list;
pub mod priority;
pub mod proof;
pub mod reduce;

pub use cost::{CostModel, SimpleCost};
pub use counters::{Signal, SyncPlan, Wait};
pub use list::{Placement, list_schedule};
pub use proof::prove_deadlock_free;
