//! The argument checks the built-in bodies share (arity, element types, matching shapes).

use crate::exec::ops::ArgDesc;
use crate::exec::tensor::is_float;

pub(super) fn arity(args: &[ArgDesc], n: usize) -> Result<(), String> {
    if args.len() == n { Ok(()) } else { Err(format!("takes {n} arguments, got {}", args.len())) }
}

pub(super) fn float(a: &ArgDesc) -> Result<(), String> {
    if is_float(a.dtype) { Ok(()) } else { Err(format!("{} must be bf16, f16 or f32", a.describe())) }
}

pub(super) fn expect(ok: bool, what: impl FnOnce() -> String) -> Result<(), String> {
    if ok { Ok(()) } else { Err(what()) }
}

pub(super) fn same_elements(a: &ArgDesc, b: &ArgDesc) -> Result<(), String> {
    expect(a.elements() == b.elements(), || {
        format!("{} and {} have different element counts", a.describe(), b.describe())
    })
}

pub(super) fn same_matrix(a: &ArgDesc, b: &ArgDesc) -> Result<(), String> {
    expect(a.rows() == b.rows() && a.cols() == b.cols(), || {
        format!(
            "{} ({}×{}) and {} ({}×{}) must have the same rows and columns",
            a.describe(),
            a.rows(),
            a.cols(),
            b.describe(),
            b.rows(),
            b.cols()
        )
    })
}
