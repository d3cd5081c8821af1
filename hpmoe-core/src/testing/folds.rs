//! Folds: a shape-agnostic stand-in for an op whose arguments do not fit its real shape rules
//! (a random taskflow's "read a whole tensor" pattern).

use crate::model::{BuiltinOp, CoreKind, OpSpec, Param, Region, Taskflow, WorkModel};

/// The fold ops [`with_folds`] registers, by the op they stand in for: `(matmul, copy, put)`.
pub const FOLD_OPS: [&str; 3] = ["fold_aic", "fold_aiv", "fold_put"];

/// The elements of `r`, a region of a tensor of `tf`.
fn elements(tf: &Taskflow, r: &Region) -> u64 {
    let shape = &tf.tensor(&r.tensor).expect("generated tensors exist").shape;
    shape.iter().enumerate().map(|(k, &e)| r.dims.get(k).map_or(e, |d| d.len)).product()
}

/// `tf` with each `matmul`, `put` or `copy` call whose first read and last argument differ in size
/// replaced by its fold stand-in (`fold_aic`, `fold_put`, `fold_aiv`), the fold ops registered.
/// Other ops keep their own shape rules. A taskflow without such a call is returned unchanged but
/// for the registrations.
pub fn with_folds(mut tf: Taskflow) -> Taskflow {
    let folds = [
        (FOLD_OPS[0], CoreKind::Aic, vec![Param::read("a"), Param::read("b"), Param::write("c")], WorkModel::Matmul),
        (FOLD_OPS[1], CoreKind::Aiv, vec![Param::read("src"), Param::write("dst")], WorkModel::Copy),
        (FOLD_OPS[2], CoreKind::Aiv, vec![Param::read("src"), Param::remote_write("dst")], WorkModel::Copy),
    ];
    for (name, core, params, work) in folds {
        tf.ops.register(OpSpec::new(name, core, params, work, "test stand-in")).expect("fold names are free");
    }
    let sizes: Vec<Vec<(u64, u64)>> = tf
        .families
        .iter()
        .map(|f| f.body.iter().map(|c| (elements(&tf, &c.args[0]), elements(&tf, c.args.last().unwrap()))).collect())
        .collect();
    for (f, sizes) in tf.families.iter_mut().zip(sizes) {
        for (call, (read, written)) in f.body.iter_mut().zip(sizes) {
            let fold = tf.ops.get(&call.op).and_then(|spec| spec.builtin()).and_then(fold_of);
            if let Some(fold) = fold.filter(|_| read != written) {
                call.op = fold.into();
            }
        }
    }
    tf
}

/// The fold op standing in for built-in `op`, if it has one: the ops random taskflows call
/// whole tensors with. Matched exhaustively: a new built-in does not compile until it is
/// decided here.
fn fold_of(op: BuiltinOp) -> Option<&'static str> {
    match op {
        BuiltinOp::Matmul => Some(FOLD_OPS[0]),
        BuiltinOp::Copy => Some(FOLD_OPS[1]),
        BuiltinOp::Put => Some(FOLD_OPS[2]),
        BuiltinOp::MatmulAccumulate
        | BuiltinOp::MatmulNt
        | BuiltinOp::MatmulTn
        | BuiltinOp::MatmulTnAccumulate
        | BuiltinOp::MatmulTnSlotsAccumulate
        | BuiltinOp::MatmulTnSlots
        | BuiltinOp::Swiglu
        | BuiltinOp::ScaleRows
        | BuiltinOp::Accumulate
        | BuiltinOp::WeightedAccumulate
        | BuiltinOp::GatherWeightedAccumulate
        | BuiltinOp::Quantize
        | BuiltinOp::Dequantize
        | BuiltinOp::Cast
        | BuiltinOp::Zero
        | BuiltinOp::SwigluBackward
        | BuiltinOp::ScaleRowsRepeat
        | BuiltinOp::RowDotTopk
        | BuiltinOp::SumTopk
        | BuiltinOp::GatherScaleRowsRepeat
        | BuiltinOp::GatherRowDotTopk
        | BuiltinOp::GatherSumTopk
        | BuiltinOp::Fence => None,
    }
}

/// Whether `tf` calls a fold op (such a taskflow has no AscendC emission).
pub fn has_folds(tf: &Taskflow) -> bool {
    tf.families.iter().flat_map(|f| &f.body).any(|c| FOLD_OPS.contains(&c.op.as_str()))
}
