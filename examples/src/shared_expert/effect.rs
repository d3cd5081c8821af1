//! What the shared expert adds to the routed layer, and when it runs: the variant's extra
//! table, one row per EP.

use super::overlap::{Overlap, overlap};
use crate::ExampleError;
use crate::report::EpRun;
use hpmoe_core::cost::TaskflowCost;
use hpmoe_host::moe::MoeShape;
use hpmoe_host::sim;

/// The variant against the routed layer alone, at one EP.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Effect {
    /// The variant's taskflow makespan minus the routed layer's, ns.
    pub added_taskflow_ns: i64,
    /// The variant's kernel-by-kernel makespan minus the routed layer's, ns.
    pub added_baseline_ns: i64,
    /// The variant's bound minus the routed layer's, ns (the shared expert's AIC work per core when
    /// AIC work binds).
    pub added_bound_ns: i64,
    /// Rank 0's overlap of the shared expert with dispatch.
    pub rank0: Overlap,
}

/// Simulates `routed` (the variant's routed layer) alone under the run's cost profile and
/// compares it with `run`, the variant's simulated run.
pub fn effect(routed: &MoeShape, run: &EpRun<'_>) -> Result<Effect, ExampleError> {
    let tf = routed.taskflow().map_err(ExampleError::Shape)?;
    let cost = TaskflowCost::new(&tf, run.profile.clone());
    let compiled = hpmoe_core::compile(&tf, &cost).map_err(|d| ExampleError::plan(&tf, d))?;
    let alone = sim::compare(&compiled, &tf.profile, &cost)
        .map_err(|error| ExampleError::Simulate { taskflow: tf.name.clone(), error })?;
    let with = run.comparison;
    let diff = |a: u64, b: u64| a as i64 - b as i64;
    let rank0 = *overlap(run.taskflow, &with.taskflow)?.first().ok_or(ExampleError::NoRanks)?;
    Ok(Effect {
        added_taskflow_ns: diff(with.taskflow.makespan_ns, alone.taskflow.makespan_ns),
        added_baseline_ns: diff(with.baseline.result.makespan_ns, alone.baseline.result.makespan_ns),
        added_bound_ns: diff(with.bound.ns(), alone.bound.ns()),
        rank0,
    })
}

/// Title and column headings of the table.
pub const HEADER: [&str; 2] = [
    "shared expert: what it adds to the routed layer alone (the moe_ffn job) and when its tiles run (rank 0)",
    "  EP   +sim_us  +base_us +bound_us  first_us  dispatch_end_us  during_dispatch",
];

/// What the columns mean.
pub const FOOTER: [&str; 3] = [
    "+*_us: this layer's taskflow makespan, baseline makespan and bound minus the routed layer's alone;",
    "first_us: start of the first shared-expert tile; during_dispatch: share of the shared-expert tiles'",
    "core time spent before the rank's last dispatch put was out (at dispatch_end_us).",
];

/// The table's row for `run`.
pub fn row(routed: &MoeShape, run: &EpRun<'_>) -> Result<String, ExampleError> {
    let e = effect(routed, run)?;
    let us = |ns: i64| ns as f64 / 1e3;
    Ok(format!(
        "{:>4} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>16.1} {:>15.0}%",
        run.ep,
        us(e.added_taskflow_ns),
        us(e.added_baseline_ns),
        us(e.added_bound_ns),
        us(e.rank0.first_shared_start_ns as i64),
        us(e.rank0.dispatch_end_ns as i64),
        100.0 * e.rank0.during_dispatch_share(),
    ))
}
