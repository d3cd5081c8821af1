//! The one plan of a taskflow: [`plan`] is how hpmoe compiles a taskflow wherever it does it —
//! the `#[taskflow]` macro, `hpmoe_ascendc::Build`, the main job — so a taskflow yields one
//! schedule, one table, one flag plan and one checksum, whichever of them built it.

use crate::cost::{CostProfile, TaskflowCost};
use crate::error::Diagnostics;
use crate::model::Taskflow;
use crate::pipeline::{Checked, CompileOptions, Compiled, compile_checked};
use crate::schedule::SimpleCost;

/// What a plan may differ in: the cost figures the scheduler prices tiles with, and the flag
/// policy. The defaults are hpmoe's everywhere.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PlanOptions {
    /// The cost profile (default: the preset named like the taskflow's machine profile, else the
    /// Ascend 910B one; see [`plan_cost_profile`]).
    pub cost_profile: Option<CostProfile>,
    /// Compile options (default: hardware flags on, flag 15).
    pub compile: CompileOptions,
}

/// The cost profile a plan of `tf` prices tiles with when none is given: the preset named like
/// its machine profile (`ascend910b`, `ascend_a3_die`), else the Ascend 910B one.
pub fn plan_cost_profile(tf: &Taskflow) -> CostProfile {
    CostProfile::preset(&tf.profile.name).unwrap_or_else(|_| CostProfile::ascend910b())
}

/// The plan of `tf` with hpmoe's defaults: scheduled under [`TaskflowCost`] with
/// [`plan_cost_profile`], hardware flags planned before the table is built. Every error found.
pub fn plan(tf: &Taskflow) -> Result<Compiled, Diagnostics> {
    plan_with(tf, &PlanOptions::default())
}

/// [`plan`] with `options`.
pub fn plan_with(tf: &Taskflow, options: &PlanOptions) -> Result<Compiled, Diagnostics> {
    // The structural checks run once: they pick the cost model, and the compile goes on from them.
    let checked = Checked::new(tf);
    if checked.structure.is_err() {
        // The compile reports the errors (the cost model needs a well-formed taskflow).
        return compile_checked(tf, checked, &SimpleCost::default(), &options.compile);
    }
    let profile = options.cost_profile.clone().unwrap_or_else(|| plan_cost_profile(tf));
    compile_checked(tf, checked, &TaskflowCost::new(tf, profile), &options.compile)
}
