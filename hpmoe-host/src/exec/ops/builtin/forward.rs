//! The copies, elementwise and row-wise ops of the forward layer: `copy`/`put`, `swiglu`,
//! `scale_rows`, the (weighted, gathered) accumulations, INT8 (de)quantisation, `cast`, `zero`.

use super::checks::{Item, Per, arity, dtype, expect, float, one_per, same_elements, same_matrix};
use super::scalar::silu;
use crate::exec::ops::error::{IndexAt, OpError, OutOfRange, ShapeMismatch};
use crate::exec::ops::{Arg, ArgDesc, RefOp};
use crate::exec::tensor::round_to;
use hpmoe_core::model::DType;

/// `dst = src`, bit for bit (`put` and `copy`): same element type, same element count,
/// row-major order.
#[derive(Debug)]
pub(super) struct Copy;

impl RefOp for Copy {
    fn check(&self, args: &[ArgDesc]) -> Result<(), OpError> {
        arity(args, 2)?;
        same_elements(&args[0], &args[1])?;
        if args[0].dtype != args[1].dtype {
            return Err(OpError::DifferentTypes(Box::new([args[0].clone(), args[1].clone()])));
        }
        Ok(())
    }

    fn run(&self, args: &[Arg<'_>]) -> Result<(), OpError> {
        args[1].store_bits(&args[0].load_bits())
    }
}

/// `out[i, q] = silu(g) · u` with `g = gate_up[i, q]` and `u = gate_up[i, n + q]`, where
/// `out` has `n` columns and `gate_up` `2n`.
#[derive(Debug)]
pub(super) struct SwiGlu;

impl RefOp for SwiGlu {
    fn check(&self, args: &[ArgDesc]) -> Result<(), OpError> {
        arity(args, 2)?;
        let (gu, out) = (&args[0], &args[1]);
        float(gu)?;
        float(out)?;
        expect(gu.rows() == out.rows() && gu.cols() == 2 * out.cols(), || ShapeMismatch::TwiceColumns {
            wide: gu.clone(),
            narrow: out.clone(),
        })
    }

    fn run(&self, args: &[Arg<'_>]) -> Result<(), OpError> {
        let n = args[1].desc().cols();
        let gu = args[0].load();
        let out: Vec<f32> =
            gu.chunks_exact(2 * n).flat_map(|row| (0..n).map(move |q| silu(row[q]) * row[n + q])).collect();
        args[1].store(&out)
    }
}

/// `dst[i, :] = src[i, :] · scale[i]`.
#[derive(Debug)]
pub(super) struct ScaleRows;

impl RefOp for ScaleRows {
    fn check(&self, args: &[ArgDesc]) -> Result<(), OpError> {
        arity(args, 3)?;
        let (src, scale, dst) = (&args[0], &args[1], &args[2]);
        same_matrix(src, dst)?;
        one_per(scale, Item::Scale, Per::Row, src, scale.elements(), src.rows())
    }

    fn run(&self, args: &[Arg<'_>]) -> Result<(), OpError> {
        let n = args[0].desc().cols();
        let (src, scale) = (args[0].load(), args[1].load());
        let out: Vec<f32> =
            src.chunks_exact(n).zip(&scale).flat_map(|(row, &s)| row.iter().map(move |&x| x * s)).collect();
        args[2].store(&out)
    }
}

/// `dst = dst + src`, elementwise, in `f32`.
#[derive(Debug)]
pub(super) struct Accumulate;

impl RefOp for Accumulate {
    fn check(&self, args: &[ArgDesc]) -> Result<(), OpError> {
        arity(args, 2)?;
        same_elements(&args[0], &args[1])
    }

    fn run(&self, args: &[Arg<'_>]) -> Result<(), OpError> {
        let (src, mut dst) = (args[0].load(), args[1].load());
        for (d, s) in dst.iter_mut().zip(src) {
            *d += s;
        }
        args[1].store(&dst)
    }
}

/// Top-k weighted accumulation: with `dst` of `M` rows and `src` of `M·k` rows (same
/// columns), `dst[i, :] = dst[i, :] + Σ_j src[i·k + j, :] · weight[i·k + j]`, summed in
/// `f32` for `j = 0, 1, …, k-1` starting from the value in `dst`, rounded once. With
/// `k = 1` this is `dst[i, :] += src[i, :] · weight[i]`.
#[derive(Debug)]
pub(super) struct WeightedAccumulate;

impl RefOp for WeightedAccumulate {
    fn check(&self, args: &[ArgDesc]) -> Result<(), OpError> {
        arity(args, 3)?;
        let (src, weight, dst) = (&args[0], &args[1], &args[2]);
        expect(
            src.cols() == dst.cols() && dst.rows() > 0 && src.rows() >= dst.rows() && src.rows() % dst.rows() == 0,
            || ShapeMismatch::KTimesRows { many: src.clone(), few: dst.clone() },
        )?;
        one_per(weight, Item::Weight, Per::Row, src, weight.elements(), src.rows())
    }

    fn run(&self, args: &[Arg<'_>]) -> Result<(), OpError> {
        let n = args[2].desc().cols();
        let k = args[0].desc().rows() / args[2].desc().rows();
        let (src, weight, mut dst) = (args[0].load(), args[1].load(), args[2].load());
        for (i, row) in dst.chunks_exact_mut(n).enumerate() {
            for j in 0..k {
                let r = i * k + j;
                let w = weight[r];
                for (acc, &x) in row.iter_mut().zip(&src[r * n..(r + 1) * n]) {
                    *acc += x * w;
                }
            }
        }
        args[2].store(&dst)
    }
}

/// Top-k weighted sum of gathered rows, the run-time-indexed sibling of
/// [`WeightedAccumulate`]: with `index` and `weight` of `M` rows and `k` columns (`k` the
/// last extent of `index`), `dst` of `M` rows, and `table` of `N` rows (its first extent)
/// whose rows (every other dimension, row-major) are as long as `dst`'s,
/// `dst[i, :] = dst[i, :] + Σ_j table[index[i, j], :] · weight[i, j]` over the `j` with
/// `index[i, j] ≥ 0`, summed in `f32` for `j = 0, 1, …, k-1` starting from the value in
/// `dst`, rounded once (as `weighted_accumulate` does). A negative index contributes
/// nothing (a dropped choice); an index `≥ N` is an error. Indices count from the first row
/// of `table`'s region.
#[derive(Debug)]
pub(super) struct GatherWeightedAccumulate;

impl RefOp for GatherWeightedAccumulate {
    fn check(&self, args: &[ArgDesc]) -> Result<(), OpError> {
        arity(args, 4)?;
        let (table, index, weight, dst) = (&args[0], &args[1], &args[2], &args[3]);
        float(table)?;
        float(weight)?;
        float(dst)?;
        dtype(index, DType::I32)?;
        one_per(weight, Item::Weight, Per::Element, index, weight.elements(), index.elements())?;
        one_per(dst, Item::Row, Per::Row, index, dst.rows(), index.rows())?;
        let table_rows = table.shape.first().map_or(1, |&d| d as usize);
        let row = table.elements() / table_rows.max(1);
        expect(table_rows > 0 && row == dst.cols(), || ShapeMismatch::TableRows {
            table: table.clone(),
            row,
            other: dst.clone(),
        })
    }

    fn run(&self, args: &[Arg<'_>]) -> Result<(), OpError> {
        let (table, index, dst) = (&args[0], &args[1], &args[3]);
        let n = dst.desc().cols();
        let k = index.desc().cols();
        let table_rows = table.desc().shape[0] as usize;
        // i32 elements are exact in f32 only up to 2^24; read the bits.
        let slots: Vec<i32> = index.load_bits().into_iter().map(|b| b as i32).collect();
        let (weight, mut out) = (args[2].load(), dst.load());
        for (i, acc_row) in out.chunks_exact_mut(n).enumerate() {
            for j in 0..k {
                let slot = slots[i * k + j];
                if slot < 0 {
                    continue;
                }
                let row = usize::try_from(slot).ok().and_then(|s| table.load_outer(s)).ok_or_else(|| {
                    OpError::IndexOutOfRange(Box::new(OutOfRange {
                        at: IndexAt::Element { row: i, col: j },
                        value: slot,
                        of: table.desc().clone(),
                        len: table_rows,
                    }))
                })?;
                let w = weight[i * k + j];
                for (acc, &x) in acc_row.iter_mut().zip(&row) {
                    *acc += x * w;
                }
            }
        }
        dst.store(&out)
    }
}

/// Per-row symmetric INT8 quantisation: `scale[i] = max_j |src[i, j]| / 127` (stored in
/// `scale`'s type and read back), `dst[i, j] = src[i, j] / scale[i]` rounded half to even and
/// clamped to `-127..=127`; a row of zeros gets scale 0 and zeros.
#[derive(Debug)]
pub(super) struct Quantize;

impl RefOp for Quantize {
    fn check(&self, args: &[ArgDesc]) -> Result<(), OpError> {
        arity(args, 3)?;
        let (src, dst, scale) = (&args[0], &args[1], &args[2]);
        float(src)?;
        float(scale)?;
        dtype(dst, DType::I8)?;
        same_matrix(src, dst)?;
        one_per(scale, Item::Scale, Per::Row, src, scale.elements(), src.rows())
    }

    fn run(&self, args: &[Arg<'_>]) -> Result<(), OpError> {
        let n = args[0].desc().cols();
        let scale_type = args[2].dtype();
        let src = args[0].load();
        let mut q = Vec::with_capacity(src.len());
        let mut scales = Vec::with_capacity(src.len() / n.max(1));
        for row in src.chunks_exact(n) {
            let amax = row.iter().fold(0.0f32, |m, x| m.max(x.abs()));
            let s = round_to(scale_type, amax / 127.0);
            scales.push(s);
            q.extend(row.iter().map(|&x| if s > 0.0 { (x / s).round_ties_even().clamp(-127.0, 127.0) } else { 0.0 }));
        }
        args[1].store(&q)?;
        args[2].store(&scales)
    }
}

/// `dst[i, j] = src[i, j] · scale[i]`.
#[derive(Debug)]
pub(super) struct Dequantize;

impl RefOp for Dequantize {
    fn check(&self, args: &[ArgDesc]) -> Result<(), OpError> {
        arity(args, 3)?;
        let (src, scale, dst) = (&args[0], &args[1], &args[2]);
        float(dst)?;
        same_matrix(src, dst)?;
        one_per(scale, Item::Scale, Per::Row, src, scale.elements(), src.rows())
    }

    fn run(&self, args: &[Arg<'_>]) -> Result<(), OpError> {
        ScaleRows.run(args)
    }
}

/// `dst = src` converted to `dst`'s type (through `f32`).
#[derive(Debug)]
pub(super) struct Cast;

impl RefOp for Cast {
    fn check(&self, args: &[ArgDesc]) -> Result<(), OpError> {
        arity(args, 2)?;
        same_elements(&args[0], &args[1])
    }

    fn run(&self, args: &[Arg<'_>]) -> Result<(), OpError> {
        args[1].store(&args[0].load())
    }
}

/// `dst = 0` (`+0.0` for floating-point types).
#[derive(Debug)]
/// `fence`: no work (the executor runs it after every write of its region, as the DAG orders).
pub(super) struct Fence;

impl RefOp for Fence {
    fn check(&self, args: &[ArgDesc]) -> Result<(), OpError> {
        arity(args, 1)
    }

    fn run(&self, _args: &[Arg<'_>]) -> Result<(), OpError> {
        Ok(())
    }
}

pub(super) struct Zero;

impl RefOp for Zero {
    fn check(&self, args: &[ArgDesc]) -> Result<(), OpError> {
        arity(args, 1)
    }

    fn run(&self, args: &[Arg<'_>]) -> Result<(), OpError> {
        args[0].store(&vec![0.0; args[0].desc().elements()])
    }
}
