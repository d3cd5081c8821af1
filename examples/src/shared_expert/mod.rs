//! The custom variant: DeepSeek-V3's **shared expert overlapped with dispatch**, written as a
//! user of hpmoe — on top of [`MoeShape::taskflow`], with one user-defined op, and no change
//! to hpmoe.
//!
//! DeepSeek-V3's MoE layer adds to the top-8 routed experts one *shared* expert that every
//! token goes through: a dense FFN of the routed experts' size (H 7168 → 2 × 2048 gate+up →
//! SwiGLU → 2048 → H), BF16, with its weights replicated on every rank. It needs no
//! communication, so each rank runs it on its own tokens while its dispatch puts are in
//! flight and the routed GMMs wait for rows to land.
//!
//! # The taskflow ([`SharedMoe::taskflow`])
//!
//! `MoeShape::taskflow()` (dispatch → GMM1 → SwiGLU → GMM2 → combine → weighted sum), with its
//! last family, the weighted sum, replaced by:
//!
//! - `shared_gmm1` (AIC, grid `m × n`): `shared_h[m-block, n-block] = x[m-block] ·
//!   shared_w13[:, n-block]`, the same `[gate | up]` column blocks as GMM1;
//! - `shared_swiglu` (AIV): `shared_act = silu(gate) · up` per block;
//! - `shared_gmm2` (AIC): `shared_y = shared_act · shared_w2`;
//! - `weighted_sum_shared` (AIV, one tile per `sum_rows` tokens): the user op
//!   [`op::OP_NAME`], `out[t] = shared_y[t] + Σ_c topk_weights[t, c] · back[t·k + c]`, summed
//!   in FP32 from `shared_y[t]` for `c = 0, 1, …`, rounded once to BF16.
//!
//! The shared families read only the new input `x` (the rank's tokens in token order: `xs`
//! is the routed *send* buffer, `k` copies of each token in slot order) and their own
//! weights, so they depend on nothing but the input: the scheduler gives them to AIC/AIV
//! cores that would otherwise wait for dispatch. Only the final sum joins the two paths, and
//! it waits for exactly the combine puts and the shared GMM2 tiles carrying its tokens.
//!
//! Fusing the shared output into the weighted sum is why the op is a user op: the built-ins
//! could only add it with a second op (`accumulate`) after the weighted sum, which rounds
//! `out` to BF16 twice and passes over it twice.
//!
//! The kernel-by-kernel baseline the table compares against is hpmoe's, derived from this
//! taskflow: one whole-device kernel per family, so the shared expert's three kernels run
//! after combine, not beside dispatch. (A framework may put the shared expert on a second
//! stream to overlap it with the all-to-all; the baseline does not model that.)
//!
//! # What it buys (simulated, DeepSeek-V3, 4096 tokens per rank)
//!
//! The layer is bound by AIC work, and the fused routed layer already keeps the AICs ~98%
//! busy *during* dispatch (GMM1 runs on the blocks that have landed). So the shared expert
//! cannot hide behind dispatch for long: its tiles start at time 0 and take the few AIC
//! gaps there (about 6% of their core time falls before the last dispatch put is out), and
//! the scheduler spreads the rest over later gaps, up to the combine tail, where its GMM2
//! tiles run while the combine puts are in flight. It adds 1.25 ms of AIC work per core
//! (the bound grows by that much); the taskflow's makespan grows by 1.20–1.23 ms, the
//! baseline's by 1.33 ms, and the taskflow stays within 2% of its bound. The speedup is
//! 1.41–1.45× against the routed layer's 1.45–1.49×: both runs pay for the same extra
//! compute. [`effect`] measures these figures; the `moe_ffn_shared` example prints them.
//!
//! # Checking it
//!
//! [`inputs`] makes data for every input (`x`, then `xs` gathered from it by the routing
//! layout of [`hpmoe_host::moe`], so a token's routed rows are the token's own row);
//! [`reference()`] computes the layer with plain loops over tokens, choices and columns;
//! [`host_check`] runs the schedule on the host executor with [`op::impls`] and compares
//! `out` bitwise.

pub mod effect;
pub mod op;
mod overlap;
mod reference;
mod taskflow;

pub use overlap::{Overlap, overlap};
pub use reference::{inputs, reference};
pub use taskflow::{FINAL_SUM, SHARED_FAMILIES};

use crate::{ExampleError, HostCheck};
use hpmoe_core::cost::CostProfile;
use hpmoe_host::moe::MoeShape;

/// Sizes and tiling of the shared expert.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SharedExpert {
    /// Intermediate size: gate and up are each this wide.
    pub intermediate: u64,
    /// Token rows per shared GMM tile.
    pub row_block: u64,
    /// Output columns per `shared_gmm1` tile (a `[gate | up]` pair of half this width each).
    pub gmm1_cols: u64,
    /// Output columns per `shared_gmm2` tile.
    pub gmm2_cols: u64,
}

/// A MoE layer with routed experts and one shared expert.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SharedMoe {
    /// The routed experts: the layer of [`MoeShape`] the shared expert is added to.
    pub routed: MoeShape,
    /// The shared expert's sizes and tiling.
    pub shared: SharedExpert,
}

impl SharedMoe {
    /// DeepSeek-V3's layer: the routed experts of [`MoeShape::deepseek_v3`] and one shared
    /// expert of intermediate size 2048, tiled like the routed GMMs (128 rows, 512 and 896
    /// columns).
    pub fn deepseek_v3(ranks: u32, tokens_per_rank: u64) -> Self {
        let routed = MoeShape::deepseek_v3(ranks, tokens_per_rank);
        let shared = SharedExpert {
            intermediate: 2048,
            row_block: routed.row_block,
            gmm1_cols: routed.gmm1_cols,
            gmm2_cols: routed.gmm2_cols,
        };
        SharedMoe { routed, shared }
    }

    /// [`MoeShape::tiny`] with a shared expert of the routed experts' size, for host runs.
    pub fn tiny(ranks: u32) -> Self {
        let routed = MoeShape::tiny(ranks);
        let shared = SharedExpert {
            intermediate: routed.intermediate,
            row_block: routed.row_block,
            gmm1_cols: routed.gmm1_cols,
            gmm2_cols: routed.gmm2_cols,
        };
        SharedMoe { routed, shared }
    }

    /// Checks the routed shape and that the shared expert's tiling divides its sizes.
    pub fn validate(&self) -> Result<(), ExampleError> {
        self.routed.validate().map_err(ExampleError::Shape)?;
        let s = &self.shared;
        let (t, h) = (self.routed.tokens_per_rank, self.routed.hidden);
        let invalid = |problem| ExampleError::SharedExpert { problem, sizes: format!("{s:?}") };
        if [s.intermediate, s.row_block, s.gmm1_cols, s.gmm2_cols].contains(&0) {
            return Err(invalid("every size must be positive"));
        }
        let checks = [
            (t.is_multiple_of(s.row_block), "row_block must divide tokens_per_rank"),
            ((2 * s.intermediate).is_multiple_of(s.gmm1_cols), "gmm1_cols must divide 2 * intermediate"),
            (s.gmm1_cols.is_multiple_of(2), "gmm1_cols must be even (a gate half and an up half)"),
            (h.is_multiple_of(s.gmm2_cols), "gmm2_cols must divide hidden"),
        ];
        match checks.iter().find(|c| !c.0) {
            Some((_, problem)) => Err(invalid(problem)),
            None => Ok(()),
        }
    }
}

/// Schedules `shape`'s layer under `profile`, runs it on the host executor with the user
/// op's reference body on [`inputs`]`(shape, seed)`, and compares `out` bitwise with
/// [`reference()`].
///
/// # Errors
/// As [`crate::host_check`], and when the shape is invalid.
pub fn host_check(shape: &SharedMoe, profile: &CostProfile, seed: u64) -> Result<HostCheck, ExampleError> {
    let tf = shape.taskflow()?;
    let inputs = inputs(shape, seed);
    let expected = reference(shape, &inputs)?;
    crate::host_check(&tf, &op::impls(), profile, &inputs, "out", &expected)
}

/// The variant's emulator check: its generated kernel (with the user op's device header from
/// `kernels/`) on the CPU emulation, its `out` against [`reference()`] bitwise; `Ok(None)` without
/// a C++ compiler. See [`crate::emulator_check`].
///
/// # Errors
/// As [`crate::emulator_check`], and when the shape is invalid.
pub fn emulator_check(shape: &SharedMoe, profile: &CostProfile, seed: u64) -> Result<Option<HostCheck>, ExampleError> {
    let tf = shape.taskflow()?;
    let inputs = inputs(shape, seed);
    let expected = reference(shape, &inputs)?;
    let headers = [std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels")];
    crate::emulator_check(&tf, profile, (&op::emit_options(), &headers), &inputs, "out", &expected)
}
