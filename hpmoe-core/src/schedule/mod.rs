//! Static scheduling: place every tile instance on a core of its kind, in an order, prove
//! the orders deadlock-free, drop implied synchronisations, and give each remaining wait a
//! monotone counter with a target.
//!
//! The steps, in the order a caller runs them:
//! 1. [`list_schedule`] — critical-path list scheduling under a [`CostModel`]
//!    (priorities from [`bottom_levels`], a sink ranked with the readers of the input it waits
//!    for last, then forward-backward improvement; puts to other
//!    ranks on a few link lanes per rank when the model has a shared link) → [`Placement`];
//!    (In the pipeline, a layer whose lanes go by send round also gets *pacing* dependencies
//!    between puts of different ranks into one receiver of their server, in the plan's order:
//!    `pacing`.)
//! 2. [`prove_deadlock_free`] — DAG ∪ per-core order is acyclic, or here is the cycle;
//! 3. [`plan_sync`] — [`reduce_cross_core_edges`] then one counter per waiting node → [`SyncPlan`].
//!
//! ```
//! use hpmoe_core::expand::{Expanded, InstanceSpace, Work};
//! use hpmoe_core::graph::Dag;
//! use hpmoe_core::ids::{Id, NodeId};
//! use hpmoe_core::model::{CoreKind, MachineProfile};
//! use hpmoe_core::schedule::{list_schedule, plan_sync, prove_deadlock_free, SimpleCost};
//! use smallvec::smallvec;
//!
//! // One rank: a matmul tile feeding two vector tiles.
//! let exp = Expanded {
//!     space: InstanceSpace::new(1, [smallvec![1], smallvec![2]]),
//!     dag: Dag::from_pairs(3, &[(0, 1), (0, 2)].map(|(a, b)| (NodeId::new(a), NodeId::new(b)))),
//!     family_core: vec![CoreKind::Aic, CoreKind::Aiv],
//!     family_work: vec![Work { flops: 1 << 30, ..Work::default() }, Work { bytes: 1 << 20, ..Work::default() }],
//!     rotation: vec![0; 3].into(),
//! };
//! let profile = MachineProfile::small(1, 1);
//! let placement = list_schedule(&exp, &profile, &SimpleCost::default());
//! prove_deadlock_free(&exp.dag, &placement.queues).expect("list schedules never deadlock");
//! let sync = plan_sync(&exp, &placement);
//! assert_eq!(sync.cross_edges_after, 2); // both vector tiles wait for the matmul
//! ```

mod bound;
mod cost;
pub(crate) mod counters;
mod flag_error;
pub mod flags;
pub(crate) mod list;
pub(crate) mod pacing;
mod priority;
pub(crate) mod proof;
mod reduce;
#[cfg(test)]
mod testutil;

pub use crate::placement::{Placement, Signal, SyncPlan, Wait};
pub use bound::{LowerBound, lower_bound, lower_bound_along, lower_bound_of};
pub use cost::{CostModel, NetworkLimits, PutShape, SimpleCost, UnitCost};
pub use counters::plan_sync;
pub use flags::{FlagPlan, FlagPolicy};
pub use list::list_schedule;
pub use priority::{bottom_levels, node_costs};
pub use proof::prove_deadlock_free;
pub use reduce::{CLOCK_CAP, reduce_cross_core_edges, reduce_cross_core_edges_keeping};
