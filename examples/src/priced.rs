//! The DeepSeek-V3 MoE-FFN layer as the diagnostic examples price it (`network_breakdown`,
//! `ratio_sweep`): one pass of one shape, the cost model its schedule is planned on, and the one
//! its simulated run is priced with (the same, but for natural routing, whose plan knows only
//! the expected activity and whose run one routing's).

use crate::ExampleError;
use crate::report::{PLAN_SAMPLES, RoutedLayer};
use hpmoe_core::cost::{CostProfile, TaskflowCost};
use hpmoe_core::ids::NodeId;
use hpmoe_core::model::Taskflow;
use hpmoe_host::moe::{DispatchPrecision, MoeShape, Pass};

/// Which layer to price.
#[derive(Clone, Debug, PartialEq)]
pub struct LayerSpec {
    /// Expert parallelism: ranks.
    pub ep: u32,
    /// Tokens per rank.
    pub tokens: u64,
    /// Forward, backward or training step.
    pub pass: Pass,
    /// BF16 or INT8 dispatch.
    pub precision: DispatchPrecision,
    /// Natural (run-time) routing, or `None` for the balanced layer (whose backward and training
    /// step sum each expert's weight gradient in one tile, as `moe_training` builds them).
    pub natural: Option<NaturalSpec>,
}

/// How a naturally routed layer is built and routed.
#[derive(Clone, Debug, PartialEq)]
pub struct NaturalSpec {
    /// The routing its run is priced under.
    pub seed: u64,
    /// Rows per block instead of `MoeShape::deepseek_v3_natural`'s, the capacity still 1.5x the
    /// average rounded up to whole blocks.
    pub row_block: Option<u64>,
    /// A relay per rank before the gathering sums (`MoeShape::with_relay`).
    pub relay: bool,
    /// Plan on the priced run's own activity (which no static schedule can know) instead of
    /// the expected activity of [`PLAN_SAMPLES`] other routings.
    pub plan_on_run: bool,
}

impl NaturalSpec {
    /// Routing `seed`, the default row block, no relay, planned on the expected activity.
    pub fn seeded(seed: u64) -> Self {
        NaturalSpec { seed, row_block: None, relay: false, plan_on_run: false }
    }
}

/// A layer ready to plan and price.
#[derive(Clone, Debug)]
pub struct PricedLayer {
    /// The pass's taskflow.
    pub taskflow: Taskflow,
    /// What its schedule is planned on.
    pub plan: TaskflowCost,
    /// What its simulated run is priced with.
    pub run: TaskflowCost,
    /// The naturally routed shape, for pricing the same schedule under other routings.
    pub natural_shape: Option<MoeShape>,
}

impl PricedLayer {
    /// The layer `spec` under the cost profile `profile`.
    ///
    /// # Errors
    /// When the shape is invalid (e.g. tokens that do not fill whole row blocks) or its
    /// taskflow cannot be expanded or routed.
    pub fn new(spec: &LayerSpec, profile: CostProfile) -> Result<Self, ExampleError> {
        let (ep, tokens) = (spec.ep, spec.tokens);
        let Some(natural) = &spec.natural else {
            let shape = MoeShape::deepseek_v3(ep, tokens).with_dispatch(spec.precision);
            let taskflow = if spec.pass == Pass::Forward {
                shape.taskflow()
            } else {
                shape.with_whole_expert_wgrad().pass_taskflow(spec.pass)
            }
            .map_err(ExampleError::Shape)?;
            let cost = TaskflowCost::new(&taskflow, profile);
            return Ok(PricedLayer { taskflow, plan: cost.clone(), run: cost, natural_shape: None });
        };
        let mut shape = MoeShape::deepseek_v3_natural(ep, tokens).with_dispatch(spec.precision);
        if let Some(rows) = natural.row_block {
            shape.row_block = rows;
            shape = shape.clone().with_natural_routing(shape.natural_capacity(1.5));
        }
        if natural.relay {
            shape = shape.with_relay();
        }
        let layer = RoutedLayer::natural_pass(&shape, spec.pass, natural.seed, PLAN_SAMPLES)?;
        let cost = TaskflowCost::new(&layer.taskflow, profile);
        let expected = if natural.plan_on_run {
            (0..layer.plan.len()).map(|v| if layer.run.skips(NodeId::from_index(v)) { 0.0 } else { 1.0 }).collect()
        } else {
            layer.plan
        };
        let plan = cost.clone().with_expected_activity(expected);
        Ok(PricedLayer {
            taskflow: layer.taskflow,
            plan,
            run: cost.with_activity(layer.run),
            natural_shape: Some(shape),
        })
    }
}
