//! The custom variant: the main job's DeepSeek-V3 MoE-FFN layer plus DeepSeek-V3's shared
//! expert, run on each rank's own tokens while the dispatch puts are in flight, written with
//! hpmoe's public API and one user-defined op (`hpmoe_examples::shared_expert`) — no change
//! to hpmoe.
//!
//! ```sh
//! cargo run --release -p hpmoe-examples --example moe_ffn_shared [-- --out DIR] [--tokens N] [--json] [--json-tables]
//!                                                                 [--profile ascend_a3_die|ascend910b|FILE.toml|FILE.json]
//! ```
//!
//! It prints the same table as `moe_ffn` (same options, same `--json` keys), measured the
//! same way: for EP 8, 16, 32, 64 and 128 at 4096 tokens per rank, the taskflow simulated against
//! hpmoe's kernel-by-kernel baseline of the *same* work (which runs the shared expert as three
//! more whole-device kernels), with the lower bound beside it. Each EP's kernel goes to
//! `target/hpmoe/moe_ffn_shared/epN/` (`moe_ffn_shared.cpp`, `moe_ffn_shared_schedule.h`,
//! `moe_ffn_shared_schedule.bin`, `moe_ffn_shared_flags.bin`; a Chrome trace at EP 8); the
//! runtime headers and the user op's device function (`shared_expert_ops.h`) go to
//! `include/` there.
//!
//! A third table says what the shared expert adds: each EP's makespans and bound minus those
//! of the routed layer alone (simulated again here, as `moe_ffn` does), and on rank 0 when
//! the first shared-expert tile starts and which share of their core time falls before the
//! last dispatch put is out. The layer is AIC-bound, so that share is small: see
//! `hpmoe_examples::shared_expert` for how to read it.
//!
//! The host check runs `SharedMoe::tiny(2)` and `tiny(4)` (the routed `MoeShape::tiny` plus
//! a shared expert) on the host executor, with the user op's Rust reference body, and compares
//! `out` bitwise with a naive sequential reference written with plain loops
//! (`shared_expert::reference`); the job exits with status 1 if it fails.

use hpmoe_examples::report::{self, EmulatorConfig, ExtraTable, HostConfig, Job};
use hpmoe_examples::shared_expert::{self, SharedMoe, effect, op};
use std::process::ExitCode;

/// The scaled-down layers the host executor runs.
const HOST_CHECK_RANKS: [u32; 2] = [2, 4];

fn main() -> ExitCode {
    let taskflow = |ep, tokens| SharedMoe::deepseek_v3(ep, tokens).taskflow();
    let effect_row = |run: &report::EpRun<'_>| effect::row(&SharedMoe::deepseek_v3(run.ep, run.tokens).routed, run);
    let host_checks = HOST_CHECK_RANKS
        .iter()
        .map(|&ranks| HostConfig {
            name: format!("tiny({ranks})+shared"),
            description: format!("SharedMoe::tiny({ranks})"),
            run: Box::new(move |profile| shared_expert::host_check(&SharedMoe::tiny(ranks), profile, 42)),
        })
        .collect();
    report::main(&Job {
        title: "DeepSeek-V3 MoE-FFN layer + shared expert overlapped with dispatch",
        folder: "moe_ffn_shared",
        taskflow: &taskflow,
        emit: op::emit_options(),
        headers: &[(op::DEVICE_HEADER_NAME, op::DEVICE_HEADER)],
        notes: &[
            "The user op `weighted_sum_shared` (the final sum, fused with the shared expert's output) is",
            "emitted as a call of shared_expert_ops::WeightedSumShared from include/shared_expert_ops.h.",
        ],
        routed: None,
        variant: None,
        training: None,
        readme_timelines: false,
        extra: Some(ExtraTable {
            progress: "simulating the routed layer alone",
            header: &effect::HEADER,
            row: &effect_row,
            footer: &effect::FOOTER,
        }),
        host_checks,
        emulator_checks: vec![EmulatorConfig {
            name: "tiny(2)+shared".into(),
            description: "SharedMoe::tiny(2)".into(),
            run: Box::new(|profile| shared_expert::emulator_check(&SharedMoe::tiny(2), profile, 42)),
        }],
    })
}
