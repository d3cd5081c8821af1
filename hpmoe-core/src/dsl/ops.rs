//! The built-in ops as tile bodies call them.
//!
//! Each function names a [`BuiltinOp`] with its parameters ([`builtin_function`]).
//! Like the rest of the vocabulary they are symbolic: `#[taskflow]` reads the call and
//! checks it (core kind, argument count, regions); the function does nothing at run time.
//! The host executor and the AscendC backend supply the ops' implementations. (Written out
//! one by one rather than by a macro, so that the compiler's notes about a call show a
//! plain signature.)

use super::Region;
use crate::model::BuiltinOp;

/// AIC: `c = a · b` with FP32 accumulation; `a` is `[.., M, K]`, `b` `[.., K, N]`, `c` `[.., M, N]`.
pub fn matmul(a: impl Into<Region>, b: impl Into<Region>, c: impl Into<Region>) {
    let _ = (a.into(), b.into(), c.into());
}

/// AIC: `c += a · b`. `a · b` is summed in FP32 over K ascending from `+0.0`, then added to
/// `c` (read as FP32) in FP32 and rounded once into `c`'s type. Tiles that add into one region
/// must be totally ordered (a chain of `after`s, or separate families in declaration order);
/// unordered accumulation is an error, so the sum has one order on every run and schedule.
pub fn matmul_accumulate(a: impl Into<Region>, b: impl Into<Region>, c: impl Into<Region>) {
    let _ = (a.into(), b.into(), c.into());
}

/// AIC: `c = a · bᵀ`; `a` is `[M, K]`, `b` `[N, K]` (read row by row, as stored: a weight
/// `[N, K]` used transposed, as the activation gradients `dY · W2ᵀ` and `dH · W13ᵀ` need), `c`
/// `[M, N]`. Each element is summed in FP32 over K ascending from `+0.0`, rounded once into `c`.
pub fn matmul_nt(a: impl Into<Region>, b: impl Into<Region>, c: impl Into<Region>) {
    let _ = (a.into(), b.into(), c.into());
}

/// AIC: `c = aᵀ · b`; `a` is `[K, M]`, `b` `[K, N]`, `c` `[M, N]`. Each element is summed in
/// FP32 over K ascending from `+0.0`, rounded once into `c`. The first block of a weight
/// gradient (`Aᵀ · dY`) that later blocks add to with [`matmul_tn_accumulate`].
pub fn matmul_tn(a: impl Into<Region>, b: impl Into<Region>, c: impl Into<Region>) {
    let _ = (a.into(), b.into(), c.into());
}

/// AIC: `c += aᵀ · b`; `a` is `[K, M]`, `b` `[K, N]`, `c` `[M, N]`. `aᵀ · b` is summed in FP32
/// over K ascending from `+0.0`, then added to `c` (read as FP32) in FP32 and rounded once into
/// `c`'s type — the weight gradients `dW2 += Aᵀ · dY`, `dW13 += Xᵀ · dH` over an expert's row
/// blocks. As for [`matmul_accumulate`], the tiles adding into one region must be totally
/// ordered; the AscendC backend needs an f32 `c`.
pub fn matmul_tn_accumulate(a: impl Into<Region>, b: impl Into<Region>, c: impl Into<Region>) {
    let _ = (a.into(), b.into(), c.into());
}

/// AIC: the on-chip sum over a slot layout: `grad += Σ_s x_sᵀ · g_s`, `x` `[S·C, M]` and `g`
/// `[S·C, N]` holding `S` slots of `C` rows (slot `s` the rows `s·C ..`), `grad` `[M, N]`,
/// `counts` `S` i32 elements (`C` = rows of `x` / `S`), over the first `min(counts[s], C)` rows
/// of each slot: one FP32 accumulation from `+0.0`, slots and rows ascending, added to `grad`
/// once (rounded once into its type). Rows past a count are never read. One tile sums what a
/// chain of [`matmul_tn_accumulate`] tiles would, in one order, without reading and writing
/// `grad` per block (the AscendC backend keeps the sum in L0C); `grad` must be f32 there.
pub fn matmul_tn_slots_accumulate(
    x: impl Into<Region>,
    g: impl Into<Region>,
    grad: impl Into<Region>,
    counts: impl Into<Region>,
) {
    let _ = (x.into(), g.into(), grad.into(), counts.into());
}

/// AIC: the writing form of [`matmul_tn_slots_accumulate`]: `grad = Σ_s x_sᵀ · g_s` over the
/// same slots and rows, one FP32 accumulation from `+0.0`, rounded once into `grad` (`+0.0`
/// where no slot has a row); `grad` is not read. The first link of a chain of slot sums, which
/// later links add to with [`matmul_tn_slots_accumulate`]: no zeroing pass before it, and one
/// read and write of `grad` fewer. `grad` must be f32 for the AscendC backend.
pub fn matmul_tn_slots(x: impl Into<Region>, g: impl Into<Region>, grad: impl Into<Region>, counts: impl Into<Region>) {
    let _ = (x.into(), g.into(), grad.into(), counts.into());
}

/// AIV: one-sided write of `src` into `dst`, a region of a symmetric tensor on another
/// rank (`T.on(rank)...`), with a signal the destination's readers wait for.
pub fn put(src: impl Into<Region>, dst: impl Into<Region>) {
    let _ = (src.into(), dst.into());
}

/// AIV: `dst = src`.
pub fn copy(src: impl Into<Region>, dst: impl Into<Region>) {
    let _ = (src.into(), dst.into());
}

/// AIV: `out = silu(gate) * up`, where gate and up are the two halves of `gate_up`'s last dimension.
pub fn swiglu(gate_up: impl Into<Region>, out: impl Into<Region>) {
    let _ = (gate_up.into(), out.into());
}

/// AIV: `dst[i, :] = src[i, :] * scale[i]`.
pub fn scale_rows(src: impl Into<Region>, scale: impl Into<Region>, dst: impl Into<Region>) {
    let _ = (src.into(), scale.into(), dst.into());
}

/// AIV: `dst += src`.
pub fn accumulate(src: impl Into<Region>, dst: impl Into<Region>) {
    let _ = (src.into(), dst.into());
}

/// AIV: `dst[i, :] += src[i, :] * weight[i]`.
pub fn weighted_accumulate(src: impl Into<Region>, weight: impl Into<Region>, dst: impl Into<Region>) {
    let _ = (src.into(), weight.into(), dst.into());
}

/// AIV: top-k weighted sum of gathered rows: `dst[i, :] += Σ_j table[index[i, j], :] · weight[i, j]`
/// over `j < k` (the last extent of `index`), skipping negative indices, in FP32 in `j`
/// order. `table` names every row the indices may pick; only the picked rows count as
/// traffic, but the tile waits for every writer of `table`.
pub fn gather_weighted_accumulate(
    table: impl Into<Region>,
    index: impl Into<Region>,
    weight: impl Into<Region>,
    dst: impl Into<Region>,
) {
    let _ = (table.into(), index.into(), weight.into(), dst.into());
}

/// AIV: per-row symmetric INT8 quantisation of `src` into `dst` and `scale`.
pub fn quantize(src: impl Into<Region>, dst: impl Into<Region>, scale: impl Into<Region>) {
    let _ = (src.into(), dst.into(), scale.into());
}

/// AIV: `dst = src * scale`, per row.
pub fn dequantize(src: impl Into<Region>, scale: impl Into<Region>, dst: impl Into<Region>) {
    let _ = (src.into(), scale.into(), dst.into());
}

/// AIV: `dst = src` converted to `dst`'s element type.
pub fn cast(src: impl Into<Region>, dst: impl Into<Region>) {
    let _ = (src.into(), dst.into());
}

/// AIV: `dst = 0`.
pub fn zero(dst: impl Into<Region>) {
    let _ = (dst.into(),);
}

/// AIV: the SwiGLU gradient, laid out as [`swiglu`]'s operands: `gate_up` `[R, 2w]` is
/// `[g | u]` (the saved pre-activations), `d_act` `[R, w]` the gradient of `swiglu`'s output,
/// and `d_gate_up` `[R, 2w]` receives `[dg | du]`. In FP32, with `s = 1 / (1 + exp(-g))`:
/// `du = (d_act · g) · s` and `dg = ((d_act · u) · s) · (1 + g · (1 − s))`, each rounded once
/// into `d_gate_up`'s type.
pub fn swiglu_backward(gate_up: impl Into<Region>, d_act: impl Into<Region>, d_gate_up: impl Into<Region>) {
    let _ = (gate_up.into(), d_act.into(), d_gate_up.into());
}

/// AIV: `dst[t·k + c, :] = weights[t, c] · src[t, :]`: `src` is `[T, H]`, `weights` `[T, k]`
/// (`T·k` contiguous elements), `dst` `[T·k, H]`, `k` = rows of `dst` / rows of `src`. The
/// combine's backward: each expert output's gradient is its token's gradient times the
/// routing weight.
pub fn scale_rows_repeat(src: impl Into<Region>, weights: impl Into<Region>, dst: impl Into<Region>) {
    let _ = (src.into(), weights.into(), dst.into());
}

/// AIV: `d_weights[t, c] = Σ_h a[t, h] · b[t·k + c, h]`: `a` is `[T, H]`, `b` `[T·k, H]`,
/// `d_weights` `[T, k]` (`T·k` contiguous elements); summed in FP32 over `h` ascending from
/// `+0.0`. The routing weights' gradient: a token's output gradient dotted with each chosen
/// expert's output.
pub fn row_dot_topk(a: impl Into<Region>, b: impl Into<Region>, d_weights: impl Into<Region>) {
    let _ = (a.into(), b.into(), d_weights.into());
}

/// AIV: `dst[t, :] = Σ_c src[t·k + c, :]`: `src` is `[T·k, H]`, `dst` `[T, H]`, `k` = rows of
/// `src` / rows of `dst`; summed in FP32 for `c = 0, 1, …, k-1` from `+0.0`. The dispatch's
/// backward: a token's input gradient is the sum of its `k` copies' gradients.
pub fn sum_topk(src: impl Into<Region>, dst: impl Into<Region>) {
    let _ = (src.into(), dst.into());
}

/// AIV: the gathering form of [`scale_rows_repeat`] (natural routing, where a token's copies
/// sit wherever the routing put them): `table` is `[T, H]`, `index` (`i32`, `N` contiguous
/// elements) names for each row `j` of `dst` (`[N, H]`) the choice `i = t·k + c` it carries, and
/// `dst[j, :] = weights[t, c] · table[t, :]` (`weights` `[T, k]`, `k` its last extent), or a row
/// of zeros where `index[j] < 0` (padding). One FP32 product per element, rounded once.
pub fn gather_scale_rows_repeat(
    table: impl Into<Region>,
    index: impl Into<Region>,
    weights: impl Into<Region>,
    dst: impl Into<Region>,
) {
    let _ = (table.into(), index.into(), weights.into(), dst.into());
}

/// AIV: the gathering form of [`row_dot_topk`]: `d_weights[t, c] = Σ_h a[t, h] ·
/// table[index[t, c], h]` (`index` `i32` `[T, k]`, its rows counted from the first row of
/// `table`'s region), summed in FP32 over `h` ascending from `+0.0`; `+0.0` where
/// `index[t, c] < 0` (a dropped choice).
pub fn gather_row_dot_topk(
    table: impl Into<Region>,
    index: impl Into<Region>,
    a: impl Into<Region>,
    d_weights: impl Into<Region>,
) {
    let _ = (table.into(), index.into(), a.into(), d_weights.into());
}

/// AIV: the gathering form of [`sum_topk`]: `dst[t, :] = Σ_c table[index[t, c], :]` over the
/// `c` with `index[t, c] ≥ 0` (`index` `i32` `[T, k]`), summed in FP32 for `c = 0, 1, …` from
/// `+0.0`, rounded once.
pub fn gather_sum_topk(table: impl Into<Region>, index: impl Into<Region>, dst: impl Into<Region>) {
    let _ = (table.into(), index.into(), dst.into());
}

/// AIV: no work. The tile waits for every earlier write of `region` (puts from other ranks
/// included), and a tile of a later family that reads inside `region` waits for this one instead
/// of for each of those writes: one fence per rank can relay many puts to many readers.
pub fn fence(region: impl Into<Region>) {
    let _ = (region.into(),);
}

/// A DSL function taking regions, by its number of arguments.
#[derive(Clone, Copy, Debug)]
pub enum RegionFn {
    /// One region.
    One(fn(Region)),
    /// Two regions.
    Two(fn(Region, Region)),
    /// Three regions.
    Three(fn(Region, Region, Region)),
    /// Four regions.
    Four(fn(Region, Region, Region, Region)),
}

impl RegionFn {
    /// The number of arguments.
    pub fn arity(self) -> usize {
        match self {
            RegionFn::One(_) => 1,
            RegionFn::Two(_) => 2,
            RegionFn::Three(_) => 3,
            RegionFn::Four(_) => 4,
        }
    }
}

/// A built-in's function in this module: its name, its parameters' names and the function.
#[derive(Clone, Copy, Debug)]
pub struct BuiltinFunction {
    /// The function's name, which is the op's ([`BuiltinOp::name`]).
    pub name: &'static str,
    /// Its parameters' names, in order: the registry's ([`BuiltinOp::spec`]).
    pub params: &'static [&'static str],
    /// The function.
    pub function: RegionFn,
}

/// `function!(name, Arity, [params])`: the [`BuiltinFunction`] of this module's function `name`.
macro_rules! function {
    ($name:ident, $arity:ident, [$($param:literal),*]) => {
        BuiltinFunction { name: stringify!($name), params: &[$($param),*], function: RegionFn::$arity($name) }
    };
}

/// The function this module declares for `op`. Matched exhaustively, naming the function
/// itself: a new built-in does not compile until it has its function here.
pub fn builtin_function(op: BuiltinOp) -> BuiltinFunction {
    match op {
        BuiltinOp::Matmul => function!(matmul, Three, ["a", "b", "c"]),
        BuiltinOp::MatmulAccumulate => function!(matmul_accumulate, Three, ["a", "b", "c"]),
        BuiltinOp::MatmulNt => function!(matmul_nt, Three, ["a", "b", "c"]),
        BuiltinOp::MatmulTn => function!(matmul_tn, Three, ["a", "b", "c"]),
        BuiltinOp::MatmulTnAccumulate => function!(matmul_tn_accumulate, Three, ["a", "b", "c"]),
        BuiltinOp::MatmulTnSlotsAccumulate => function!(matmul_tn_slots_accumulate, Four, ["x", "g", "grad", "counts"]),
        BuiltinOp::MatmulTnSlots => function!(matmul_tn_slots, Four, ["x", "g", "grad", "counts"]),
        BuiltinOp::Put => function!(put, Two, ["src", "dst"]),
        BuiltinOp::Copy => function!(copy, Two, ["src", "dst"]),
        BuiltinOp::Swiglu => function!(swiglu, Two, ["gate_up", "out"]),
        BuiltinOp::ScaleRows => function!(scale_rows, Three, ["src", "scale", "dst"]),
        BuiltinOp::Accumulate => function!(accumulate, Two, ["src", "dst"]),
        BuiltinOp::WeightedAccumulate => function!(weighted_accumulate, Three, ["src", "weight", "dst"]),
        BuiltinOp::GatherWeightedAccumulate => {
            function!(gather_weighted_accumulate, Four, ["table", "index", "weight", "dst"])
        }
        BuiltinOp::Quantize => function!(quantize, Three, ["src", "dst", "scale"]),
        BuiltinOp::Dequantize => function!(dequantize, Three, ["src", "scale", "dst"]),
        BuiltinOp::Cast => function!(cast, Two, ["src", "dst"]),
        BuiltinOp::Zero => function!(zero, One, ["dst"]),
        BuiltinOp::SwigluBackward => function!(swiglu_backward, Three, ["gate_up", "d_act", "d_gate_up"]),
        BuiltinOp::ScaleRowsRepeat => function!(scale_rows_repeat, Three, ["src", "weights", "dst"]),
        BuiltinOp::RowDotTopk => function!(row_dot_topk, Three, ["a", "b", "d_weights"]),
        BuiltinOp::SumTopk => function!(sum_topk, Two, ["src", "dst"]),
        BuiltinOp::GatherScaleRowsRepeat => {
            function!(gather_scale_rows_repeat, Four, ["table", "index", "weights", "dst"])
        }
        BuiltinOp::GatherRowDotTopk => function!(gather_row_dot_topk, Four, ["table", "index", "a", "d_weights"]),
        BuiltinOp::GatherSumTopk => function!(gather_sum_topk, Three, ["table", "index", "dst"]),
        BuiltinOp::Fence => function!(fence, One, ["region"]),
    }
}

#[cfg(test)]
mod tests {
    use super::builtin_function;
    use crate::model::BuiltinOp;

    #[test]
    fn the_vocabulary_matches_the_registry() {
        for op in BuiltinOp::ALL {
            let f = builtin_function(op);
            let params: Vec<String> = op.spec().params.iter().map(|p| p.name.clone()).collect();
            assert_eq!(f.name, op.name());
            assert_eq!(f.params, params, "{}", op.name());
            assert_eq!(f.function.arity(), params.len(), "{}", op.name());
        }
    }
}
