//! Reference bodies of the built-in ops.
//!
//! All arithmetic is `f32` on values read from storage; results are rounded once, when
//! stored (see [`crate::exec::tensor`]). Every sum runs in a fixed order, given below, so
//! results are bitwise reproducible. No fused multiply-add is used (Rust never contracts
//! `a * b + c`).

use super::{Arg, ArgDesc, OpImpls, RefOp};
use crate::exec::tensor::{is_float, round_to};
use hpmoe_core::model::{BuiltinOp, DType};
use std::sync::Arc;

/// `x · sigmoid(x)`, computed as `x / (1 + e^(-x))` in `f32`.
pub fn silu(x: f32) -> f32 {
    x / (1.0 + (-x).exp())
}

/// `sigmoid(x)`, computed as `1 / (1 + e^(-x))` in `f32` (the `e^(-x)` of [`silu`]).
pub fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

/// The SwiGLU gradient at one `(g, u)` pair with output gradient `d`, in `f32`: with
/// `s = sigmoid(g)`, returns `(dg, du)` = `(((d · u) · s) · (1 + g · (1 − s)), (d · g) · s)`,
/// evaluated in exactly that order.
pub fn swiglu_grad(g: f32, u: f32, d: f32) -> (f32, f32) {
    let s = sigmoid(g);
    let dg = ((d * u) * s) * (1.0 + g * (1.0 - s));
    let du = (d * g) * s;
    (dg, du)
}

pub(super) fn register_all(r: &mut OpImpls) {
    for op in BuiltinOp::ALL {
        r.replace_arc(op.name(), reference(op));
    }
}

/// The reference body of a built-in.
fn reference(op: BuiltinOp) -> Arc<dyn RefOp> {
    match op {
        BuiltinOp::Matmul => Arc::new(Matmul),
        BuiltinOp::MatmulAccumulate => Arc::new(MatmulAccumulate),
        BuiltinOp::MatmulNt => Arc::new(MatmulNt),
        BuiltinOp::MatmulTn => Arc::new(MatmulTn { accumulate: false }),
        BuiltinOp::MatmulTnAccumulate => Arc::new(MatmulTn { accumulate: true }),
        // On the host a put is a copy into the destination rank's tensor.
        BuiltinOp::Put | BuiltinOp::Copy => Arc::new(Copy),
        BuiltinOp::Swiglu => Arc::new(SwiGlu),
        BuiltinOp::ScaleRows => Arc::new(ScaleRows),
        BuiltinOp::Accumulate => Arc::new(Accumulate),
        BuiltinOp::WeightedAccumulate => Arc::new(WeightedAccumulate),
        BuiltinOp::GatherWeightedAccumulate => Arc::new(GatherWeightedAccumulate),
        BuiltinOp::Quantize => Arc::new(Quantize),
        BuiltinOp::Dequantize => Arc::new(Dequantize),
        BuiltinOp::Cast => Arc::new(Cast),
        BuiltinOp::Zero => Arc::new(Zero),
        BuiltinOp::SwigluBackward => Arc::new(SwigluBackward),
        BuiltinOp::ScaleRowsRepeat => Arc::new(ScaleRowsRepeat),
        BuiltinOp::RowDotTopk => Arc::new(RowDotTopk),
        BuiltinOp::SumTopk => Arc::new(SumTopk),
        BuiltinOp::GatherScaleRowsRepeat => Arc::new(GatherScaleRowsRepeat),
        BuiltinOp::GatherRowDotTopk => Arc::new(GatherRowDotTopk),
        BuiltinOp::GatherSumTopk => Arc::new(GatherSumTopk),
    }
}

fn arity(args: &[ArgDesc], n: usize) -> Result<(), String> {
    if args.len() == n { Ok(()) } else { Err(format!("takes {n} arguments, got {}", args.len())) }
}

fn float(a: &ArgDesc) -> Result<(), String> {
    if is_float(a.dtype) { Ok(()) } else { Err(format!("{} must be bf16, f16 or f32", a.describe())) }
}

fn expect(ok: bool, what: impl FnOnce() -> String) -> Result<(), String> {
    if ok { Ok(()) } else { Err(what()) }
}

fn same_elements(a: &ArgDesc, b: &ArgDesc) -> Result<(), String> {
    expect(a.elements() == b.elements(), || {
        format!("{} and {} have different element counts", a.describe(), b.describe())
    })
}

fn same_matrix(a: &ArgDesc, b: &ArgDesc) -> Result<(), String> {
    expect(a.rows() == b.rows() && a.cols() == b.cols(), || {
        format!(
            "{} ({}×{}) and {} ({}×{}) must have the same rows and columns",
            a.describe(),
            a.rows(),
            a.cols(),
            b.describe(),
            b.rows(),
            b.cols()
        )
    })
}

/// `c[M, N] = a[M, K] · b[K, N]`: each output element is `Σ_p a[i, p] · b[p, j]` summed in
/// `f32` for `p = 0, 1, …, K-1`, starting from `+0.0`, then rounded to `c`'s type.
#[derive(Debug)]
struct Matmul;

impl RefOp for Matmul {
    fn check(&self, args: &[ArgDesc]) -> Result<(), String> {
        arity(args, 3)?;
        let (a, b, c) = (&args[0], &args[1], &args[2]);
        for x in args {
            float(x)?;
        }
        expect(a.rows() == c.rows() && a.cols() == b.rows() && b.cols() == c.cols(), || {
            format!(
                "shapes do not multiply: a {}×{}, b {}×{}, c {}×{}",
                a.rows(),
                a.cols(),
                b.rows(),
                b.cols(),
                c.rows(),
                c.cols()
            )
        })
    }

    fn run(&self, args: &[Arg<'_>]) -> Result<(), String> {
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
struct MatmulAccumulate;

impl RefOp for MatmulAccumulate {
    fn check(&self, args: &[ArgDesc]) -> Result<(), String> {
        Matmul.check(args)
    }

    fn run(&self, args: &[Arg<'_>]) -> Result<(), String> {
        let sum = product(args);
        let mut c = args[2].load();
        for (c, s) in c.iter_mut().zip(sum) {
            *c += s;
        }
        args[2].store(&c)
    }
}

/// `"shapes do not multiply"` for a matmul of `a` (`ar`×`ac`), `b` and `c` as stored.
fn no_product(form: &str, a: &ArgDesc, b: &ArgDesc, c: &ArgDesc) -> String {
    format!(
        "shapes do not multiply as {form}: a {}×{}, b {}×{}, c {}×{}",
        a.rows(),
        a.cols(),
        b.rows(),
        b.cols(),
        c.rows(),
        c.cols()
    )
}

/// `c[M, N] = a[M, K] · b[N, K]ᵀ`: each output element is `Σ_p a[i, p] · b[j, p]` summed in
/// `f32` for `p = 0, 1, …, K-1`, starting from `+0.0`, then rounded to `c`'s type.
#[derive(Debug)]
struct MatmulNt;

impl RefOp for MatmulNt {
    fn check(&self, args: &[ArgDesc]) -> Result<(), String> {
        arity(args, 3)?;
        let (a, b, c) = (&args[0], &args[1], &args[2]);
        for x in args {
            float(x)?;
        }
        expect(a.rows() == c.rows() && a.cols() == b.cols() && b.rows() == c.cols(), || {
            no_product("a [M, K] · (b [N, K])ᵀ = c [M, N]", a, b, c)
        })
    }

    fn run(&self, args: &[Arg<'_>]) -> Result<(), String> {
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
struct MatmulTn {
    accumulate: bool,
}

impl RefOp for MatmulTn {
    fn check(&self, args: &[ArgDesc]) -> Result<(), String> {
        arity(args, 3)?;
        let (a, b, c) = (&args[0], &args[1], &args[2]);
        for x in args {
            float(x)?;
        }
        expect(a.cols() == c.rows() && a.rows() == b.rows() && b.cols() == c.cols(), || {
            no_product("(a [K, M])ᵀ · b [K, N] = c [M, N]", a, b, c)
        })
    }

    fn run(&self, args: &[Arg<'_>]) -> Result<(), String> {
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

/// `dst = src`, bit for bit (`put` and `copy`): same element type, same element count,
/// row-major order.
#[derive(Debug)]
struct Copy;

impl RefOp for Copy {
    fn check(&self, args: &[ArgDesc]) -> Result<(), String> {
        arity(args, 2)?;
        same_elements(&args[0], &args[1])?;
        expect(args[0].dtype == args[1].dtype, || {
            format!("{} and {} differ in type; use `cast`", args[0].describe(), args[1].describe())
        })
    }

    fn run(&self, args: &[Arg<'_>]) -> Result<(), String> {
        args[1].store_bits(&args[0].load_bits())
    }
}

/// `out[i, q] = silu(g) · u` with `g = gate_up[i, q]` and `u = gate_up[i, n + q]`, where
/// `out` has `n` columns and `gate_up` `2n`.
#[derive(Debug)]
struct SwiGlu;

impl RefOp for SwiGlu {
    fn check(&self, args: &[ArgDesc]) -> Result<(), String> {
        arity(args, 2)?;
        let (gu, out) = (&args[0], &args[1]);
        float(gu)?;
        float(out)?;
        expect(gu.rows() == out.rows() && gu.cols() == 2 * out.cols(), || {
            format!("{} must have the rows of {} and twice its columns", gu.describe(), out.describe())
        })
    }

    fn run(&self, args: &[Arg<'_>]) -> Result<(), String> {
        let n = args[1].desc().cols();
        let gu = args[0].load();
        let out: Vec<f32> =
            gu.chunks_exact(2 * n).flat_map(|row| (0..n).map(move |q| silu(row[q]) * row[n + q])).collect();
        args[1].store(&out)
    }
}

/// `dst[i, :] = src[i, :] · scale[i]`.
#[derive(Debug)]
struct ScaleRows;

impl RefOp for ScaleRows {
    fn check(&self, args: &[ArgDesc]) -> Result<(), String> {
        arity(args, 3)?;
        let (src, scale, dst) = (&args[0], &args[1], &args[2]);
        same_matrix(src, dst)?;
        expect(scale.elements() == src.rows(), || {
            format!("{} needs one scale per row of {}", scale.describe(), src.describe())
        })
    }

    fn run(&self, args: &[Arg<'_>]) -> Result<(), String> {
        let n = args[0].desc().cols();
        let (src, scale) = (args[0].load(), args[1].load());
        let out: Vec<f32> =
            src.chunks_exact(n).zip(&scale).flat_map(|(row, &s)| row.iter().map(move |&x| x * s)).collect();
        args[2].store(&out)
    }
}

/// `dst = dst + src`, elementwise, in `f32`.
#[derive(Debug)]
struct Accumulate;

impl RefOp for Accumulate {
    fn check(&self, args: &[ArgDesc]) -> Result<(), String> {
        arity(args, 2)?;
        same_elements(&args[0], &args[1])
    }

    fn run(&self, args: &[Arg<'_>]) -> Result<(), String> {
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
struct WeightedAccumulate;

impl RefOp for WeightedAccumulate {
    fn check(&self, args: &[ArgDesc]) -> Result<(), String> {
        arity(args, 3)?;
        let (src, weight, dst) = (&args[0], &args[1], &args[2]);
        expect(
            src.cols() == dst.cols() && dst.rows() > 0 && src.rows() >= dst.rows() && src.rows() % dst.rows() == 0,
            || format!("{} must have k times the rows of {} (k ≥ 1) and its columns", src.describe(), dst.describe()),
        )?;
        expect(weight.elements() == src.rows(), || {
            format!("{} needs one weight per row of {}", weight.describe(), src.describe())
        })
    }

    fn run(&self, args: &[Arg<'_>]) -> Result<(), String> {
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
struct GatherWeightedAccumulate;

impl RefOp for GatherWeightedAccumulate {
    fn check(&self, args: &[ArgDesc]) -> Result<(), String> {
        arity(args, 4)?;
        let (table, index, weight, dst) = (&args[0], &args[1], &args[2], &args[3]);
        float(table)?;
        float(weight)?;
        float(dst)?;
        expect(index.dtype == DType::I32, || format!("{} must be i32", index.describe()))?;
        expect(weight.elements() == index.elements(), || {
            format!("{} needs one weight per element of {}", weight.describe(), index.describe())
        })?;
        expect(dst.rows() == index.rows(), || {
            format!("{} needs one row per row of {} ({} rows)", dst.describe(), index.describe(), index.rows())
        })?;
        let table_rows = table.shape.first().map_or(1, |&d| d as usize);
        let row = table.elements() / table_rows.max(1);
        expect(table_rows > 0 && row == dst.cols(), || {
            format!(
                "the rows of {} (every dimension but the first: {row} elements) must be as long as the rows of {}",
                table.describe(),
                dst.describe()
            )
        })
    }

    fn run(&self, args: &[Arg<'_>]) -> Result<(), String> {
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
                    format!(
                        "index[{i}, {j}] = {slot} is out of range: {} has {table_rows} rows",
                        table.desc().describe()
                    )
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
struct Quantize;

impl RefOp for Quantize {
    fn check(&self, args: &[ArgDesc]) -> Result<(), String> {
        arity(args, 3)?;
        let (src, dst, scale) = (&args[0], &args[1], &args[2]);
        float(src)?;
        float(scale)?;
        expect(dst.dtype == DType::I8, || format!("{} must be i8", dst.describe()))?;
        same_matrix(src, dst)?;
        expect(scale.elements() == src.rows(), || {
            format!("{} needs one scale per row of {}", scale.describe(), src.describe())
        })
    }

    fn run(&self, args: &[Arg<'_>]) -> Result<(), String> {
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
struct Dequantize;

impl RefOp for Dequantize {
    fn check(&self, args: &[ArgDesc]) -> Result<(), String> {
        arity(args, 3)?;
        let (src, scale, dst) = (&args[0], &args[1], &args[2]);
        float(dst)?;
        same_matrix(src, dst)?;
        expect(scale.elements() == src.rows(), || {
            format!("{} needs one scale per row of {}", scale.describe(), src.describe())
        })
    }

    fn run(&self, args: &[Arg<'_>]) -> Result<(), String> {
        ScaleRows.run(args)
    }
}

/// `dst = src` converted to `dst`'s type (through `f32`).
#[derive(Debug)]
struct Cast;

impl RefOp for Cast {
    fn check(&self, args: &[ArgDesc]) -> Result<(), String> {
        arity(args, 2)?;
        same_elements(&args[0], &args[1])
    }

    fn run(&self, args: &[Arg<'_>]) -> Result<(), String> {
        args[1].store(&args[0].load())
    }
}

/// `dst = 0` (`+0.0` for floating-point types).
#[derive(Debug)]
struct Zero;

impl RefOp for Zero {
    fn check(&self, args: &[ArgDesc]) -> Result<(), String> {
        arity(args, 1)
    }

    fn run(&self, args: &[Arg<'_>]) -> Result<(), String> {
        args[0].store(&vec![0.0; args[0].desc().elements()])
    }
}

/// `k` for the top-k ops: `many` has `k ≥ 1` rows per row of `few` and the same columns.
fn top_k(many: &ArgDesc, few: &ArgDesc) -> Result<usize, String> {
    expect(
        many.cols() == few.cols()
            && few.rows() > 0
            && many.rows() >= few.rows()
            && many.rows().is_multiple_of(few.rows()),
        || format!("{} must have k times the rows of {} (k ≥ 1) and its columns", many.describe(), few.describe()),
    )?;
    Ok(many.rows() / few.rows())
}

/// The SwiGLU gradient ([`swiglu_grad`] per element): with `d_act` of `w` columns and
/// `gate_up`, `d_gate_up` of `2w` and the same rows, for each row `i` and `q < w`,
/// `(d_gate_up[i, q], d_gate_up[i, w + q]) = swiglu_grad(gate_up[i, q], gate_up[i, w + q], d_act[i, q])`,
/// each rounded once into `d_gate_up`'s type.
#[derive(Debug)]
struct SwigluBackward;

impl RefOp for SwigluBackward {
    fn check(&self, args: &[ArgDesc]) -> Result<(), String> {
        arity(args, 3)?;
        let (gu, d, dgu) = (&args[0], &args[1], &args[2]);
        for x in args {
            float(x)?;
        }
        same_matrix(gu, dgu)?;
        expect(gu.rows() == d.rows() && gu.cols() == 2 * d.cols(), || {
            format!("{} must have the rows of {} and twice its columns", gu.describe(), d.describe())
        })
    }

    fn run(&self, args: &[Arg<'_>]) -> Result<(), String> {
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
struct ScaleRowsRepeat;

impl RefOp for ScaleRowsRepeat {
    fn check(&self, args: &[ArgDesc]) -> Result<(), String> {
        arity(args, 3)?;
        let (src, weights, dst) = (&args[0], &args[1], &args[2]);
        float(dst)?;
        top_k(dst, src)?;
        expect(weights.elements() == dst.rows(), || {
            format!("{} needs one weight per row of {} (T·k = {})", weights.describe(), dst.describe(), dst.rows())
        })
    }

    fn run(&self, args: &[Arg<'_>]) -> Result<(), String> {
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
struct RowDotTopk;

impl RefOp for RowDotTopk {
    fn check(&self, args: &[ArgDesc]) -> Result<(), String> {
        arity(args, 3)?;
        let (a, b, dw) = (&args[0], &args[1], &args[2]);
        float(dw)?;
        top_k(b, a)?;
        expect(dw.elements() == b.rows(), || {
            format!("{} needs one element per row of {} (T·k = {})", dw.describe(), b.describe(), b.rows())
        })
    }

    fn run(&self, args: &[Arg<'_>]) -> Result<(), String> {
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
struct SumTopk;

impl RefOp for SumTopk {
    fn check(&self, args: &[ArgDesc]) -> Result<(), String> {
        arity(args, 2)?;
        float(&args[1])?;
        top_k(&args[0], &args[1]).map(|_| ())
    }

    fn run(&self, args: &[Arg<'_>]) -> Result<(), String> {
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

/// The rows a gathering op's `index` picks: its elements as `i32` (read as bits: i32 values are
/// exact in `f32` only up to 2^24).
fn indices(index: &Arg<'_>) -> Vec<i32> {
    index.load_bits().into_iter().map(|b| b as i32).collect()
}

/// `table` (an argument whose first extent counts its rows) and `index` (i32), as every
/// gathering op takes them: the number of table rows and the length of one, checked.
fn gather_table(table: &ArgDesc, index: &ArgDesc) -> Result<(usize, usize), String> {
    float(table)?;
    expect(index.dtype == DType::I32, || format!("{} must be i32", index.describe()))?;
    let rows = table.shape.first().map_or(0, |&d| d as usize);
    expect(rows > 0, || format!("{} has no rows to gather", table.describe()))?;
    Ok((rows, table.elements() / rows))
}

/// Row `row` of gather table `table` (the `[i, j]` element of `index` for messages), or an
/// error if it is past the table.
fn gathered_row(table: &Arg<'_>, row: i32, at: impl FnOnce() -> String) -> Result<Vec<f32>, String> {
    usize::try_from(row).ok().and_then(|r| table.load_outer(r)).ok_or_else(|| {
        format!("{} = {row} is out of range: {} has {} rows", at(), table.desc().describe(), table.desc().shape[0])
    })
}

/// The gathering form of [`ScaleRowsRepeat`]: with `table` of `T` rows (its first extent),
/// `weights` `[T, k]` (`k` its last extent), `index` of `N` elements and `dst` of `N` rows as
/// long as `table`'s, `dst[j, :] = weights[i] · table[i / k, :]` for the choice `i = index[j]`
/// (`i / k` its token, `weights` read row-major), one `f32` product per element, rounded once;
/// `dst[j, :] = +0.0` where `index[j] < 0` (a padding row of a send slot). An index at or past
/// `T·k` is an error.
#[derive(Debug)]
struct GatherScaleRowsRepeat;

impl RefOp for GatherScaleRowsRepeat {
    fn check(&self, args: &[ArgDesc]) -> Result<(), String> {
        arity(args, 4)?;
        let (table, index, weights, dst) = (&args[0], &args[1], &args[2], &args[3]);
        let (rows, row) = gather_table(table, index)?;
        float(weights)?;
        float(dst)?;
        expect(weights.rows() == rows, || {
            format!("{} needs one row of weights per row of {} ({rows})", weights.describe(), table.describe())
        })?;
        expect(index.elements() == dst.rows(), || {
            format!("{} needs one index per row of {} ({} rows)", index.describe(), dst.describe(), dst.rows())
        })?;
        expect(row == dst.cols(), || {
            format!(
                "the rows of {} ({row} elements) must be as long as the rows of {}",
                table.describe(),
                dst.describe()
            )
        })
    }

    fn run(&self, args: &[Arg<'_>]) -> Result<(), String> {
        let (table, weights, dst) = (&args[0], args[2].load(), &args[3]);
        let (k, n) = (args[2].desc().cols().max(1), dst.desc().cols());
        let mut out = Vec::with_capacity(dst.desc().elements());
        for (j, &choice) in indices(&args[1]).iter().enumerate() {
            if choice < 0 {
                out.extend(std::iter::repeat_n(0.0f32, n));
                continue;
            }
            let w = *weights.get(choice as usize).ok_or_else(|| {
                format!(
                    "index[{j}] = {choice} is out of range: {} has {} choices",
                    args[2].desc().describe(),
                    weights.len()
                )
            })?;
            let row = gathered_row(table, choice / k as i32, || format!("the token of index[{j}]"))?;
            out.extend(row.iter().map(|&x| w * x));
        }
        dst.store(&out)
    }
}

/// The gathering form of [`RowDotTopk`]: with `index` and `d_weights` of `T·k` elements
/// (`[T, k]`, `k` the last extent of `index`), `a` of `T` rows and `table` rows as long as
/// `a`'s, `d_weights[t, c] = Σ_h a[t, h] · table[index[t, c], h]` summed in `f32` for
/// `h = 0, 1, …` from `+0.0`, rounded once; `+0.0` where `index[t, c] < 0` (a dropped choice).
#[derive(Debug)]
struct GatherRowDotTopk;

impl RefOp for GatherRowDotTopk {
    fn check(&self, args: &[ArgDesc]) -> Result<(), String> {
        arity(args, 4)?;
        let (table, index, a, dw) = (&args[0], &args[1], &args[2], &args[3]);
        let (_, row) = gather_table(table, index)?;
        float(a)?;
        float(dw)?;
        expect(index.rows() == a.rows(), || {
            format!("{} needs one row of indices per row of {} ({})", index.describe(), a.describe(), a.rows())
        })?;
        expect(dw.elements() == index.elements(), || {
            format!("{} needs one element per element of {}", dw.describe(), index.describe())
        })?;
        expect(row == a.cols(), || {
            format!("the rows of {} ({row} elements) must be as long as the rows of {}", table.describe(), a.describe())
        })
    }

    fn run(&self, args: &[Arg<'_>]) -> Result<(), String> {
        let (table, a) = (&args[0], args[2].load());
        let (k, n) = (args[1].desc().cols().max(1), args[2].desc().cols());
        let mut out = Vec::new();
        for (i, &slot) in indices(&args[1]).iter().enumerate() {
            if slot < 0 {
                out.push(0.0f32);
                continue;
            }
            let y = gathered_row(table, slot, || format!("index[{}, {}]", i / k, i % k))?;
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

/// The gathering form of [`SumTopk`]: with `index` `[T, k]` (`k` its last extent) and `dst` of
/// `T` rows as long as `table`'s, `dst[t, :] = Σ_c table[index[t, c], :]` over the `c` with
/// `index[t, c] ≥ 0`, summed in `f32` for `c = 0, 1, …, k-1` from `+0.0`, rounded once.
#[derive(Debug)]
struct GatherSumTopk;

impl RefOp for GatherSumTopk {
    fn check(&self, args: &[ArgDesc]) -> Result<(), String> {
        arity(args, 3)?;
        let (table, index, dst) = (&args[0], &args[1], &args[2]);
        let (_, row) = gather_table(table, index)?;
        float(dst)?;
        expect(index.rows() == dst.rows(), || {
            format!("{} needs one row of indices per row of {} ({})", index.describe(), dst.describe(), dst.rows())
        })?;
        expect(row == dst.cols(), || {
            format!(
                "the rows of {} ({row} elements) must be as long as the rows of {}",
                table.describe(),
                dst.describe()
            )
        })
    }

    fn run(&self, args: &[Arg<'_>]) -> Result<(), String> {
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
                let row = gathered_row(table, slot, || format!("index[{t}, {c}]"))?;
                for (acc, &x) in acc_row.iter_mut().zip(&row) {
                    *acc += x;
                }
            }
        }
        dst.store(&out)
    }
}
