//! Tensor declarations and region expressions of a taskflow body.

use super::Idx;
use crate::model::{DType, TensorKind};
use std::marker::PhantomData;

/// An element type a tensor may hold: [`Bf16`], [`F16`], [`F32`], [`I8`] or [`I32`].
pub trait Element: Copy + sealed::Sealed {
    /// The model's name for it.
    const DTYPE: DType;
}

mod sealed {
    pub trait Sealed {}
}

macro_rules! elements {
    ($($name:ident => $dtype:ident, $doc:literal;)*) => {$(
        #[doc = $doc]
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
        pub struct $name;
        impl sealed::Sealed for $name {}
        impl Element for $name {
            const DTYPE: DType = DType::$dtype;
        }
    )*};
}

elements! {
    Bf16 => Bf16, "bfloat16 elements (2 bytes).";
    F16 => F16, "IEEE half-precision elements (2 bytes).";
    F32 => F32, "IEEE single-precision elements (4 bytes).";
    I8 => I8, "8-bit signed integers (quantised data).";
    I32 => I32, "32-bit signed integers.";
}

/// A tensor of the taskflow, declared as a `const` of the taskflow body:
///
/// ```
/// # use hpmoe_core::dsl::*;
/// const T: u64 = 4096;
/// const H: u64 = 7168;
/// const X: Tensor<Bf16> = input([T, H]);
/// ```
///
/// Every rank holds its own copy. The handle carries the declaration's kind and element
/// type; `#[taskflow]` reads the name and the shape from the tokens.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Tensor<D: Element> {
    kind: TensorKind,
    dims: usize,
    element: PhantomData<D>,
}

const fn declare<D: Element, const N: usize>(kind: TensorKind, shape: [u64; N]) -> Tensor<D> {
    let _ = shape;
    Tensor { kind, dims: N, element: PhantomData }
}

/// Declares a read-only kernel input of the given shape.
pub const fn input<D: Element, const N: usize>(shape: [u64; N]) -> Tensor<D> {
    declare(TensorKind::Input, shape)
}

/// Declares a kernel output; it must be written before it is read.
pub const fn output<D: Element, const N: usize>(shape: [u64; N]) -> Tensor<D> {
    declare(TensorKind::Output, shape)
}

/// Declares scratch global memory; it must be written before it is read.
pub const fn scratch<D: Element, const N: usize>(shape: [u64; N]) -> Tensor<D> {
    declare(TensorKind::Scratch, shape)
}

/// Declares a symmetric tensor: the same allocation on every rank, the only kind a `put`
/// may write into on another rank.
pub const fn symmetric<D: Element, const N: usize>(shape: [u64; N]) -> Tensor<D> {
    declare(TensorKind::Symmetric, shape)
}

impl<D: Element> Tensor<D> {
    /// Input, output, scratch or symmetric.
    pub const fn kind(&self) -> TensorKind {
        self.kind
    }

    /// The element type.
    pub const fn dtype(&self) -> DType {
        D::DTYPE
    }

    /// Number of dimensions.
    pub const fn dims(&self) -> usize {
        self.dims
    }

    /// The whole tensor on the executing rank.
    pub fn whole(&self) -> Region {
        Region { _symbolic: () }
    }

    /// `tensor[i]`: the first dimension narrowed to the single index `i`.
    pub fn at(&self, i: impl Into<Idx>) -> Region {
        self.whole().at(i)
    }

    /// The first dimension narrowed to `start .. start + len` (`len` a constant).
    pub fn slice(&self, start: impl Into<Idx>, len: u64) -> Region {
        self.whole().slice(start, len)
    }

    /// The same as [`Tensor::slice`]; reads better for a block of rows.
    pub fn rows(&self, start: impl Into<Idx>, len: u64) -> Region {
        self.whole().slice(start, len)
    }

    /// The first dimension taken whole.
    pub fn all(&self) -> Region {
        self.whole().all()
    }

    /// The copy of the tensor on rank `dst` (only a `put` destination may name another rank).
    pub fn on(&self, dst: impl Into<Idx>) -> Region {
        self.whole().on(dst)
    }
}

/// A rectangular slice of a tensor, built from a tensor with `at`, `slice` / `rows`, `all`
/// and `on`. Each of `at`, `slice`, `rows` and `all` narrows the *next* dimension;
/// dimensions left over are taken whole, so `W.at(e)` is `W[e, .., ..]`.
///
/// Like [`Idx`] it is symbolic: `#[taskflow]` evaluates regions at compile time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Region {
    _symbolic: (),
}

impl Region {
    /// The next dimension narrowed to the single index `i`.
    pub fn at(self, i: impl Into<Idx>) -> Region {
        let _ = i.into();
        self
    }

    /// The next dimension narrowed to `start .. start + len` (`len` a constant).
    pub fn slice(self, start: impl Into<Idx>, len: u64) -> Region {
        let _ = (start.into(), len);
        self
    }

    /// The same as [`Region::slice`]; reads better for a block of rows.
    pub fn rows(self, start: impl Into<Idx>, len: u64) -> Region {
        self.slice(start, len)
    }

    /// The next dimension taken whole.
    pub fn all(self) -> Region {
        self
    }

    /// The copy on rank `dst` instead of the executing rank's.
    pub fn on(self, dst: impl Into<Idx>) -> Region {
        let _ = dst.into();
        self
    }
}

impl<D: Element> From<Tensor<D>> for Region {
    fn from(t: Tensor<D>) -> Region {
        t.whole()
    }
}
