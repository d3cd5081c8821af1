//! Which guarded tile instances do work in one run.
//!
//! A [`crate::model::Guard`] (`run_if_above(count, above)`) decides at run time whether an
//! instance runs its body; the schedule is static and does not know. To price one run —
//! say a natural MoE routing — evaluate every guard against that run's count values
//! ([`Activity::evaluate`]) and hand the result to the cost model
//! ([`super::TaskflowCost::with_activity`]): skipped instances then cost only their tile
//! overhead (plus their waits and signals, which the simulator charges as for any tile) and
//! move no bytes, in the simulated taskflow, the kernel-by-kernel baseline and the bound.
//! The scheduler never sees it: schedules are built for the worst case, every block full.
//!
//! A `matmul_tn_slots_accumulate` reads only the rows its counts let it sum, so a run also
//! gives each instance with such ops a *share* of its body's work ([`Activity::share`], see
//! `cost/slot_share.rs`): the instance costs its overhead plus that share of the rest.

use crate::expand::{Extent, InstanceSpace, RegionFault, eval_region};
use crate::ids::{NodeId, RankId};
use crate::model::{Guard, Taskflow};

/// Why [`Activity::evaluate`] could not evaluate a guard.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ActivityError {
    /// The numbering is not the taskflow's: its family count differs.
    Families {
        /// Families of the numbering.
        numbering: usize,
        /// Families of the taskflow.
        taskflow: usize,
    },
    /// A guard counts in a tensor the taskflow does not declare.
    UnknownTensor {
        /// The guarded family.
        tile: String,
        /// The tensor named.
        tensor: String,
    },
    /// A guard's count region cannot be evaluated for an instance.
    Count {
        /// The instance (`tile(e=0) on rank 1`).
        instance: String,
        /// Why.
        fault: RegionFault,
    },
    /// The run has no value for the element a guard reads.
    NoValue {
        /// The instance (`tile(e=0) on rank 1`).
        instance: String,
        /// The count tensor.
        tensor: String,
        /// The element read.
        extent: Extent,
    },
    /// A guard's bound overflows for an instance.
    BoundOverflow {
        /// The instance (`tile(e=0) on rank 1`).
        instance: String,
    },
}

impl std::fmt::Display for ActivityError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ActivityError::Families { numbering, taskflow } => {
                write!(f, "the numbering has {numbering} families, the taskflow {taskflow}")
            }
            ActivityError::UnknownTensor { tile, tensor } => write!(f, "tile `{tile}`: no tensor `{tensor}`"),
            ActivityError::Count { instance, fault } => {
                write!(f, "{instance}: cannot evaluate its guard's count: {fault}")
            }
            ActivityError::NoValue { instance, tensor, extent } => {
                write!(f, "{instance}: no run-time value for its guard's count `{tensor}`{extent}")
            }
            ActivityError::BoundOverflow { instance } => write!(f, "{instance}: its guard's bound overflows"),
        }
    }
}

impl std::error::Error for ActivityError {}

/// Per tile instance (node id), whether its guard made it skip its body.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Activity {
    skipped: Vec<bool>,
    /// Per node, the share of its body's work the run's counts leave it (empty: all 1).
    share: Vec<f32>,
}

impl Activity {
    /// Evaluates every guard of `tf` (numbered as `space`: [`InstanceSpace::of`] or a
    /// compile's `expanded.space`) for every instance on every rank,
    /// reading counts through `value(rank, tensor, flat_index)`: the value the count
    /// element has when the guarded tile runs (row-major index into the tensor).
    ///
    /// # Errors
    /// If `value` has no value for a count a guard reads, or a guard's region or bound
    /// cannot be evaluated (the checks refuse such taskflows before they are expanded).
    pub fn evaluate(
        tf: &Taskflow,
        space: &InstanceSpace,
        value: impl Fn(u32, &str, u64) -> Option<i64>,
    ) -> Result<Activity, ActivityError> {
        let ranks = space.ranks;
        if space.families.len() != tf.families.len() {
            return Err(ActivityError::Families { numbering: space.families.len(), taskflow: tf.families.len() });
        }
        let mut skipped = vec![false; space.len()];
        for (fi, f) in tf.families.iter().enumerate() {
            let Some(guard) = &f.guard else { continue };
            let decl = tf.tensor(&guard.count.tensor).ok_or_else(|| ActivityError::UnknownTensor {
                tile: f.name.clone(),
                tensor: guard.count.tensor.clone(),
            })?;
            let span = &space.families[fi];
            for rank in 0..ranks {
                for idx in 0..span.count {
                    let coords = crate::expand::decode(idx, &span.extents);
                    let instance = || format!("{} on rank {rank}", f.instance_name(&coords));
                    let (_, ext) = eval_region(&guard.count, &decl.shape, &coords, rank, ranks)
                        .map_err(|fault| ActivityError::Count { instance: instance(), fault })?;
                    let count = value(rank, &decl.name, ext.flat_index(&decl.shape, &[])).ok_or_else(|| {
                        ActivityError::NoValue { instance: instance(), tensor: decl.name.clone(), extent: ext }
                    })?;
                    let above = guard
                        .above
                        .eval(&coords, u64::from(rank))
                        .map_err(|_| ActivityError::BoundOverflow { instance: instance() })?;
                    skipped[space.node(RankId::new(rank), span.first + idx).index()] = !Guard::runs(count, above);
                }
            }
        }
        let share = super::slot_share::evaluate(tf, space, &value)?;
        Ok(Activity { skipped, share })
    }

    /// Per node, the share of `runs` in which it runs its body: the plan for
    /// [`super::TaskflowCost::with_expected_activity`] (all ones if `runs` is empty).
    pub fn run_probability(runs: &[Activity], nodes: usize) -> Vec<f32> {
        let mut ran = vec![0u32; nodes];
        for a in runs {
            for (r, &skipped) in ran.iter_mut().zip(&a.skipped) {
                *r += u32::from(!skipped);
            }
        }
        let n = runs.len().max(1) as f32;
        ran.into_iter().map(|r| if runs.is_empty() { 1.0 } else { r as f32 / n }).collect()
    }

    /// Whether node `node` skips its body (false for nodes this activity does not cover).
    pub fn skips(&self, node: NodeId) -> bool {
        self.skipped.get(node.index()).copied().unwrap_or(false)
    }

    /// The share of node `node`'s body work the run leaves it: below 1 for an instance whose
    /// `matmul_tn_slots_accumulate` ops sum fewer rows than their slots hold, else 1.
    pub fn share(&self, node: NodeId) -> f32 {
        self.share.get(node.index()).copied().unwrap_or(1.0)
    }

    /// How many instances skip their body.
    pub fn skipped(&self) -> usize {
        self.skipped.iter().filter(|&&s| s).count()
    }

    /// Instances covered (the expanded taskflow's nodes).
    pub fn nodes(&self) -> usize {
        self.skipped.len()
    }
}
