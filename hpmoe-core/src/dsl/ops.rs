//! The built-in ops as tile bodies call them.
//!
//! Each function names an op of [`crate::model::OpRegistry::builtin`] with its parameters.
//! Like the rest of the vocabulary they are symbolic: `#[taskflow]` reads the call and
//! checks it (core kind, argument count, regions); the function does nothing at run time.
//! The host executor and the AscendC backend supply the ops' implementations. (Written out
//! one by one rather than by a macro, so that the compiler's notes about a call show a
//! plain signature.)

use super::Region;

/// AIC: `c = a · b` with FP32 accumulation; `a` is `[.., M, K]`, `b` `[.., K, N]`, `c` `[.., M, N]`.
pub fn matmul(a: impl Into<Region>, b: impl Into<Region>, c: impl Into<Region>) {
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

/// Name and parameter names of every op this module declares, in registry order.
pub const BUILTIN_OPS: &[(&str, &[&str])] = &[
    ("matmul", &["a", "b", "c"]),
    ("put", &["src", "dst"]),
    ("copy", &["src", "dst"]),
    ("swiglu", &["gate_up", "out"]),
    ("scale_rows", &["src", "scale", "dst"]),
    ("accumulate", &["src", "dst"]),
    ("weighted_accumulate", &["src", "weight", "dst"]),
    ("gather_weighted_accumulate", &["table", "index", "weight", "dst"]),
    ("quantize", &["src", "dst", "scale"]),
    ("dequantize", &["src", "scale", "dst"]),
    ("cast", &["src", "dst"]),
    ("zero", &["dst"]),
];

#[cfg(test)]
mod tests {
    use super::BUILTIN_OPS;
    use crate::model::OpRegistry;

    #[test]
    fn the_vocabulary_matches_the_registry() {
        let registry = OpRegistry::builtin();
        let declared: Vec<(String, Vec<String>)> =
            BUILTIN_OPS.iter().map(|(n, ps)| (n.to_string(), ps.iter().map(|p| p.to_string()).collect())).collect();
        let registered: Vec<(String, Vec<String>)> =
            registry.iter().map(|o| (o.name.clone(), o.params.iter().map(|p| p.name.clone()).collect())).collect();
        assert_eq!(declared, registered);
    }
}
