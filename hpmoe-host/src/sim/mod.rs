//! Discrete-event simulation of a schedule table on all ranks at once, the kernel-by-kernel
//! baseline of the same work, and the lower bound both are measured against.
//!
//! - [`simulate`] runs a [`Compiled`] taskflow's schedule table: every core walks its
//!   entries, waits on counters, runs tiles at their [`hpmoe_core::cost`] costs (sharing its
//!   die's HBM), streams puts through the network and signals (the rules are below, under
//!   "The engine").
//! - [`kernel_by_kernel`] runs the same tile instances as a sequence of whole-device
//!   kernels with launch overhead, wave quantisation and host-collective synchronisation.
//! - [`lower_bound`] — `max(critical path, AIC work / #AIC, AIV work / #AIV, busiest
//!   injection, ejection, cross-server and HBM bytes / bandwidth)` — holds for both.
//! - [`all_to_all_bandwidth`] measures the network as the baseline's all-to-alls see it.
//! - [`compare`] does all three and returns a [`Comparison`]; every report prints
//!   makespan / bound.
//!
//! Everything is deterministic: integer ns, no hash-map iteration, fixed tie-breaks.
//!
//! # The engine
//!
//! A core, reaching a table entry: polls its counter if it has a wait (one global-memory
//! read, charged after the counter reaches its target); runs the tile's exec part, whose
//! HBM bytes queue for the die's HBM (`hbm`: the exec stretches when the cores together ask
//! more than the HBM delivers); for a put to another rank, streams the bytes through the
//! network (`fabric`: the rank's injection, the destination's ejection and, between
//! servers, the rank's cross-server bandwidth, each shared max-min fairly by the puts using
//! it, each put capped by its core's stream rate) until the last byte is out. The data
//! lands one path latency later (longer between servers), carrying the put's signal to its
//! destination; the core waits one more path latency for the put's completion (the quiet),
//! then issues its other signals (one global-memory write each), visible on their own rank
//! once issued and on another rank one path latency later. The makespan is when the last
//! core is done and the last put has landed.
//!
//! Ranks are dies, numbered package by package and server by server
//! ([`hpmoe_core::cost::CostProfile::dies_per_package`], `packages_per_server`).
//!
//! Not modelled: L2 capacity (a hit rate stands for it), the HBM traffic of puts (their
//! source reads and landing writes move at network rates), links between servers other
//! than a per-die cross-server bandwidth (no switch ports or routes), and RoCE (an EP group
//! is taken to fit in one unified-bus super-node).
//!
//! ```
//! use hpmoe_core::cost::{CostProfile, TaskflowCost};
//! use hpmoe_host::moe::MoeShape;
//!
//! let shape = MoeShape::tiny(2);
//! let tf = shape.taskflow().unwrap();
//! let cost = TaskflowCost::new(&tf, CostProfile::ascend_a3_die());
//! let compiled = hpmoe_core::compile(&tf, &cost).unwrap();
//! let cmp = hpmoe_host::sim::compare(&compiled, &tf.profile, &cost).unwrap();
//! assert!(cmp.bound.ns() <= cmp.taskflow.makespan_ns);
//! assert!(cmp.bound.ns() <= cmp.baseline.result.makespan_ns);
//! println!("taskflow {} ns, baseline {} ns, {:.2}x", cmp.taskflow.makespan_ns, cmp.baseline.result.makespan_ns, cmp.speedup());
//! ```

mod all_to_all;
pub mod baseline;
mod bound;
mod engine;
mod fabric;
mod hbm;
mod noise;
mod program;
mod result;
mod span;

pub use all_to_all::{AllToAll, all_to_all_bandwidth};
pub use baseline::{Baseline, BaselineKernel, kernel_by_kernel};
pub use bound::{Bound, lower_bound};
pub use noise::TimingNoise;
pub use program::SimCounterId;
pub use result::{CoreStats, FamilySpan, FlowRecord, RankStats, SimResult, Summary, TileRecord};

use hpmoe_core::Compiled;
use hpmoe_core::cost::TaskflowCost;
use hpmoe_core::ids::{CoreId, NodeId};
use hpmoe_core::model::MachineProfile;

/// A core left waiting at the end of a simulation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stuck {
    /// The global core (`rank * cores_per_rank + local core`).
    pub core: CoreId,
    /// Node id of the tile it waits to run.
    pub node: NodeId,
    /// The counter, numbered across all ranks (counters of rank 0 first).
    pub counter: SimCounterId,
    /// The value the wait needed.
    pub target: u32,
    /// The value the counter reached when the simulation ran out of events.
    pub seen: u32,
}

/// Why a simulation could not run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SimError {
    /// Cores still waiting when nothing else can happen.
    Deadlock(Vec<Stuck>),
    /// The cost model, profile and table do not describe the same taskflow.
    Mismatch(Mismatch),
    /// The layer shape given to [`all_to_all_bandwidth`] breaks rules of the layout.
    Shape(crate::moe::ShapeError),
    /// The all-to-all taskflow [`all_to_all_bandwidth`] builds fails the checks (a shape it cannot
    /// express): every error, with the source map that places them.
    AllToAllChecks {
        /// The checks' errors.
        diagnostics: hpmoe_core::Diagnostics,
        /// The taskflow's source map.
        sources: hpmoe_core::model::SourceMap,
    },
    /// The all-to-all taskflow has no kernel to time (it moves nothing).
    EmptyAllToAll,
    /// The baseline cannot order these families (by index) as a sequence of kernels.
    FamilyCycle(Vec<usize>),
}

impl std::fmt::Display for SimError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SimError::Deadlock(stuck) => {
                write!(f, "simulation deadlocked: {} core(s) never reach their wait target", stuck.len())?;
                for s in stuck.iter().take(5) {
                    write!(
                        f,
                        "; core {} waits to run node {} on counter {} (seen {} of {})",
                        s.core, s.node, s.counter, s.seen, s.target
                    )?;
                }
                Ok(())
            }
            SimError::Mismatch(m) => write!(f, "{m}"),
            SimError::AllToAllChecks { diagnostics, sources } => f.write_str(&diagnostics.render(sources)),
            SimError::EmptyAllToAll => f.write_str("the all-to-all has no kernel"),
            SimError::Shape(e) => write!(f, "{e}"),
            SimError::FamilyCycle(fams) => {
                write!(f, "families {fams:?} depend on each other both ways and cannot run as separate kernels")
            }
        }
    }
}

/// The message includes the wrapped error's, so [`source`](std::error::Error::source) is `None`
/// (the Rust API guidelines' rule: one or the other, so a printer walking the chain shows each
/// message once); the wrapped error is the variant's field, typed.
impl std::error::Error for SimError {}

/// What differs between the cost model, profile and table a simulation was given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mismatch {
    /// The profile's ranks are not the taskflow's.
    Ranks {
        /// Ranks of the profile.
        profile: u32,
        /// Ranks of the taskflow.
        taskflow: u32,
    },
    /// The cost model's activity covers another number of instances.
    ActivityNodes {
        /// Instances the activity covers.
        activity: usize,
        /// Instances of the taskflow.
        taskflow: usize,
    },
    /// The cost model's families are not the taskflow's (their number or core kinds).
    Families {
        /// Families of the cost model.
        cost: usize,
        /// Families of the taskflow.
        taskflow: usize,
    },
    /// A node is on no core of the table.
    Unplaced(NodeId),
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Mismatch::Ranks { profile, taskflow } => {
                write!(f, "the profile has {profile} ranks, the taskflow {taskflow}")
            }
            Mismatch::ActivityNodes { activity, taskflow } => {
                write!(f, "the cost model's activity covers {activity} instances, the taskflow has {taskflow}")
            }
            Mismatch::Families { cost, taskflow } => write!(
                f,
                "the cost model has {cost} families, the taskflow {taskflow} (or their core kinds differ): build the TaskflowCost from the same taskflow"
            ),
            Mismatch::Unplaced(node) => write!(f, "node {node} is on no core of the table"),
        }
    }
}

impl std::error::Error for Mismatch {}

/// Simulates `compiled`'s schedule table on all ranks under `cost` (built for the same
/// taskflow).
///
/// # Errors
/// [`SimError::Mismatch`] if `cost` describes other families; [`SimError::Deadlock`] if
/// the table's waits can never all be met (never for a table `compile` produced).
pub fn simulate(compiled: &Compiled, cost: &TaskflowCost) -> Result<SimResult, SimError> {
    simulate_with_noise(compiled, cost, None)
}

/// [`simulate`] with every tile's exec time perturbed by `noise` (none: exactly
/// [`simulate`]): how much the run depends on the modelled times being exact.
///
/// # Errors
/// As [`simulate`].
pub fn simulate_with_noise(
    compiled: &Compiled,
    cost: &TaskflowCost,
    noise: Option<TimingNoise>,
) -> Result<SimResult, SimError> {
    let program = program::Program::from_compiled(compiled, cost)?;
    let p = cost.profile();
    let timing = engine::Timing { noise, ..engine::Timing::of(p) };
    let run = engine::run(&program, timing)?;
    let mut result =
        SimResult::empty(program.ranks, program.cores_per_rank, program.aic_per_rank, compiled.expanded.nodes());
    result.absorb(&program, &run, 0);
    result.finish(p.poll_ns());
    Ok(result)
}

/// The taskflow's simulated run, the kernel-by-kernel baseline and the lower bound.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Comparison {
    /// The taskflow's simulated run under its static schedule.
    pub taskflow: SimResult,
    /// The same tiles run kernel by kernel, one kernel per family.
    pub baseline: Baseline,
    /// The lower bound no schedule of these tiles can beat.
    pub bound: Bound,
}

impl Comparison {
    /// Baseline makespan over taskflow makespan: how much lower the taskflow's latency is.
    pub fn speedup(&self) -> f64 {
        self.baseline.result.makespan_ns as f64 / self.taskflow.makespan_ns.max(1) as f64
    }

    /// Taskflow makespan over the bound (≥ 1).
    pub fn taskflow_over_bound(&self) -> f64 {
        self.taskflow.makespan_ns as f64 / self.bound.ns().max(1) as f64
    }

    /// Baseline makespan over the bound (≥ 1).
    pub fn baseline_over_bound(&self) -> f64 {
        self.baseline.result.makespan_ns as f64 / self.bound.ns().max(1) as f64
    }
}

/// Simulates `compiled`, its kernel-by-kernel baseline on `profile`, and the lower bound.
///
/// # Errors
/// As [`simulate`] and [`kernel_by_kernel`].
pub fn compare(compiled: &Compiled, profile: &MachineProfile, cost: &TaskflowCost) -> Result<Comparison, SimError> {
    Ok(Comparison {
        taskflow: simulate(compiled, cost)?,
        baseline: kernel_by_kernel(&compiled.expanded, profile, cost)?,
        bound: lower_bound(&compiled.expanded, profile, cost)?,
    })
}

#[cfg(test)]
mod tests;
