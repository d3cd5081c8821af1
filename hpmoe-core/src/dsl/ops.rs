//! The built-in ops as tile bodies call them.
//!
//! Each function names a [`BuiltinOp`] with its parameters ([`builtin_params`]).
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

/// The parameter names of the function this module declares for `op` (named
/// [`BuiltinOp::name`]). Matched exhaustively: a new built-in does not compile until it has its
/// function here.
pub const fn builtin_params(op: BuiltinOp) -> &'static [&'static str] {
    match op {
        BuiltinOp::Matmul => &["a", "b", "c"],
        BuiltinOp::MatmulAccumulate => &["a", "b", "c"],
        BuiltinOp::Put => &["src", "dst"],
        BuiltinOp::Copy => &["src", "dst"],
        BuiltinOp::Swiglu => &["gate_up", "out"],
        BuiltinOp::ScaleRows => &["src", "scale", "dst"],
        BuiltinOp::Accumulate => &["src", "dst"],
        BuiltinOp::WeightedAccumulate => &["src", "weight", "dst"],
        BuiltinOp::GatherWeightedAccumulate => &["table", "index", "weight", "dst"],
        BuiltinOp::Quantize => &["src", "dst", "scale"],
        BuiltinOp::Dequantize => &["src", "scale", "dst"],
        BuiltinOp::Cast => &["src", "dst"],
        BuiltinOp::Zero => &["dst"],
    }
}

#[cfg(test)]
mod tests {
    use super::builtin_params;
    use crate::model::BuiltinOp;

    #[test]
    fn the_vocabulary_matches_the_registry() {
        for op in BuiltinOp::ALL {
            let params: Vec<String> = op.spec().params.iter().map(|p| p.name.clone()).collect();
            assert_eq!(builtin_params(op), params, "{}", op.name());
        }
    }
}
