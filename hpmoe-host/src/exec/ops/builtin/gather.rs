//! The gathering ops of the natural-routing backward: `gather_scale_rows_repeat`,
//! `gather_row_dot_topk` and `gather_sum_topk`, the run-time-indexed forms of the backward's
//! top-k ops (each row picked by an `i32` index, a negative one a dropped choice or padding).

use super::checks::{Item, Per, arity, dtype, expect, float, one_per};
use crate::exec::ops::error::{IndexAt, OpError, OutOfRange, ShapeMismatch};
use crate::exec::ops::{Arg, ArgDesc, RefOp};
use hpmoe_core::model::DType;

/// The rows a gathering op's `index` picks: its elements as `i32` (read as bits: i32 values are
/// exact in `f32` only up to 2^24).
fn indices(index: &Arg<'_>) -> Vec<i32> {
    index.load_bits().into_iter().map(|b| b as i32).collect()
}

/// `table` (an argument whose first extent counts its rows) and `index` (i32), as every
/// gathering op takes them: the number of table rows and the length of one, checked.
fn gather_table(table: &ArgDesc, index: &ArgDesc) -> Result<(usize, usize), OpError> {
    float(table)?;
    dtype(index, DType::I32)?;
    let rows = table.shape.first().map_or(0, |&d| d as usize);
    expect(rows > 0, || ShapeMismatch::EmptyTable { table: table.clone() })?;
    Ok((rows, table.elements() / rows))
}

/// The gathered rows (`row` elements each, from `table`) are as long as the rows of `other`.
fn rows_as_long(table: &ArgDesc, row: usize, other: &ArgDesc) -> Result<(), OpError> {
    expect(row == other.cols(), || ShapeMismatch::TableRows { table: table.clone(), row, other: other.clone() })
}

/// Row `row` of gather table `table` (the index `at` of `index` for messages), or an error if
/// it is past the table.
fn gathered_row(table: &Arg<'_>, row: i32, at: IndexAt) -> Result<Vec<f32>, OpError> {
    usize::try_from(row).ok().and_then(|r| table.load_outer(r)).ok_or_else(|| {
        OpError::IndexOutOfRange(Box::new(OutOfRange {
            at,
            value: row,
            of: table.desc().clone(),
            len: table.desc().shape[0] as usize,
        }))
    })
}

/// The gathering form of `ScaleRowsRepeat`: with `table` of `T` rows (its first extent),
/// `weights` `[T, k]` (`k` its last extent), `index` of `N` elements and `dst` of `N` rows as
/// long as `table`'s, `dst[j, :] = weights[i] · table[i / k, :]` for the choice `i = index[j]`
/// (`i / k` its token, `weights` read row-major), one `f32` product per element, rounded once;
/// `dst[j, :] = +0.0` where `index[j] < 0` (a padding row of a send slot). An index at or past
/// `T·k` is an error.
#[derive(Debug)]
pub(super) struct GatherScaleRowsRepeat;

impl RefOp for GatherScaleRowsRepeat {
    fn check(&self, args: &[ArgDesc]) -> Result<(), OpError> {
        arity(args, 4)?;
        let (table, index, weights, dst) = (&args[0], &args[1], &args[2], &args[3]);
        let (rows, row) = gather_table(table, index)?;
        float(weights)?;
        float(dst)?;
        one_per(weights, Item::RowOfWeights, Per::Row, table, weights.rows(), rows)?;
        one_per(index, Item::Index, Per::Row, dst, index.elements(), dst.rows())?;
        rows_as_long(table, row, dst)
    }

    fn run(&self, args: &[Arg<'_>]) -> Result<(), OpError> {
        let (table, weights, dst) = (&args[0], args[2].load(), &args[3]);
        let (k, n) = (args[2].desc().cols().max(1), dst.desc().cols());
        let mut out = Vec::with_capacity(dst.desc().elements());
        for (j, &choice) in indices(&args[1]).iter().enumerate() {
            if choice < 0 {
                out.extend(std::iter::repeat_n(0.0f32, n));
                continue;
            }
            let w = *weights.get(choice as usize).ok_or_else(|| {
                OpError::IndexOutOfRange(Box::new(OutOfRange {
                    at: IndexAt::Choice(j),
                    value: choice,
                    of: args[2].desc().clone(),
                    len: weights.len(),
                }))
            })?;
            let row = gathered_row(table, choice / k as i32, IndexAt::TokenOf(j))?;
            out.extend(row.iter().map(|&x| w * x));
        }
        dst.store(&out)
    }
}

/// The gathering form of `RowDotTopk`: with `index` and `d_weights` of `T·k` elements
/// (`[T, k]`, `k` the last extent of `index`), `a` of `T` rows and `table` rows as long as
/// `a`'s, `d_weights[t, c] = Σ_h a[t, h] · table[index[t, c], h]` summed in `f32` for
/// `h = 0, 1, …` from `+0.0`, rounded once; `+0.0` where `index[t, c] < 0` (a dropped choice).
#[derive(Debug)]
pub(super) struct GatherRowDotTopk;

impl RefOp for GatherRowDotTopk {
    fn check(&self, args: &[ArgDesc]) -> Result<(), OpError> {
        arity(args, 4)?;
        let (table, index, a, dw) = (&args[0], &args[1], &args[2], &args[3]);
        let (_, row) = gather_table(table, index)?;
        float(a)?;
        float(dw)?;
        one_per(index, Item::RowOfIndices, Per::Row, a, index.rows(), a.rows())?;
        one_per(dw, Item::Element, Per::Element, index, dw.elements(), index.elements())?;
        rows_as_long(table, row, a)
    }

    fn run(&self, args: &[Arg<'_>]) -> Result<(), OpError> {
        let (table, a) = (&args[0], args[2].load());
        let (k, n) = (args[1].desc().cols().max(1), args[2].desc().cols());
        let mut out = Vec::new();
        for (i, &slot) in indices(&args[1]).iter().enumerate() {
            if slot < 0 {
                out.push(0.0f32);
                continue;
            }
            let y = gathered_row(table, slot, IndexAt::Element { row: i / k, col: i % k })?;
            let x = &a[(i / k) * n..(i / k + 1) * n];
            let mut acc = 0.0f32;
            for h in 0..n {
                acc += x[h] * y[h];
            }
            out.push(acc);
        }
        args[3].store(&out)
    }
}

/// The gathering form of `SumTopk`: with `index` `[T, k]` (`k` its last extent) and `dst` of
/// `T` rows as long as `table`'s, `dst[t, :] = Σ_c table[index[t, c], :]` over the `c` with
/// `index[t, c] ≥ 0`, summed in `f32` for `c = 0, 1, …, k-1` from `+0.0`, rounded once.
#[derive(Debug)]
pub(super) struct GatherSumTopk;

impl RefOp for GatherSumTopk {
    fn check(&self, args: &[ArgDesc]) -> Result<(), OpError> {
        arity(args, 3)?;
        let (table, index, dst) = (&args[0], &args[1], &args[2]);
        let (_, row) = gather_table(table, index)?;
        float(dst)?;
        one_per(index, Item::RowOfIndices, Per::Row, dst, index.rows(), dst.rows())?;
        rows_as_long(table, row, dst)
    }

    fn run(&self, args: &[Arg<'_>]) -> Result<(), OpError> {
        let (table, dst) = (&args[0], &args[2]);
        let (k, n) = (args[1].desc().cols().max(1), dst.desc().cols());
        let slots = indices(&args[1]);
        let mut out = vec![0.0f32; dst.desc().elements()];
        for (t, acc_row) in out.chunks_exact_mut(n.max(1)).enumerate() {
            for c in 0..k {
                let slot = slots[t * k + c];
                if slot < 0 {
                    continue;
                }
                let row = gathered_row(table, slot, IndexAt::Element { row: t, col: c })?;
                for (acc, &x) in acc_row.iter_mut().zip(&row) {
                    *acc += x;
                }
            }
        }
        dst.store(&out)
    }
}
