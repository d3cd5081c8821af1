//! The vocabulary of `#[taskflow]` functions, and the [`Program`] they compile to.
//!
//! A taskflow is written as a Rust function marked `#[taskflow(...)]` (from `hpmoe-macros`)
//! whose body holds only items: integer `const`s, tensor `const`s, `#[tile]` functions and
//! `#[op]` functions. The macro reads those items, checks and schedules the taskflow at
//! compile time, and turns the function into a `const fn` returning a [`Program`]. The items
//! are kept as written (helper attributes removed), and they type-check against this module,
//! so rust-analyzer can follow every name in them:
//!
//! | in a taskflow body | item here |
//! | --- | --- |
//! | grid parameters `e: Idx`, index arithmetic, `RANK` | [`Idx`], [`RANK`] |
//! | `const X: Tensor<Bf16> = input([T, H]);` | [`Tensor`], [`Element`] types, [`input`], [`output`], [`scratch`], [`symmetric`] |
//! | `X.at(e).slice(m * B, B).on(dst)` | [`Tensor`] / [`Region`] methods |
//! | `matmul(a, b, c)`, `put(src, dst)`, ... | one function per [`BuiltinOp`](crate::model::BuiltinOp) ([`builtin_function`]) |
//! | `run_if_above(COUNTS.at(e), b * B);` (a tile's guard) | [`run_if_above`] |
//! | `for p in 0..H / P { .. }` in a tile (unrolled at compile time) | plain Rust over `u64` (`p * P` converts into an [`Idx`]) |
//! | reference bodies of `#[op]` functions | [`TileData`] |
//!
//! The vocabulary is symbolic: an [`Idx`] or a [`Region`] carries no value at run time, and
//! the op functions do nothing when called. The macro evaluates everything from the tokens.
//! (`RANKS`, the number of ranks, is a `u64` const the macro adds to the function body.)
//!
//! The [`Program`] a taskflow function returns holds the schedule table (binary, packed by
//! [`pack`] so that rustc compiles a tenth of the bytes; decoded by [`Program::table`]), the IR ([`Program::taskflow`]), one [`TileFn`] per tile family — a
//! host form that evaluates the family's regions for one instance and calls
//! [`TileContext::call`] per op — and the reference bodies of user-defined ops
//! ([`UserOp`]). See the `hpmoe_macros::taskflow` documentation for the whole language.

mod guard;
mod index;
mod ops;
pub mod pack;
mod program;
mod tensor;

pub use guard::run_if_above;
pub use index::{Idx, RANK};
pub use ops::{
    BuiltinFunction, RegionFn, accumulate, builtin_function, cast, copy, dequantize, fence, gather_row_dot_topk,
    gather_scale_rows_repeat, gather_sum_topk, gather_weighted_accumulate, matmul, matmul_accumulate, matmul_nt,
    matmul_tn, matmul_tn_accumulate, matmul_tn_slots, matmul_tn_slots_accumulate, put, quantize, row_dot_topk,
    scale_rows, scale_rows_repeat, sum_topk, swiglu, swiglu_backward, weighted_accumulate, zero,
};
#[doc(hidden)]
pub use program::__private;
pub use program::{ConcreteRegion, Program, ProgramError, TileContext, TileData, TileFn, UserOp, UserOpFn};
pub use tensor::{Bf16, Element, F16, F32, I8, I32, Region, Tensor, input, output, scratch, symmetric};
