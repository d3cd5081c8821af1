//! Compile a test taskflow, emit its kernel, and run it on the emulator against the host
//! executor (shared by the ordered-accumulation and backward-op tests).

use hpmoe_ascendc::emulator::{EmulateError, Emulation};
use hpmoe_ascendc::{KernelFiles, emit};
use hpmoe_core::model::Taskflow;
use hpmoe_core::schedule::SimpleCost;
use hpmoe_host::exec::{Executor, Inputs, OpImpls, RunOptions};

/// The taskflow compiled with the simple cost model, and its kernel.
pub fn kernel_of(tf: &Taskflow) -> (hpmoe_core::Compiled, KernelFiles) {
    let compiled = hpmoe_core::compile_with(tf, &SimpleCost::default(), &hpmoe_core::CompileOptions::default())
        .unwrap_or_else(|d| panic!("{}", d.render(&tf.sources)));
    let kernel = emit(tf, &compiled).unwrap_or_else(|e| panic!("{e}"));
    (compiled, kernel)
}

/// Runs `kernel` on the emulator with inputs drawn from `seed`; every tensor of every rank must
/// equal the host executor's run (`Ok` without running where g++ is missing).
pub fn equals_executor(
    tf: &Taskflow,
    compiled: &hpmoe_core::Compiled,
    kernel: &KernelFiles,
    seed: u64,
) -> Result<(), EmulateError> {
    equals_executor_on(tf, compiled, kernel, &Inputs::random(tf, seed))
}

/// [`equals_executor`] on the given `inputs`.
pub fn equals_executor_on(
    tf: &Taskflow,
    compiled: &hpmoe_core::Compiled,
    kernel: &KernelFiles,
    inputs: &Inputs,
) -> Result<(), EmulateError> {
    let Some(options) = super::emulator_options() else { return Ok(()) };
    let run = Emulation::build(kernel, &options)?.run(tf, inputs)?;
    let host = Executor::for_compiled(tf, compiled, &OpImpls::builtin()).unwrap();
    let host = host.run(inputs, &RunOptions::default()).unwrap();
    if let Some(d) = run.first_difference(&host.snapshot) {
        panic!("{}: the emulated kernel and the host executor differ: {d}", tf.name);
    }
    Ok(())
}
