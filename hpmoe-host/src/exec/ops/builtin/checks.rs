//! The argument checks the built-in bodies share (arity, element types, matching shapes).

use crate::exec::ops::ArgDesc;
use crate::exec::ops::error::{OpError, ShapeMismatch};
use crate::exec::tensor::is_float;
use hpmoe_core::model::DType;

pub(super) fn arity(args: &[ArgDesc], n: usize) -> Result<(), OpError> {
    if args.len() == n { Ok(()) } else { Err(OpError::Arity { expected: n, got: args.len() }) }
}

pub(super) fn float(a: &ArgDesc) -> Result<(), OpError> {
    if is_float(a.dtype) { Ok(()) } else { Err(OpError::Type { arg: a.clone(), expected: None }) }
}

/// `a` has element type `t`.
pub(super) fn dtype(a: &ArgDesc, t: DType) -> Result<(), OpError> {
    if a.dtype == t { Ok(()) } else { Err(OpError::Type { arg: a.clone(), expected: Some(t) }) }
}

/// `Ok` if `ok`, else the mismatch `what` describes.
pub(super) fn expect(ok: bool, what: impl FnOnce() -> ShapeMismatch) -> Result<(), OpError> {
    if ok { Ok(()) } else { Err(what().into()) }
}

pub(super) fn same_elements(a: &ArgDesc, b: &ArgDesc) -> Result<(), OpError> {
    expect(a.elements() == b.elements(), || ShapeMismatch::SameElements(a.clone(), b.clone()))
}

pub(super) fn same_matrix(a: &ArgDesc, b: &ArgDesc) -> Result<(), OpError> {
    expect(a.rows() == b.rows() && a.cols() == b.cols(), || ShapeMismatch::SameMatrix(a.clone(), b.clone()))
}

/// `arg` holds one `item` per row or element of `of` (`count` of them): `held == count`.
pub(super) fn one_per(
    arg: &ArgDesc,
    item: Item,
    per: Per,
    of: &ArgDesc,
    held: usize,
    count: usize,
) -> Result<(), OpError> {
    expect(held == count, || ShapeMismatch::OnePer { arg: arg.clone(), item, per, of: of.clone(), count })
}

pub(super) use crate::exec::ops::error::{Item, Per};
