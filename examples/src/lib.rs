//! Runnable examples of hpmoe live in `examples/examples/`; this library holds what they
//! share with each other and with the tests of this package:
//!
//! - [`aic_load`]: how a simulated run loaded the AIC cores, and its busiest rank;
//! - [`critical_chain`]: back from a simulated run's last tile, the stretches of tiles one core
//!   ran back to back and the signals that released them (`network_breakdown`);
//! - [`cli`]: the examples' command-line options;
//! - [`error`]: why an example could not run ([`ExampleError`]);
//! - [`priced`]: one pass of the DeepSeek-V3 layer with the cost models its plan and its
//!   simulated run use, for the diagnostic examples (`network_breakdown`, `ratio_sweep`);
//! - [`report`]: the per-EP measurement loop and the results table (text and JSON) that the
//!   main job (`moe_ffn`) and the custom variant (`moe_ffn_shared`) both print;
//! - [`host_check`]: run a taskflow's schedule on the host executor and compare one output
//!   bitwise with a reference; [`moe_host_check`] does it for the main job's layer,
//!   [`moe_backward_host_check`] for its backward and training step;
//! - [`emulator_check`]: the same comparison for the generated AscendC kernel, run on the CPU
//!   emulation of the device API; [`moe_emulator_check`] and [`moe_backward_emulator_check`]
//!   for the main job's layers;
//! - [`dsl_check`]: whether a MoE-FFN taskflow written in the DSL is the builder's, table for
//!   table (the DSL backward and training-step examples and their tests);
//! - [`shared_expert`]: the custom variant — DeepSeek-V3's shared expert overlapped with
//!   dispatch, built on `MoeShape::taskflow()` with a user-defined op and no change to hpmoe.

#![warn(missing_docs)]

pub mod aic_load;
pub mod cli;
pub mod critical_chain;
pub mod dsl_check;
pub mod error;
pub mod priced;
pub mod report;
pub mod shared_expert;

pub use error::ExampleError;

use hpmoe_core::cost::CostProfile;
use hpmoe_core::model::Taskflow;
use hpmoe_host::exec::moe_backward_reference::{MoeGradients, moe_backward_inputs, moe_backward_reference};
use hpmoe_host::exec::moe_reference::{moe_inputs, moe_reference};
use hpmoe_host::exec::{Executor, HostTensor, Inputs, OpImpls, RunOptions};
use hpmoe_host::moe::{MoeShape, Pass};

/// The taskflow's one plan ([`hpmoe_core::plan_with`]) under the cost profile `profile`: the table
/// and flag plan the kernel files, the host executor and the emulator all use.
fn plan(tf: &Taskflow, profile: &CostProfile) -> Result<hpmoe_core::Compiled, ExampleError> {
    let options = hpmoe_core::PlanOptions { cost_profile: Some(profile.clone()), ..Default::default() };
    hpmoe_core::plan_with(tf, &options).map_err(|d| ExampleError::plan(tf, d))
}

/// `expected` holds one tensor per rank of `tf`.
fn per_rank(tf: &Taskflow, output: &str, expected: &[HostTensor]) -> Result<(), ExampleError> {
    let ranks = tf.profile.ranks;
    if expected.len() == ranks as usize {
        Ok(())
    } else {
        Err(ExampleError::ExpectedPerRank { output: output.into(), got: expected.len(), ranks })
    }
}

/// What a host check compared.
#[derive(Clone, Debug, PartialEq)]
pub struct HostCheck {
    /// Ranks the check ran on.
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
    /// Whether every output element equalled the reference bitwise.
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
) -> Result<HostCheck, ExampleError> {
    host_check_outputs(tf, impls, profile, inputs, &[(output, expected)])
}

/// [`host_check`] of several outputs of one run: each `(output, expected)` compared bitwise on
/// every rank; the first difference found (in the order given) is the check's.
///
/// # Errors
/// As [`host_check`].
pub fn host_check_outputs(
    tf: &Taskflow,
    impls: &OpImpls,
    profile: &CostProfile,
    inputs: &Inputs,
    expected: &[(&str, &[HostTensor])],
) -> Result<HostCheck, ExampleError> {
    let ranks = tf.profile.ranks;
    for (output, want) in expected {
        per_rank(tf, output, want)?;
    }
    let compiled = plan(tf, profile)?;
    let execute = |error| ExampleError::Execute { taskflow: tf.name.clone(), error };
    let exec = Executor::for_compiled(tf, &compiled, impls).map_err(execute)?;
    let out = exec.run(inputs, &RunOptions::default()).map_err(execute)?;
    let (tiles, skipped) = (out.stats.tiles, out.stats.skipped);
    let mut check = HostCheck { ranks, elements: 0, max_abs_err: 0.0, first_difference: None, tiles, skipped };
    for (output, want) in expected {
        compare(&mut check, output, want, |rank| out.snapshot.get(rank, output))?;
    }
    Ok(check)
}

/// Schedules `tf` under `profile` as [`host_check`] does, emits its AscendC kernel with `emit`,
/// runs the kernel on the CPU emulation of the AscendC and SHMEM device API
/// ([`hpmoe_ascendc::emulator`]; user ops' headers from `include_dirs`) on `inputs`, and compares
/// tensor `output` of each rank bitwise with `expected[rank]`. `Ok(None)` when no C++ compiler is
/// installed (the check cannot run; say so rather than pass or fail).
///
/// # Errors
/// When the taskflow cannot be scheduled or emitted, the kernel does not compile, or the launch
/// does not complete (the emulator's findings and the kernel's diagnostics, in the message).
pub fn emulator_check(
    tf: &Taskflow,
    profile: &CostProfile,
    emit: (&hpmoe_ascendc::EmitOptions, &[std::path::PathBuf]),
    inputs: &Inputs,
    output: &str,
    expected: &[HostTensor],
) -> Result<Option<HostCheck>, ExampleError> {
    emulator_check_outputs(tf, profile, emit, inputs, &[(output, expected)])
}

/// [`emulator_check`] of several outputs of one launch, as [`host_check_outputs`].
///
/// # Errors
/// As [`emulator_check`].
pub fn emulator_check_outputs(
    tf: &Taskflow,
    profile: &CostProfile,
    (emit, include_dirs): (&hpmoe_ascendc::EmitOptions, &[std::path::PathBuf]),
    inputs: &Inputs,
    expected: &[(&str, &[HostTensor])],
) -> Result<Option<HostCheck>, ExampleError> {
    let options = hpmoe_ascendc::EmulateOptions { include_dirs: include_dirs.to_vec(), ..Default::default() };
    if !hpmoe_ascendc::emulator::compiler_available(&options) {
        return Ok(None);
    }
    let ranks = tf.profile.ranks;
    for (output, want) in expected {
        per_rank(tf, output, want)?;
    }
    let compiled = plan(tf, profile)?;
    let kernel = hpmoe_ascendc::emit_with(tf, &compiled, emit)
        .map_err(|errors| ExampleError::Emit { taskflow: tf.name.clone(), errors })?;
    let run = hpmoe_ascendc::emulate(tf, &kernel, inputs, &options)
        .map_err(|error| ExampleError::Emulate { taskflow: tf.name.clone(), error })?;
    let mut check = HostCheck { ranks, elements: 0, max_abs_err: 0.0, first_difference: None, tiles: 0, skipped: 0 };
    for (output, want) in expected {
        compare(&mut check, output, want, |rank| run.get(rank, output))?;
    }
    Ok(Some(check))
}

/// Adds the comparison of `output` on every rank (`got(rank)`) with `expected` to `check`.
fn compare<'a>(
    check: &mut HostCheck,
    output: &str,
    expected: &[HostTensor],
    got: impl Fn(u32) -> Option<&'a HostTensor>,
) -> Result<(), ExampleError> {
    for (rank, want) in (0..check.ranks).zip(expected) {
        let got = got(rank).ok_or_else(|| ExampleError::MissingOutput { output: output.into(), rank })?;
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
    Ok(())
}

/// The main job's emulator check: `shape`'s MoE layer's generated kernel on the CPU emulation,
/// on [`moe_inputs`] data, its `out` against [`moe_reference`] bitwise (see [`emulator_check`]).
///
/// # Errors
/// As [`emulator_check`], and when the shape is invalid.
pub fn moe_emulator_check(
    shape: &MoeShape,
    profile: &CostProfile,
    seed: u64,
) -> Result<Option<HostCheck>, ExampleError> {
    let tf = shape.taskflow().map_err(ExampleError::Shape)?;
    let inputs = moe_inputs(shape, seed);
    let reference = moe_reference(shape, &inputs).map_err(ExampleError::Reference)?;
    emulator_check(&tf, profile, (&Default::default(), &[]), &inputs, "out", &reference)
}

/// The main job's host check: `shape`'s MoE layer with the built-in ops on [`moe_inputs`]
/// data, its `out` against [`moe_reference`] (the layer computed with plain loops). Either
/// routing: under natural routing (`MoeShape::tiny_natural`) the data follow
/// `shape.route(seed)`, and the blocks its counts leave empty are skipped ([`HostCheck::skipped`]).
///
/// # Errors
/// As [`host_check`], and when the shape is invalid.
pub fn moe_host_check(shape: &MoeShape, profile: &CostProfile, seed: u64) -> Result<HostCheck, ExampleError> {
    let tf = shape.taskflow().map_err(ExampleError::Shape)?;
    let inputs = moe_inputs(shape, seed);
    let reference = moe_reference(shape, &inputs).map_err(ExampleError::Reference)?;
    host_check(&tf, &OpImpls::builtin(), profile, &inputs, "out", &reference)
}

/// Per output name, what it must equal on every rank.
type Expected = Vec<(&'static str, Vec<HostTensor>)>;

/// The backward's (or the training step's) taskflow of `shape`, its inputs
/// ([`moe_backward_inputs`]: the forward's, the saved activations and `dout`, from `seed`) and
/// what each output must equal on every rank: the gradients of [`moe_backward_reference`] and,
/// for the training step, the forward's `out` from [`moe_reference`].
fn backward_case(shape: &MoeShape, pass: Pass, seed: u64) -> Result<(Taskflow, Inputs, Expected), ExampleError> {
    if pass == Pass::Forward {
        return Err(ExampleError::NotABackwardPass(pass));
    }
    let tf = shape.pass_taskflow(pass).map_err(ExampleError::Shape)?;
    let inputs = moe_backward_inputs(shape, seed).map_err(ExampleError::Reference)?;
    let grads = moe_backward_reference(shape, &inputs).map_err(ExampleError::Reference)?;
    let mut expected: Expected = MoeGradients::NAMES
        .iter()
        .map(|&name| (name, grads.iter().filter_map(|g| g.get(name).cloned()).collect()))
        .collect();
    if pass == Pass::TrainingStep {
        expected.push(("out", moe_reference(shape, &inputs).map_err(ExampleError::Reference)?));
    }
    Ok((tf, inputs, expected))
}

/// The main job's host check of the backward ([`Pass::Backward`]) or the training step
/// ([`Pass::TrainingStep`]) of `shape` (balanced routing): the executor's `dx`, `dw13`, `dw2`
/// and `d_weights` on every rank against [`moe_backward_reference`] (plain loops) bitwise, and
/// the training step's `out` against [`moe_reference`].
///
/// # Errors
/// As [`host_check`], when the shape has no backward, or for [`Pass::Forward`] (use
/// [`moe_host_check`]).
pub fn moe_backward_host_check(
    shape: &MoeShape,
    pass: Pass,
    profile: &CostProfile,
    seed: u64,
) -> Result<HostCheck, ExampleError> {
    let (tf, inputs, expected) = backward_case(shape, pass, seed)?;
    let expected: Vec<(&str, &[HostTensor])> = expected.iter().map(|(n, t)| (*n, t.as_slice())).collect();
    host_check_outputs(&tf, &OpImpls::builtin(), profile, &inputs, &expected)
}

/// [`moe_backward_host_check`] for the generated kernel on the CPU emulation (see
/// [`emulator_check`]); `Ok(None)` where no C++ compiler is installed.
///
/// # Errors
/// As [`emulator_check`] and [`moe_backward_host_check`].
pub fn moe_backward_emulator_check(
    shape: &MoeShape,
    pass: Pass,
    profile: &CostProfile,
    seed: u64,
) -> Result<Option<HostCheck>, ExampleError> {
    let (tf, inputs, expected) = backward_case(shape, pass, seed)?;
    let expected: Vec<(&str, &[HostTensor])> = expected.iter().map(|(n, t)| (*n, t.as_slice())).collect();
    emulator_check_outputs(&tf, profile, (&Default::default(), &[]), &inputs, &expected)
}
