//! Runnable examples of hpmoe live in `examples/examples/`; this library holds what they
//! share with each other and with the tests of this package:
//!
//! - [`cli`]: the examples' command-line options;
//! - [`report`]: the per-EP measurement loop and the results table (text and JSON) that the
//!   main job (`moe_ffn`) and the custom variant (`moe_ffn_shared`) both print;
//! - [`host_check`]: run a taskflow's schedule on the host executor and compare one output
//!   bitwise with a reference; [`moe_host_check`] does it for the main job's layer;
//! - [`shared_expert`]: the custom variant — DeepSeek-V3's shared expert overlapped with
//!   dispatch, built on `MoeShape::taskflow()` with a user-defined op and no change to hpmoe.

pub mod cli;
pub mod report;
pub mod shared_expert;

use hpmoe_core::cost::{CostProfile, TaskflowCost};
use hpmoe_core::exec::moe_reference::{moe_inputs, moe_reference};
use hpmoe_core::exec::{Executor, HostTensor, Inputs, OpImpls, RunOptions};
use hpmoe_core::model::Taskflow;
use hpmoe_core::moe::MoeShape;

/// What a host check compared.
#[derive(Clone, Debug, PartialEq)]
pub struct HostCheck {
    pub ranks: u32,
    /// Output elements compared, all ranks.
    pub elements: usize,
    /// Largest absolute difference to the reference (0 when bitwise equal).
    pub max_abs_err: f64,
    /// The first bitwise difference, if any: `rank R out: element ...`.
    pub first_difference: Option<String>,
    /// Tile instances the executor ran, all ranks.
    pub tiles: u64,
    /// Of `tiles`, those whose `run_if_above` guard skipped their body (natural routing's
    /// blocks past the run-time counts); they still waited and signalled.
    pub skipped: u64,
}

impl HostCheck {
    pub fn passed(&self) -> bool {
        self.first_difference.is_none()
    }
}

/// Schedules `tf` under `profile`, runs the schedule table on the host executor (one thread
/// per core, every rank, the op bodies of `impls`) on `inputs`, and compares tensor `output`
/// of each rank bitwise with `expected[rank]`.
///
/// # Errors
/// When the taskflow cannot be scheduled, the executor fails (a timeout, a panicking tile,
/// an op without a body) or `expected` does not hold one tensor per rank; a wrong result is
/// not an error but a [`HostCheck`] that did not pass.
pub fn host_check(
    tf: &Taskflow,
    impls: &OpImpls,
    profile: &CostProfile,
    inputs: &Inputs,
    output: &str,
    expected: &[HostTensor],
) -> Result<HostCheck, String> {
    let ranks = tf.profile.ranks;
    if expected.len() != ranks as usize {
        return Err(format!("{} expected `{output}` tensors for {ranks} ranks", expected.len()));
    }
    let cost = TaskflowCost::new(tf, profile.clone());
    let compiled = hpmoe_core::compile(tf, &cost).map_err(|d| d.render(&tf.sources))?;
    let exec = Executor::new(tf, &compiled.table, impls).map_err(|e| e.to_string())?;
    let out = exec.run(inputs, &RunOptions::default()).map_err(|e| e.to_string())?;
    let (tiles, skipped) = (out.stats.tiles, out.stats.skipped);
    let mut check = HostCheck { ranks, elements: 0, max_abs_err: 0.0, first_difference: None, tiles, skipped };
    for (rank, want) in (0..ranks).zip(expected) {
        let got = out.snapshot.get(rank, output).ok_or_else(|| format!("the run has no `{output}` on rank {rank}"))?;
        if let Some(d) = got.first_difference(want) {
            check.first_difference.get_or_insert_with(|| format!("rank {rank} {output}: {d}"));
        }
        if got.len() == want.len() {
            for (a, b) in got.to_f32().into_iter().zip(want.to_f32()) {
                let err = f64::from((a - b).abs());
                // A NaN on either side is an error as large as it gets.
                check.max_abs_err = check.max_abs_err.max(if err.is_nan() { f64::INFINITY } else { err });
            }
        }
        check.elements += got.len();
    }
    Ok(check)
}

/// The main job's host check: `shape`'s MoE layer with the built-in ops on [`moe_inputs`]
/// data, its `out` against [`moe_reference`] (the layer computed with plain loops). Either
/// routing: under natural routing (`MoeShape::tiny_natural`) the data follow
/// `shape.route(seed)`, and the blocks its counts leave empty are skipped ([`HostCheck::skipped`]).
///
/// # Errors
/// As [`host_check`], and when the shape is invalid.
pub fn moe_host_check(shape: &MoeShape, profile: &CostProfile, seed: u64) -> Result<HostCheck, String> {
    let tf = shape.taskflow()?;
    let inputs = moe_inputs(shape, seed);
    let reference = moe_reference(shape, &inputs)?;
    host_check(&tf, &OpImpls::builtin(), profile, &inputs, "out", &reference)
}
