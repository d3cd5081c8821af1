//! The matmuls: `a · b`, `a · bᵀ`, `aᵀ · b`, each plain or accumulating into `c`, and the
//! slot-layout sum `grad += Σ_s x_sᵀ · g_s` (or its writing form `grad = Σ_s x_sᵀ · g_s`).

use super::checks::{arity, dtype, expect, float};
use crate::exec::ops::error::{OpError, ShapeMismatch};
use crate::exec::ops::{Arg, ArgDesc, RefOp};
use hpmoe_core::model::DType;

/// `c[M, N] = a[M, K] · b[K, N]`: each output element is `Σ_p a[i, p] · b[p, j]` summed in
/// `f32` for `p = 0, 1, …, K-1`, starting from `+0.0`, then rounded to `c`'s type.
#[derive(Debug)]
pub(super) struct Matmul;

impl RefOp for Matmul {
    fn check(&self, args: &[ArgDesc]) -> Result<(), OpError> {
        check_matmul(args, None, |a, b, c| a.rows() == c.rows() && a.cols() == b.rows() && b.cols() == c.cols())
    }

    fn run(&self, args: &[Arg<'_>]) -> Result<(), OpError> {
        args[2].store(&product(args))
    }
}

/// `a · b` of a matmul's arguments `(a, b, c)` in `f32`: `Σ_p a[i, p] · b[p, j]` for
/// `p = 0, 1, …, K-1`, starting from `+0.0`.
fn product(args: &[Arg<'_>]) -> Vec<f32> {
    let (m, k, n) = (args[2].desc().rows(), args[0].desc().cols(), args[2].desc().cols());
    let (a, b) = (args[0].load(), args[1].load());
    let mut c = vec![0.0f32; m * n];
    for (i, row) in c.chunks_exact_mut(n.max(1)).enumerate().take(m) {
        for p in 0..k {
            let x = a[i * k + p];
            for (acc, &y) in row.iter_mut().zip(&b[p * n..(p + 1) * n]) {
                *acc += x * y;
            }
        }
    }
    c
}

/// `c += a · b`: the product `s = Σ_p a[i, p] · b[p, j]` is summed in `f32` for
/// `p = 0, 1, …, K-1` from `+0.0` (as [`Matmul`]), then `c[i, j] = c[i, j] + s` in `f32` with
/// `c` read as `f32`, rounded once into `c`'s type. (On the device the Matmul API adds `s`
/// into `c` with a global-memory atomic add, which for an `f32` `c` is this sum exactly.)
#[derive(Debug)]
pub(super) struct MatmulAccumulate;

impl RefOp for MatmulAccumulate {
    fn check(&self, args: &[ArgDesc]) -> Result<(), OpError> {
        Matmul.check(args)
    }

    fn run(&self, args: &[Arg<'_>]) -> Result<(), OpError> {
        let sum = product(args);
        let mut c = args[2].load();
        for (c, s) in c.iter_mut().zip(sum) {
            *c += s;
        }
        args[2].store(&c)
    }
}

/// The check every matmul shares: three bf16, f16 or f32 arguments `(a, b, c)` whose shapes
/// (as `rows × cols`) `fit`; otherwise [`ShapeMismatch::NoProduct`] (`as {form}` when given).
fn check_matmul(
    args: &[ArgDesc],
    form: Option<&'static str>,
    fit: impl FnOnce(&ArgDesc, &ArgDesc, &ArgDesc) -> bool,
) -> Result<(), OpError> {
    arity(args, 3)?;
    for x in args {
        float(x)?;
    }
    let (a, b, c) = (&args[0], &args[1], &args[2]);
    expect(fit(a, b, c), || ShapeMismatch::NoProduct {
        form,
        dims: [(a.rows(), a.cols()), (b.rows(), b.cols()), (c.rows(), c.cols())],
    })
}

/// `c[M, N] = a[M, K] · b[N, K]ᵀ`: each output element is `Σ_p a[i, p] · b[j, p]` summed in
/// `f32` for `p = 0, 1, …, K-1`, starting from `+0.0`, then rounded to `c`'s type.
#[derive(Debug)]
pub(super) struct MatmulNt;

impl RefOp for MatmulNt {
    fn check(&self, args: &[ArgDesc]) -> Result<(), OpError> {
        check_matmul(args, Some("a [M, K] · (b [N, K])ᵀ = c [M, N]"), |a, b, c| {
            a.rows() == c.rows() && a.cols() == b.cols() && b.rows() == c.cols()
        })
    }

    fn run(&self, args: &[Arg<'_>]) -> Result<(), OpError> {
        let (m, k, n) = (args[2].desc().rows(), args[0].desc().cols(), args[2].desc().cols());
        let (a, b) = (args[0].load(), args[1].load());
        let mut c = Vec::with_capacity(m * n);
        for i in 0..m {
            for j in 0..n {
                let mut acc = 0.0f32;
                for p in 0..k {
                    acc += a[i * k + p] * b[j * k + p];
                }
                c.push(acc);
            }
        }
        args[2].store(&c)
    }
}

/// `c[M, N] = a[K, M]ᵀ · b[K, N]` (or, with `accumulate`, `c += aᵀ · b`): the product
/// `s = Σ_p a[p, i] · b[p, j]` is summed in `f32` for `p = 0, 1, …, K-1` from `+0.0`; then
/// either rounded into `c`, or added to `c[i, j]` (read as `f32`) in `f32` and rounded once,
/// as [`MatmulAccumulate`] does.
#[derive(Debug)]
pub(super) struct MatmulTn {
    pub(super) accumulate: bool,
}

impl RefOp for MatmulTn {
    fn check(&self, args: &[ArgDesc]) -> Result<(), OpError> {
        check_matmul(args, Some("(a [K, M])ᵀ · b [K, N] = c [M, N]"), |a, b, c| {
            a.cols() == c.rows() && a.rows() == b.rows() && b.cols() == c.cols()
        })
    }

    fn run(&self, args: &[Arg<'_>]) -> Result<(), OpError> {
        let (m, k, n) = (args[2].desc().rows(), args[0].desc().rows(), args[2].desc().cols());
        let (a, b) = (args[0].load(), args[1].load());
        let mut sum = vec![0.0f32; m * n];
        for p in 0..k {
            for (i, row) in sum.chunks_exact_mut(n.max(1)).enumerate().take(m) {
                let x = a[p * m + i];
                for (acc, &y) in row.iter_mut().zip(&b[p * n..(p + 1) * n]) {
                    *acc += x * y;
                }
            }
        }
        if !self.accumulate {
            return args[2].store(&sum);
        }
        let mut c = args[2].load();
        for (c, s) in c.iter_mut().zip(sum) {
            *c += s;
        }
        args[2].store(&c)
    }
}

/// `grad[M, N] += Σ_s x_sᵀ · g_s` over a slot layout (or, without `accumulate`, `grad = Σ_s
/// x_sᵀ · g_s`): `x` `[S·C, M]`, `g` `[S·C, N]`, `counts` `S` i32 elements (read as bits), `C` =
/// rows of `x` / `S`. One `f32` accumulator per element from `+0.0` takes `x[r, i] · g[r, j]`
/// for the rows `r = s·C + p`, `p < min(counts[s], C)`, slots `s` ascending and `p` ascending;
/// then `grad[i, j] + acc` in `f32` (grad read as `f32`), or `acc` itself, rounded once into
/// `grad`'s type. Rows past a count are not read (they may hold the executor's poison), nor is
/// `grad` by the writing form. The order is the device's: one L0C accumulation continued slot
/// after slot, added into (or written to) `grad` once.
#[derive(Debug)]
pub(super) struct MatmulTnSlots {
    pub(super) accumulate: bool,
}

impl RefOp for MatmulTnSlots {
    fn check(&self, args: &[ArgDesc]) -> Result<(), OpError> {
        arity(args, 4)?;
        let (x, counts) = (&args[0], &args[3]);
        dtype(counts, DType::I32)?;
        check_matmul(&args[..3], Some("(x [K, M])ᵀ · g [K, N] = grad [M, N]"), |a, b, c| {
            a.cols() == c.rows() && a.rows() == b.rows() && b.cols() == c.cols()
        })?;
        let slots = counts.elements();
        expect(slots > 0 && x.rows() >= slots && x.rows().is_multiple_of(slots), || ShapeMismatch::Slots {
            x: x.clone(),
            counts: counts.clone(),
        })
    }

    fn run(&self, args: &[Arg<'_>]) -> Result<(), OpError> {
        let (m, n) = (args[2].desc().rows(), args[2].desc().cols());
        let counts: Vec<i32> = args[3].load_bits().into_iter().map(|b| b as i32).collect();
        let c = args[0].desc().rows() / counts.len().max(1);
        let (x, g) = (args[0].load(), args[1].load());
        let mut sum = vec![0.0f32; m * n];
        for (s, &count) in counts.iter().enumerate() {
            for r in s * c..s * c + usize::try_from(count).unwrap_or(0).min(c) {
                for (i, row) in sum.chunks_exact_mut(n.max(1)).enumerate().take(m) {
                    let v = x[r * m + i];
                    for (acc, &y) in row.iter_mut().zip(&g[r * n..(r + 1) * n]) {
                        *acc += v * y;
                    }
                }
            }
        }
        if !self.accumulate {
            return args[2].store(&sum);
        }
        let mut grad = args[2].load();
        for (c, s) in grad.iter_mut().zip(sum) {
            *c += s;
        }
        args[2].store(&grad)
    }
}
