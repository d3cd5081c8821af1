//! Runnable examples of hpmoe live in `examples/examples/`; this library holds what the main
//! job (`moe_ffn`) shares with the tests of this package.

pub mod cli;

use hpmoe_core::cost::{CostProfile, TaskflowCost};
use hpmoe_core::exec::moe_reference::{moe_inputs, moe_reference};
use hpmoe_core::exec::{Executor, OpImpls, RunOptions};
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
}

impl HostCheck {
    pub fn passed(&self) -> bool {
        self.first_difference.is_none()
    }
}

/// Schedules `shape`'s MoE layer under `profile`, runs the schedule table on the host
/// executor (one thread per core, every rank, the builtin reference ops) and compares each
/// rank's `out` bitwise with [`moe_reference`], the layer computed with plain loops.
///
/// # Errors
/// When the layer cannot be scheduled or the executor fails (a timeout, a panicking tile);
/// a wrong result is not an error but a [`HostCheck`] that did not pass.
pub fn host_check(shape: &MoeShape, profile: &CostProfile, seed: u64) -> Result<HostCheck, String> {
    let tf = shape.taskflow()?;
    let cost = TaskflowCost::new(&tf, profile.clone());
    let compiled = hpmoe_core::compile(&tf, &cost).map_err(|d| d.render(&tf.sources))?;
    let exec = Executor::new(&tf, &compiled.table, &OpImpls::builtin()).map_err(|e| e.to_string())?;
    let inputs = moe_inputs(shape, seed);
    let out = exec.run(&inputs, &RunOptions::default()).map_err(|e| e.to_string())?;
    let reference = moe_reference(shape, &inputs)?;
    let mut check = HostCheck { ranks: shape.ranks, elements: 0, max_abs_err: 0.0, first_difference: None };
    for (rank, want) in (0..shape.ranks).zip(&reference) {
        let got = out.snapshot.get(rank, "out").ok_or_else(|| format!("the run has no `out` on rank {rank}"))?;
        if let Some(d) = got.first_difference(want) {
            check.first_difference.get_or_insert_with(|| format!("rank {rank} out: {d}"));
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
