//! The ops of the backward layer: the SwiGLU gradient and the top-k row products and sums.

use super::checks::{Item, Per, arity, expect, float, one_per, same_matrix};
use super::scalar::swiglu_grad;
use crate::exec::ops::error::{OpError, ShapeMismatch};
use crate::exec::ops::{Arg, ArgDesc, RefOp};

/// `k` for the top-k ops: `many` has `k ≥ 1` rows per row of `few` and the same columns.
fn top_k(many: &ArgDesc, few: &ArgDesc) -> Result<usize, OpError> {
    expect(
        many.cols() == few.cols()
            && few.rows() > 0
            && many.rows() >= few.rows()
            && many.rows().is_multiple_of(few.rows()),
        || ShapeMismatch::KTimesRows { many: many.clone(), few: few.clone() },
    )?;
    Ok(many.rows() / few.rows())
}

/// The SwiGLU gradient ([`swiglu_grad`] per element): with `d_act` of `w` columns and
/// `gate_up`, `d_gate_up` of `2w` and the same rows, for each row `i` and `q < w`,
/// `(d_gate_up[i, q], d_gate_up[i, w + q]) = swiglu_grad(gate_up[i, q], gate_up[i, w + q], d_act[i, q])`,
/// each rounded once into `d_gate_up`'s type.
#[derive(Debug)]
pub(super) struct SwigluBackward;

impl RefOp for SwigluBackward {
    fn check(&self, args: &[ArgDesc]) -> Result<(), OpError> {
        arity(args, 3)?;
        let (gu, d, dgu) = (&args[0], &args[1], &args[2]);
        for x in args {
            float(x)?;
        }
        same_matrix(gu, dgu)?;
        expect(gu.rows() == d.rows() && gu.cols() == 2 * d.cols(), || ShapeMismatch::TwiceColumns {
            wide: gu.clone(),
            narrow: d.clone(),
        })
    }

    fn run(&self, args: &[Arg<'_>]) -> Result<(), OpError> {
        let w = args[1].desc().cols();
        let (gu, d) = (args[0].load(), args[1].load());
        let mut out = vec![0.0f32; gu.len()];
        for ((row, d), out) in
            gu.chunks_exact(2 * w.max(1)).zip(d.chunks_exact(w.max(1))).zip(out.chunks_exact_mut(2 * w.max(1)))
        {
            for q in 0..w {
                let (dg, du) = swiglu_grad(row[q], row[w + q], d[q]);
                out[q] = dg;
                out[w + q] = du;
            }
        }
        args[2].store(&out)
    }
}

/// `dst[t·k + c, :] = weights[t·k + c] · src[t, :]` with `src` of `T` rows, `dst` of `T·k`
/// rows and the same columns, and `T·k` weights (row-major `[T, k]`); one `f32` product per
/// element, rounded once.
#[derive(Debug)]
pub(super) struct ScaleRowsRepeat;

impl RefOp for ScaleRowsRepeat {
    fn check(&self, args: &[ArgDesc]) -> Result<(), OpError> {
        arity(args, 3)?;
        let (src, weights, dst) = (&args[0], &args[1], &args[2]);
        float(dst)?;
        top_k(dst, src)?;
        one_per(weights, Item::Weight, Per::Row, dst, weights.elements(), dst.rows())
    }

    fn run(&self, args: &[Arg<'_>]) -> Result<(), OpError> {
        let n = args[0].desc().cols();
        let k = args[2].desc().rows() / args[0].desc().rows();
        let (src, weights) = (args[0].load(), args[1].load());
        let mut out = Vec::with_capacity(weights.len() * n);
        for (r, &w) in weights.iter().enumerate() {
            let t = r / k;
            out.extend(src[t * n..(t + 1) * n].iter().map(|&x| w * x));
        }
        args[2].store(&out)
    }
}

/// `d_weights[t·k + c] = Σ_h a[t, h] · b[t·k + c, h]` with `a` of `T` rows, `b` of `T·k` rows
/// and the same columns, and `T·k` outputs (row-major `[T, k]`): summed in `f32` for
/// `h = 0, 1, …, H-1` from `+0.0`, rounded once.
#[derive(Debug)]
pub(super) struct RowDotTopk;

impl RefOp for RowDotTopk {
    fn check(&self, args: &[ArgDesc]) -> Result<(), OpError> {
        arity(args, 3)?;
        let (a, b, dw) = (&args[0], &args[1], &args[2]);
        float(dw)?;
        top_k(b, a)?;
        one_per(dw, Item::Element, Per::Row, b, dw.elements(), b.rows())
    }

    fn run(&self, args: &[Arg<'_>]) -> Result<(), OpError> {
        let n = args[0].desc().cols();
        let k = args[1].desc().rows() / args[0].desc().rows();
        let (a, b) = (args[0].load(), args[1].load());
        let out: Vec<f32> = (0..args[1].desc().rows())
            .map(|r| {
                let (x, y) = (&a[(r / k) * n..(r / k + 1) * n], &b[r * n..(r + 1) * n]);
                let mut acc = 0.0f32;
                for h in 0..n {
                    acc += x[h] * y[h];
                }
                acc
            })
            .collect();
        args[2].store(&out)
    }
}

/// `dst[t, :] = Σ_c src[t·k + c, :]` with `src` of `T·k` rows and `dst` of `T` rows and the
/// same columns: summed in `f32` for `c = 0, 1, …, k-1` from `+0.0`, rounded once.
#[derive(Debug)]
pub(super) struct SumTopk;

impl RefOp for SumTopk {
    fn check(&self, args: &[ArgDesc]) -> Result<(), OpError> {
        arity(args, 2)?;
        float(&args[1])?;
        top_k(&args[0], &args[1]).map(|_| ())
    }

    fn run(&self, args: &[Arg<'_>]) -> Result<(), OpError> {
        let n = args[1].desc().cols();
        let k = args[0].desc().rows() / args[1].desc().rows();
        let src = args[0].load();
        let mut out = vec![0.0f32; args[1].desc().elements()];
        for (t, row) in out.chunks_exact_mut(n.max(1)).enumerate() {
            for c in 0..k {
                let r = t * k + c;
                for (acc, &x) in row.iter_mut().zip(&src[r * n..(r + 1) * n]) {
                    *acc += x;
                }
            }
        }
        args[1].store(&out)
    }
}
