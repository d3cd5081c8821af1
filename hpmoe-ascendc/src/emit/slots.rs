//! `matmul_tn_slots_accumulate` and `matmul_tn_slots` as statements: the on-chip sum of a slot
//! layout, added into `grad` or written over it.
//!
//! The runtime's `hpmoe::MatmulTnSlotsTile` (`hpmoe/cube_ops.h`) walks `grad` in base blocks and,
//! per block, the slots in order: the first slot with a count above zero starts L0C's
//! accumulators, each later one continues them (`Iterate(enPartialSum)`, one `Iterate` over the
//! slot's first `min(count, C)` rows), and the block is added into `grad` once (`GetTensorC`
//! with the FP32 atomic add). Accumulating in L0C needs the single shape to be the tiling's base
//! block, so each base block gets its own Matmul group whose tiling fixes it (`SetFixSplit`);
//! the emitter picks the block here, at generation time, and refuses a `grad` no block fitting
//! L0C tiles.

use super::ops::{CallSite, MatmulGroup, join_group};
use super::region::ViewSpec;
use crate::error::{EmitErrorKind as Kind, EmitFault};
use hpmoe_core::model::{BuiltinOp, DType};

/// FP32 accumulators of one AIC's L0C: 128 KiB (`hardware.md`; the emulator's `SetFixSplit`
/// accepts a 128 x 256 base block and refuses 256 x 256).
pub const L0C_F32: u64 = 128 * 1024 / 4;

/// The base block's sides are whole fractals (16), as `SetFixSplit` requires.
const FRACTAL: u64 = 16;

/// The largest base block `(rows, cols)` tiling an `m x n` FP32 block within L0C: columns the
/// largest multiple of 16 up to 256 dividing `n`, rows the largest multiple of 16 dividing `m`
/// with `rows · cols` ≤ [`L0C_F32`]; `None` if `m` or `n` has no such divisor.
pub fn base_block(m: u64, n: u64) -> Option<(u64, u64)> {
    let divisor = |extent: u64, most: u64| {
        (1..=most.min(extent) / FRACTAL).rev().map(|f| f * FRACTAL).find(|d| extent.is_multiple_of(*d))
    };
    let cols = divisor(n, 256)?;
    let rows = divisor(m, L0C_F32 / cols)?;
    Some((rows, cols))
}

/// The statement of one `matmul_tn_slots_accumulate(x, g, grad, counts)` or
/// `matmul_tn_slots(x, g, grad, counts)` call, registering its
/// group: checks that `x` `[S·C, M]` and `g` `[S·C, N]` (one element type the Matmul API takes)
/// multiply into an f32 `grad` `[M, N]`, that `counts` is `S` local `i32` elements in one row or
/// column (read one by one, fresh from global memory, as a guard's count is), and that a base
/// block fits L0C.
pub fn matmul_tn_slots(
    site: &CallSite<'_>,
    v: &[ViewSpec],
    names: &[String],
    groups: &mut Vec<MatmulGroup>,
) -> Result<String, EmitFault> {
    let fault = |kind, message: String| Err(EmitFault::new(kind, message));
    let (x, g, grad, counts) = (&v[0], &v[1], &v[2], &v[3]);
    let name = site.spec.name.as_str();
    if x.rows != g.rows || x.cols != grad.rows || g.cols != grad.cols {
        return fault(
            Kind::ShapeMismatch,
            format!(
                "{name} shapes do not multiply as (x [K, M])ᵀ · g [K, N] = grad [M, N]: x `{}` is {}x{}, g `{}` is \
                 {}x{}, grad `{}` is {}x{}",
                x.text, x.rows, x.cols, g.text, g.rows, g.cols, grad.text, grad.rows, grad.cols
            ),
        );
    }
    if x.dtype != g.dtype {
        return fault(
            Kind::DTypeMismatch,
            format!("`{}` is {} but `{}` is {}", x.text, x.dtype.name(), g.text, g.dtype.name()),
        );
    }
    if !matches!(x.dtype, DType::Bf16 | DType::F16 | DType::F32) || grad.dtype != DType::F32 {
        return fault(
            Kind::UnsupportedDType,
            format!(
                "{name} sums {} x {} into `{}`, which is {}: the on-chip sum takes bf16, f16 or f32 operands and adds \
                 into an f32 region",
                x.dtype.name(),
                g.dtype.name(),
                grad.text,
                grad.dtype.name()
            ),
        );
    }
    let slots = counts.elements();
    if counts.dtype != DType::I32 || counts.remote.is_some() || (counts.rows > 1 && counts.cols > 1) {
        return fault(
            Kind::BadSlotCounts,
            format!("the counts `{}` of {name} are not one row or column of local i32 elements", counts.text),
        );
    }
    if slots == 0 || !x.rows.is_multiple_of(slots) {
        return fault(
            Kind::ShapeMismatch,
            format!("{name}: the {} rows of `{}` are not {slots} slots of equal rows (one per count)", x.rows, x.text),
        );
    }
    let Some((base_m, base_n)) = base_block(grad.rows, grad.cols) else {
        return fault(
            Kind::NoL0cBlock,
            format!(
                "{name}: no base block of whole fractals (16) divides `{}` ({}x{}) and fits L0C ({} FP32 accumulators)",
                grad.text, grad.rows, grad.cols, L0C_F32
            ),
        );
    };
    let tile = MatmulGroup {
        a: x.dtype,
        b: g.dtype,
        c: DType::F32,
        trans_a: true,
        trans_b: false,
        m: base_m,
        n: base_n,
        k: x.rows / slots,
        fixed_split: true,
        families: Vec::new(),
    };
    let index = join_group(groups, tile, site.family);
    let a = |i: usize| v[i].cpp(names);
    // The writing form (`matmul_tn_slots`) writes each block's sum over `grad` (+0.0 where no
    // slot feeds it) instead of adding it.
    let write = site.spec.builtin() == Some(BuiltinOp::MatmulTnSlots);
    Ok(format!(
        "hpmoe::MatmulTnSlotsTile<{write}>(mm{index},\n    {},\n    {},\n    {},\n    {},\n    {base_m}, {base_n});",
        a(0),
        a(1),
        a(2),
        a(3)
    ))
}

#[cfg(test)]
mod tests {
    use super::{L0C_F32, base_block};

    #[test]
    fn base_blocks_fill_l0c_with_whole_fractals() {
        assert_eq!(base_block(7168, 256), Some((128, 256)));
        assert_eq!(base_block(2048, 512), Some((128, 256)));
        assert_eq!(base_block(32, 16), Some((32, 16)));
        assert_eq!(base_block(48, 96), Some((48, 96)));
        // No whole-fractal divisor: refused rather than tiled with a partial block.
        assert_eq!(base_block(40, 16), None);
        assert_eq!(base_block(8, 16), None);
        assert_eq!(base_block(16, 24), None);
        for (m, n) in [(7168, 256), (2048, 512), (4096, 1024)] {
            let (r, c) = base_block(m, n).unwrap();
            assert!(r * c <= L0C_F32 && m % r == 0 && n % c == 0 && r % 16 == 0 && c % 16 == 0);
        }
    }
}
