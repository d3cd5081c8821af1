//! The cost model: machine cost profiles ([`CostProfile`], with sources for every figure),
//! per-family memory traffic ([`FamilyTraffic`]) and tile costs ([`TaskflowCost`]).
//!
//! [`TaskflowCost`] implements [`crate::schedule::CostModel`], so the scheduler's priorities,
//! the simulator (`hpmoe_host::sim`), the kernel-by-kernel baseline and the lower bound all
//! charge the same costs. The tile model is described in [`tile`].
//!
//! ```
//! use hpmoe_core::cost::{CostProfile, TaskflowCost};
//! use hpmoe_host::moe::MoeShape;
//!
//! let shape = MoeShape::tiny(2);
//! let tf = shape.taskflow().unwrap();
//! let profile = CostProfile::from_toml_str("base = \"ascend_a3_die\"\ntile_overhead_ns = 300").unwrap();
//! let cost = TaskflowCost::new(&tf, profile);
//! let compiled = hpmoe_core::compile(&tf, &cost).unwrap();
//! assert_eq!(compiled.expanded.nodes() as u64, 2 * shape.instances_per_rank());
//! ```

pub mod activity;
pub mod calibration;
pub mod profile;
mod profile_error;
mod slot_share;
pub mod tile;
pub mod traffic;

pub use activity::{Activity, ActivityError};
pub use calibration::{FITTED, Fitted, MEASURED_A3_ALL_TO_ALL, MEASURED_TOKENS_PER_RANK};
pub use profile::{CostProfile, GUESSES, Guess, PRESETS, ProfileError};
pub use tile::{FamilyCost, PutCost, TaskflowCost, family_cost, ns_at_rate};
pub use traffic::{FamilyTraffic, Reads, family_traffic, reuse_factor};
