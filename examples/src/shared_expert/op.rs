//! The variant's user-defined op, `weighted_sum_shared`, in its three forms: the signature the
//! taskflow's checks and cost model read ([`spec`]), the reference body the host executor runs
//! ([`WeightedSumShared`], registered by [`impls`]), and the AscendC device function its
//! `emit` template calls ([`DEVICE_HEADER`], included through [`emit_options`]).
//!
//! `out[i, :] = shared[i, :] + Σ_j routed[i·k + j, :] · weight[i·k + j]` with `k` = rows of
//! `routed` / rows of `out`: summed in FP32 starting from `shared[i, :]`, for `j = 0, 1, …,
//! k − 1`, each term `routed · weight` rounded to FP32 before it is added (no fused
//! multiply-add), and rounded once to `out`'s type.

use hpmoe_ascendc::EmitOptions;
use hpmoe_core::model::{CoreKind, OpSpec, Param, WorkModel};
use hpmoe_host::exec::{Arg, ArgDesc, Item, OpError, OpImpls, Per, RefOp, ShapeMismatch};

/// The op's name in the taskflow and in the executor's registry.
pub const OP_NAME: &str = "weighted_sum_shared";

/// File name of the header that holds the op's device function.
pub const DEVICE_HEADER_NAME: &str = "shared_expert_ops.h";

/// The header itself (`examples/kernels/shared_expert_ops.h`): `shared_expert_ops::WeightedSumShared`,
/// written against the hpmoe device runtime's vector helpers like the built-in
/// `hpmoe::WeightedAccumulate`.
pub const DEVICE_HEADER: &str = include_str!("../../kernels/shared_expert_ops.h");

/// The op's signature: AIV; reads `routed`, `weight` and `shared`, writes `out`; two flops per
/// element of `routed` (a multiply and an add) for the cost model; emitted as a call of the
/// device function with each region as an `hpmoe::View`.
pub fn spec() -> OpSpec {
    OpSpec::new(
        OP_NAME,
        CoreKind::Aiv,
        vec![Param::read("routed"), Param::read("weight"), Param::read("shared"), Param::write("out")],
        WorkModel::Vector { flops_per_element: 2 },
        "out[i, :] = shared[i, :] + sum over j < k of routed[i*k + j, :] * weight[i*k + j], in FP32, rounded once",
    )
    .with_emit("shared_expert_ops::WeightedSumShared(vec, {routed}, {weight}, {shared}, {out})")
}

/// Emission options that include [`DEVICE_HEADER_NAME`] in the kernel (after the runtime's
/// headers); the header must be on the compiler's include path.
pub fn emit_options() -> EmitOptions {
    EmitOptions { includes: vec![DEVICE_HEADER_NAME.into()], ..EmitOptions::default() }
}

/// The built-in reference ops plus [`WeightedSumShared`].
pub fn impls() -> OpImpls {
    let mut impls = OpImpls::builtin();
    impls.register(OP_NAME, WeightedSumShared).expect("`weighted_sum_shared` is not a built-in op");
    impls
}

/// The op's reference body (see the [module docs](self) for the order of the sum).
#[derive(Clone, Copy, Debug)]
pub struct WeightedSumShared;

impl RefOp for WeightedSumShared {
    fn check(&self, args: &[ArgDesc]) -> Result<(), OpError> {
        let [routed, weight, shared, out] = args else {
            return Err(OpError::Arity { expected: 4, got: args.len() });
        };
        let (m, n) = (out.rows(), out.cols());
        if m == 0 || routed.cols() != n || routed.rows() < m || routed.rows() % m != 0 {
            return Err(ShapeMismatch::KTimesRows { many: routed.clone(), few: out.clone() }.into());
        }
        if (shared.rows(), shared.cols()) != (m, n) {
            return Err(ShapeMismatch::SameMatrix(shared.clone(), out.clone()).into());
        }
        if weight.elements() != routed.rows() {
            let count = routed.rows();
            let (arg, of) = (weight.clone(), routed.clone());
            return Err(ShapeMismatch::OnePer { arg, item: Item::Weight, per: Per::Row, of, count }.into());
        }
        Ok(())
    }

    fn run(&self, args: &[Arg<'_>]) -> Result<(), OpError> {
        let n = args[3].desc().cols();
        let k = args[0].desc().rows() / args[3].desc().rows();
        let (routed, weight) = (args[0].load(), args[1].load());
        let mut acc = args[2].load();
        for (i, row) in acc.chunks_exact_mut(n).enumerate() {
            for j in 0..k {
                let r = i * k + j;
                let w = weight[r];
                for (a, &y) in row.iter_mut().zip(&routed[r * n..(r + 1) * n]) {
                    *a += y * w;
                }
            }
        }
        args[3].store(&acc)
    }
}
