//! Reference bodies of the built-in ops.
//!
//! All arithmetic is `f32` on values read from storage; results are rounded once, when
//! stored (see [`crate::exec::tensor`]). Every sum runs in a fixed order, given below, so
//! results are bitwise reproducible. No fused multiply-add is used (Rust never contracts
//! `a * b + c`).
//!
//! One file a job: `scalar` (the scalar functions), `checks` (argument checks the bodies
//! share), `matmul`, `forward` (copies, elementwise and row-wise ops), `backward` (the
//! backward layer's ops) and `gather` (their run-time-indexed forms); this file maps each [`BuiltinOp`] to its body.

mod backward;
mod checks;
mod forward;
mod gather;
mod matmul;
mod scalar;

pub use scalar::{sigmoid, silu, swiglu_grad};

use super::{OpImpls, RefOp};
use backward::{RowDotTopk, ScaleRowsRepeat, SumTopk, SwigluBackward};
use forward::{
    Accumulate, Cast, Copy, Dequantize, Fence, GatherWeightedAccumulate, Quantize, ScaleRows, SwiGlu,
    WeightedAccumulate, Zero,
};
use gather::{GatherRowDotTopk, GatherScaleRowsRepeat, GatherSumTopk};
use hpmoe_core::model::BuiltinOp;
use matmul::{Matmul, MatmulAccumulate, MatmulNt, MatmulTn, MatmulTnSlots};
use std::sync::Arc;

pub(super) fn register_all(r: &mut OpImpls) {
    for op in BuiltinOp::ALL {
        r.replace_arc(op.name(), reference(op));
    }
}

/// The reference body of a built-in.
fn reference(op: BuiltinOp) -> Arc<dyn RefOp> {
    match op {
        BuiltinOp::Matmul => Arc::new(Matmul),
        BuiltinOp::MatmulAccumulate => Arc::new(MatmulAccumulate),
        BuiltinOp::MatmulNt => Arc::new(MatmulNt),
        BuiltinOp::MatmulTn => Arc::new(MatmulTn { accumulate: false }),
        BuiltinOp::MatmulTnAccumulate => Arc::new(MatmulTn { accumulate: true }),
        BuiltinOp::MatmulTnSlotsAccumulate => Arc::new(MatmulTnSlots { accumulate: true }),
        BuiltinOp::MatmulTnSlots => Arc::new(MatmulTnSlots { accumulate: false }),
        // On the host a put is a copy into the destination rank's tensor.
        BuiltinOp::Put | BuiltinOp::Copy => Arc::new(Copy),
        BuiltinOp::Swiglu => Arc::new(SwiGlu),
        BuiltinOp::ScaleRows => Arc::new(ScaleRows),
        BuiltinOp::Accumulate => Arc::new(Accumulate),
        BuiltinOp::WeightedAccumulate => Arc::new(WeightedAccumulate),
        BuiltinOp::GatherWeightedAccumulate => Arc::new(GatherWeightedAccumulate),
        BuiltinOp::Quantize => Arc::new(Quantize),
        BuiltinOp::Dequantize => Arc::new(Dequantize),
        BuiltinOp::Cast => Arc::new(Cast),
        BuiltinOp::Zero => Arc::new(Zero),
        BuiltinOp::SwigluBackward => Arc::new(SwigluBackward),
        BuiltinOp::ScaleRowsRepeat => Arc::new(ScaleRowsRepeat),
        BuiltinOp::RowDotTopk => Arc::new(RowDotTopk),
        BuiltinOp::SumTopk => Arc::new(SumTopk),
        BuiltinOp::GatherScaleRowsRepeat => Arc::new(GatherScaleRowsRepeat),
        BuiltinOp::GatherRowDotTopk => Arc::new(GatherRowDotTopk),
        BuiltinOp::GatherSumTopk => Arc::new(GatherSumTopk),
        BuiltinOp::Fence => Arc::new(Fence),
    }
}
