//! The backend on a fixed sample of the random taskflows every hpmoe property test draws from
//! (`hpmoe_core::testing`; those with a fold stand-in, which has no device code, are passed over):
//! each kernel of the sample is emitted from its plan and passes `g++ -fsyntax-only -Wall -Wextra
//! -Werror` against the declaration-only devkit (kernel and launcher), and the first few run on
//! the CPU emulation of the device API, ending with every tensor of every rank bitwise equal to
//! the host executor's run of the same table and flag plan. Skipped, with a note, where g++ is
//! missing. `HPMOE_RANDOM_KERNELS=S,E` checks `S` kernels and emulates `E` of them instead (a
//! deeper run by hand).

use crate::common;

use common::{emulator_options, gxx, temp_dir};
use hpmoe_ascendc::emulator::Emulation;
use hpmoe_ascendc::{KernelFiles, emit};
use hpmoe_core::Compiled;
use hpmoe_core::model::Taskflow;
use hpmoe_core::testing::{TaskflowSpec, has_folds, taskflow_spec};
use hpmoe_host::exec::{Executor, RunOptions};
use hpmoe_host::testing;
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::TestRunner;

/// Kernels syntax-checked.
const SAMPLE: usize = 16;
/// Of those, kernels run on the emulator (each costs a g++ build of a few seconds the first time,
/// once the emulator archive is cached; nothing after).
const EMULATED: usize = 5;

/// `(kernels syntax-checked, kernels emulated)`: `HPMOE_RANDOM_KERNELS=S,E`, else the defaults.
fn sample_size() -> (usize, usize) {
    let Ok(v) = std::env::var("HPMOE_RANDOM_KERNELS") else { return (SAMPLE, EMULATED) };
    let parsed = v.split_once(',').and_then(|(s, e)| Some((s.trim().parse().ok()?, e.trim().parse().ok()?)));
    parsed.unwrap_or_else(|| panic!("HPMOE_RANDOM_KERNELS={v:?}: expected `S,E`, e.g. `200,50`"))
}

/// The sample: the first [`sample_size`] taskflows without folds of the generator's deterministic
/// stream, each named after its place in the sample, with its plan and kernel.
fn sample() -> Vec<(TaskflowSpec, Taskflow, Compiled, KernelFiles)> {
    let mut runner = TestRunner::deterministic();
    let strategy = taskflow_spec(8);
    let specs =
        std::iter::repeat_with(|| strategy.new_tree(&mut runner).expect("the generator never rejects").current());
    specs
        .map(|spec| (spec.taskflow(), spec))
        .filter(|(tf, _)| !has_folds(tf))
        .take(sample_size().0)
        .enumerate()
        .map(|(k, (mut tf, spec))| {
            tf.name = format!("random_{k}");
            let compiled = hpmoe_core::plan(&tf).unwrap_or_else(|d| panic!("{}", d.render(&tf.sources)));
            let kernel = emit(&tf, &compiled).unwrap_or_else(|e| panic!("{}: {e}", tf.name));
            (spec, tf, compiled, kernel)
        })
        .collect()
}

#[test]
fn a_sample_of_random_kernels_pass_the_syntax_check() {
    let sample = sample();
    let count = |f: &dyn Fn(&TaskflowSpec, &Taskflow, &Compiled) -> bool| {
        sample.iter().filter(|(spec, tf, c, _)| f(spec, tf, c)).count()
    };
    eprintln!(
        "random kernels: {} emitted ({} on 2-4 ranks, {} with puts across ranks beyond the guards' counts, {} with \
         guards, {} with whole-tensor weighted sums, {} with hardware flags, {} with chains inside a family)",
        sample.len(),
        count(&|spec, _, _| spec.ranks > 1),
        count(&|spec, _, _| (0..spec.families.len()).any(|i| spec.puts(i))),
        count(&|_, tf, _| tf.families.iter().any(|f| f.guard.is_some())),
        count(&|_, tf, _| tf.families.iter().flat_map(|f| &f.body).any(|c| c.op == "weighted_accumulate")),
        count(&|_, _, c| !c.flags.edges.is_empty()),
        count(&|_, tf, _| tf.families.iter().any(|f| f.after.iter().any(|a| a.family == f.name))),
    );
    let Some(check) = gxx() else { return };
    let root = temp_dir("random-syntax");
    for (_, tf, _, kernel) in &sample {
        let dir = root.join(&tf.name);
        std::fs::create_dir_all(&dir).unwrap();
        kernel.write_to(&dir).unwrap();
        let check = check.clone().include(&dir);
        check.run(&dir.join(format!("{}.cpp", tf.name))).unwrap_or_else(|e| panic!("{}.cpp:\n{e}", tf.name));
        let decl = hpmoe_ascendc::check::aclrtlaunch_decl(&tf.name, common::kernel_arg_count(&kernel.cpp, &tf.name));
        std::fs::write(dir.join(format!("aclrtlaunch_{}.h", tf.name)), decl).unwrap();
        let launcher = dir.join(format!("{}_launch.cpp", tf.name));
        check.run(&launcher).unwrap_or_else(|e| panic!("{}_launch.cpp:\n{e}", tf.name));
    }
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn random_kernels_on_the_emulator_equal_the_host_executor() {
    let Some(options) = emulator_options() else { return };
    for (seed, (spec, tf, compiled, kernel)) in (0u64..).zip(sample().into_iter().take(sample_size().1)) {
        let inputs = testing::inputs(&tf, seed);
        let emulation = Emulation::build(&kernel, &options).unwrap_or_else(|e| panic!("{}: {e}", tf.name));
        let run = emulation.run(&tf, &inputs).unwrap_or_else(|e| panic!("{} ({spec:?}): {e}", tf.name));
        let exec = Executor::for_compiled(&tf, &compiled, &testing::op_impls()).unwrap();
        let host = exec.run(&inputs, &RunOptions::default()).unwrap_or_else(|e| panic!("{}: {e}", tf.name));
        if let Some(d) = run.first_difference(&host.snapshot) {
            panic!("{} ({spec:?}): the emulated kernel and the host executor differ: {d}", tf.name);
        }
        eprintln!(
            "{}: {} rank{}, {} families, {} instances ({} skipped), {} flag-carried dependencies: equal",
            tf.name,
            spec.ranks,
            if spec.ranks == 1 { "" } else { "s" },
            tf.families.len(),
            compiled.expanded.nodes(),
            host.stats.skipped,
            compiled.flags.edges.len()
        );
    }
}
