//! The built-in ops as tile bodies call them.
//!
//! Each function names an op of [`crate::model::OpRegistry::builtin`] with its parameters.
//! Like the rest of the vocabulary they are symbolic: `#[taskflow]` reads the call and
//! checks it (core kind, argument count, regions); the function does nothing at run time.
//! The host executor and the AscendC backend supply the ops' implementations.

use super::Region;

macro_rules! builtin_ops {
    ($($(#[doc = $doc:literal])* $name:ident($($param:ident),*);)*) => {
        $(
            $(#[doc = $doc])*
            pub fn $name($($param: impl Into<Region>),*) {
                $(let _ = $param.into();)*
            }
        )*

        /// Name and parameter names of every op this module declares, in registry order.
        pub const BUILTIN_OPS: &[(&str, &[&str])] = &[$((stringify!($name), &[$(stringify!($param)),*])),*];
    };
}

builtin_ops! {
    /// AIC: `c = a · b` with FP32 accumulation; `a` is `[.., M, K]`, `b` `[.., K, N]`, `c` `[.., M, N]`.
    matmul(a, b, c);
    /// AIV: one-sided write of `src` into `dst`, a region of a symmetric tensor on another
    /// rank (`T.on(rank)...`), with a signal the destination's readers wait for.
    put(src, dst);
    /// AIV: `dst = src`.
    copy(src, dst);
    /// AIV: `out = silu(gate) * up`, where gate and up are the two halves of `gate_up`'s last dimension.
    swiglu(gate_up, out);
    /// AIV: `dst[i, :] = src[i, :] * scale[i]`.
    scale_rows(src, scale, dst);
    /// AIV: `dst += src`.
    accumulate(src, dst);
    /// AIV: `dst[i, :] += src[i, :] * weight[i]`.
    weighted_accumulate(src, weight, dst);
    /// AIV: per-row symmetric INT8 quantisation of `src` into `dst` and `scale`.
    quantize(src, dst, scale);
    /// AIV: `dst = src * scale`, per row.
    dequantize(src, scale, dst);
    /// AIV: `dst = src` converted to `dst`'s element type.
    cast(src, dst);
    /// AIV: `dst = 0`.
    zero(dst);
}

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
