//! The main job: schedule the DeepSeek-V3 routed-expert MoE-FFN layer (H 7168, I 2048,
//! 256 experts, top-8, 4096 tokens per rank) at EP 8, 16, 32, 64 and 128 — its forward, and its
//! backward and training step at EP 8–64 — simulate each schedule against the kernel-by-kernel
//! baseline, write each EP's AscendC kernels and schedule tables (and Chrome traces and SVG
//! timelines at EP 8), run the scaled-down layers on the host executor and their generated
//! kernels on the CPU emulator against plain-loop references, and print the results.
//!
//! ```sh
//! cargo run --release -p hpmoe-examples --example moe_ffn [-- --out DIR] [--tokens N] [--json] [--json-tables]
//!                                                          [--profile ascend_a3_die|ascend910b|FILE.toml|FILE.json]
//!                                                          [--routed-all] [--training-all]
//! ```
//!
//! Each EP's folder gets the kernel as `hpmoe_ascendc::emit` writes it: `moe_ffn.cpp`,
//! `moe_ffn_schedule.h` (the table's constants and the kernel's launch section),
//! `moe_ffn_schedule.bin` (the table the kernel walks: dependencies the hardware flag carries
//! are left out of it) and `moe_ffn_flags.bin`; the runtime headers the sources include are
//! written once to `include/`. `--json-tables` adds the table as JSON (large: about 350
//! bytes per tile instance). EP 8 also gets `moe_ffn_trace.json`, the simulated taskflow run
//! as a Chrome/Perfetto trace (only EP 8, to keep the run short and the folder small).
//!
//! Times come from the cost-model simulator (`hpmoe_host::sim`) under the chosen cost
//! profile (default `ascend_a3_die`; its figures are sourced in hardware.md and several are
//! guesses, see `hpmoe_core::cost::GUESSES` and the `sensitivity` example). `bound_us` is
//! a true lower bound under the same costs (longest path, each core kind's work spread
//! over its cores, the busiest rank's bytes at its injection, ejection, cross-server and HBM
//! bandwidths). The network's bandwidths are fitted to the measured A3 all-to-all table,
//! which the job prints beside the simulated bandwidth. The baseline runs the same
//! tiles as one whole-device kernel per step (dispatch, GMM1, SwiGLU, GMM2, combine,
//! weighted sum). Exposed communication is measured the same way for both runs: time on the
//! busiest rank with a put in flight and no tile computing.
//!
//! The host check runs `MoeShape::tiny(2)` and `tiny(4)` and their natural-routing versions
//! `tiny_natural(2)` and `tiny_natural(4)`, each also with INT8 dispatch (not the DeepSeek
//! shape) with real data on CPU
//! threads and compares the output bitwise with `moe_reference`; the job exits with status 1
//! if it fails. Progress goes to stderr, results to stdout; `--json` prints the
//! results as one JSON array (one object per EP) instead of the tables.
//!
//! Natural routing: the same layer with experts chosen at run time
//! (`MoeShape::deepseek_v3_natural`: capacity padding, guarded tiles that skip their work past
//! the run-time count), scheduled on the expected activity of 8 sampled routings and simulated
//! under routing seed 42, at EP 8 and 16 (every EP with `--routed-all`); its kernel is written
//! beside the balanced one (`moe_ffn_natural.cpp`), and its figures go to a second table and to
//! each EP's JSON object under `natural`.
//!
//! INT8 dispatch: the same balanced layer with every dispatched row quantised to INT8 with a
//! per-row FP32 scale before the put and dequantised per received block before GMM1
//! (`MoeShape::with_dispatch(DispatchPrecision::Int8)`, as the measured A3 systems dispatch),
//! at every EP, in a table of its own and under `int8` in each EP's JSON object; its kernel is
//! `moe_ffn_int8.cpp` beside the others. The host and emulator checks run it at the tiny shapes.
//!
//! Backward and training step (issue 12): `MoeShape::pass_taskflow(Pass::Backward |
//! Pass::TrainingStep)` of the same layer, each against its own kernel-by-kernel baseline and
//! bound, at EP 8–64 (every EP with `--training-all`; EP 128's backward and training step cost
//! more CPU than EP 8–64's together), in a table of their own and under `backward` and
//! `training_step` in each EP's JSON object; their kernels (`moe_ffn_backward.cpp`,
//! `moe_ffn_training_step.cpp`) go beside the others. They are measured on a second thread
//! (which then simulates the all-to-all alone and runs the emulator checks) while the first measures the forward sweep. The host
//! checks run `tiny(2)`'s and `tiny(4)`'s backward and training step against
//! `moe_backward_reference` (and the step's `out` against `moe_reference`), the emulator checks
//! `tiny(2)`'s kernels. At EP 8 the job draws the forward's and the training step's SVG
//! timelines; run with the default tokens and profile it refreshes the README's copies in
//! `examples/assets/`.
//!
//! The loop over EPs and the printing live in `hpmoe_examples::report`, shared with the custom
//! variant `moe_ffn_shared`; this file says which layer and which host checks.

use hpmoe_examples::report::{
    self, EmulatorConfig, HostConfig, Job, PLAN_SAMPLES, ROUTING_SEED, Routed, RoutedLayer, Training, Variant,
};
use hpmoe_examples::{
    ExampleError, moe_backward_emulator_check, moe_backward_host_check, moe_emulator_check, moe_host_check,
};
use hpmoe_host::moe::{DispatchPrecision, MoeShape, Pass};
use std::process::ExitCode;

/// The scaled-down layers the host executor runs.
const HOST_CHECK_RANKS: [u32; 2] = [2, 4];

/// DeepSeek-V3 with natural routing: the taskflow, the plan from sampled routings, and the
/// run under routing [`ROUTING_SEED`].
fn natural(ep: u32, tokens: u64) -> Result<RoutedLayer, ExampleError> {
    RoutedLayer::natural(&MoeShape::deepseek_v3_natural(ep, tokens), ROUTING_SEED, PLAN_SAMPLES)
}

/// The scaled-down layers of a check at `ranks`: balanced and natural routing, each with BF16
/// and INT8 dispatch, as (short name, description, shape).
fn tiny_layers(ranks: u32) -> [(String, String, MoeShape); 4] {
    let int8 = |s: MoeShape| s.with_dispatch(DispatchPrecision::Int8);
    let dispatch = ".with_dispatch(Int8)";
    [
        (format!("tiny({ranks})"), format!("MoeShape::tiny({ranks})"), MoeShape::tiny(ranks)),
        (format!("tiny_natural({ranks})"), format!("MoeShape::tiny_natural({ranks})"), MoeShape::tiny_natural(ranks)),
        (format!("tiny_int8({ranks})"), format!("MoeShape::tiny({ranks}){dispatch}"), int8(MoeShape::tiny(ranks))),
        (
            format!("tiny_natural_int8({ranks})"),
            format!("MoeShape::tiny_natural({ranks}){dispatch}"),
            int8(MoeShape::tiny_natural(ranks)),
        ),
    ]
}

/// The backward and the training step of the scaled-down layer at `ranks`, as (short name,
/// description, shape, pass).
fn tiny_passes(ranks: u32) -> [(String, String, MoeShape, Pass); 2] {
    [Pass::Backward, Pass::TrainingStep].map(|pass| {
        let name = format!("tiny({ranks}) {}", pass.name());
        (name, format!("MoeShape::tiny({ranks}).pass_taskflow(Pass::{pass:?})"), MoeShape::tiny(ranks), pass)
    })
}

fn main() -> ExitCode {
    let taskflow = |ep, tokens| MoeShape::deepseek_v3(ep, tokens).taskflow().map_err(ExampleError::Shape);
    let pass = |pass, ep, tokens| MoeShape::deepseek_v3(ep, tokens).pass_taskflow(pass).map_err(ExampleError::Shape);
    let int8 = |ep, tokens| {
        MoeShape::deepseek_v3(ep, tokens).with_dispatch(DispatchPrecision::Int8).taskflow().map_err(ExampleError::Shape)
    };
    let host_checks = HOST_CHECK_RANKS
        .iter()
        .flat_map(|&ranks| {
            tiny_layers(ranks).map(|(name, description, shape)| HostConfig {
                name,
                description,
                run: Box::new(move |profile| moe_host_check(&shape, profile, ROUTING_SEED)),
            })
        })
        .chain(HOST_CHECK_RANKS.iter().flat_map(|&ranks| {
            tiny_passes(ranks).map(|(name, description, shape, pass)| HostConfig {
                name,
                description,
                run: Box::new(move |profile| moe_backward_host_check(&shape, pass, profile, ROUTING_SEED)),
            })
        }))
        .collect();
    let emulator_checks = tiny_layers(2)
        .map(|(name, description, shape)| EmulatorConfig {
            name,
            description,
            run: Box::new(move |profile| moe_emulator_check(&shape, profile, ROUTING_SEED)),
        })
        .into_iter()
        .chain(tiny_passes(2).map(|(name, description, shape, pass)| EmulatorConfig {
            name,
            description,
            run: Box::new(move |profile| moe_backward_emulator_check(&shape, pass, profile, ROUTING_SEED)),
        }))
        .collect();
    report::main(&Job {
        title: "DeepSeek-V3 MoE-FFN layer",
        folder: "moe_ffn",
        taskflow: &taskflow,
        emit: Default::default(),
        headers: &[],
        notes: &[],
        extra: None,
        routed: Some(Routed {
            name: "natural",
            header: &[
                "natural routing (MoeShape::deepseek_v3_natural): experts drawn per token with log-normal popularity,",
                "one 192-row block per slot of 1.5x-average capacity per (source rank, expert); simulated run: routing seed 42,",
                "schedule planned on 8 other routings of the same distribution (never on the run's); EP 8 and 16",
                "by default, every EP with --routed-all:",
            ],
            layer: &natural,
            eps: &[8, 16],
        }),
        variant: Some(Variant {
            name: "int8",
            header: &[
                "INT8 dispatch (MoeShape::with_dispatch(DispatchPrecision::Int8)): each row quantised to INT8 with a per-row",
                "FP32 scale on the AIV before the put (H + 4 bytes a row instead of 2H), dequantised to BF16 per received",
                "block on the AIV before GMM1 (the cube multiplies INT8 x INT8 or BF16 x BF16, the weights are BF16):",
            ],
            taskflow: &int8,
        }),
        training: Some(Training {
            header: &[
                "backward and training step (MoeShape::pass_taskflow; balanced routing, BF16): the backward from the",
                "output gradient and the forward's saved activations to dX, dW13, dW2 and the routing weights' gradient,",
                "each expert's weight gradients summed in one tile per column block; the training step: the forward",
                "and the backward as one taskflow and one schedule, the backward starting on a rank once its output is",
                "complete; EP 8-64 by default, every EP with --training-all (EP 128 costs more than the rest):",
            ],
            taskflow: &pass,
            eps: &[8, 16, 32, 64],
        }),
        readme_timelines: true,
        host_checks,
        emulator_checks,
    })
}
