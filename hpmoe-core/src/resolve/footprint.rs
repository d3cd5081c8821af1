//! Buffer footprint: what one op of a tile must hold in its core's local buffer at once,
//! against the unified buffer of an AIV core ([`UB_BYTES`]) or the L1 of an AIC core
//! ([`L1_BYTES`]).
//!
//! Ops stream global memory through the local buffer, so the footprint is not the size of
//! the regions but of the pieces an op must hold together. The estimate:
//!
//! - **matmul** (`WorkModel::Matmul`, `c[M,N] = a[M,K] · b[K,N]`) stages K in steps of
//!   [`MATMUL_K_STEP`] elements, as the Matmul high-level API does: it holds an M × k panel
//!   of `a` and a k × N panel of `b` (k = min(K, step)), each double-buffered so the next
//!   panel loads while the cube works. `c` leaves through L0C, not L1. The transposed forms
//!   (`WorkModel::MatmulNt`, `WorkModel::MatmulTn`) hold the same panels, read from `b`
//!   `[N, K]` or `a` `[K, M]`.
//! - **fence** (`WorkModel::Order`) holds nothing: it moves no data.
//! - **every other op** (vector work, copies, puts) streams its arguments row by row: it
//!   holds one innermost row (the region's extent in the tensor's last dimension) of every
//!   argument, each double-buffered.
//!
//! Every buffer is rounded up to [`BUFFER_ALIGN`] bytes. The ops of a tile run one after
//! another, each with its own buffers, so a tile's footprint is that of its largest op.
//! The estimate is a floor: real kernels also keep temporaries, so passing it does not prove
//! an emitted kernel fits; failing it proves a tile cannot be written as one streaming op.

use super::Resolved;
use crate::error::{Diagnostic, Diagnostics, ErrorKind};
use crate::limits::{BUFFER_ALIGN, L1_BYTES, MATMUL_K_STEP, UB_BYTES};
use crate::model::{CoreKind, OpSpec, Region, TensorDecl, WorkModel};

/// Double buffering: one piece is computed while the next one loads.
const BUFFERS: u64 = 2;

/// The buffer an op of core kind `core` works in, and its size in bytes.
pub fn local_buffer(core: CoreKind) -> (&'static str, u64) {
    match core {
        CoreKind::Aic => ("L1", L1_BYTES),
        CoreKind::Aiv => ("UB", UB_BYTES),
    }
}

/// One buffer an op needs: which argument, what piece of it, how many bytes (one copy).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Piece {
    /// The op parameter the buffer holds (a piece of its argument).
    pub param: String,
    /// The tensor that argument is a region of.
    pub tensor: String,
    /// `a 7168-element row` or `a 128 x 64 panel`.
    pub what: String,
    /// Bytes of one copy of the buffer.
    pub bytes: u64,
}

/// The pieces op `spec` holds at once when called on `args` (see the module docs).
/// `tensors[i]` is the declaration of `args[i]`'s tensor.
pub fn op_pieces(spec: &OpSpec, args: &[Region], tensors: &[&TensorDecl]) -> Vec<Piece> {
    let shape = |i: usize| region_shape(&args[i], tensors[i]);
    let piece = |i: usize, rows: u64, cols: u64, what: String| Piece {
        param: spec.params.get(i).map_or_else(|| format!("#{i}"), |p| p.name.clone()),
        tensor: tensors[i].name.clone(),
        what,
        bytes: align(rows.saturating_mul(cols).saturating_mul(tensors[i].dtype.size_bytes())),
    };
    match spec.work {
        work if work.is_matmul() && args.len() >= 2 => {
            let (a, b) = (shape(0), shape(1));
            let rows = |s: &[u64]| s.iter().rev().skip(1).fold(1u64, |acc, &e| acc.saturating_mul(e));
            let last = |s: &[u64]| s.last().copied().unwrap_or(1);
            // (m, k) of a's panel and (k, n) of b's, whichever way each is stored.
            let (m, k, n) = match work {
                WorkModel::MatmulTn => (last(&a), rows(&a), last(&b)),
                WorkModel::MatmulNt => (rows(&a), last(&a), rows(&b)),
                _ => (rows(&a), last(&a), last(&b)),
            };
            let k = k.min(MATMUL_K_STEP);
            vec![piece(0, m, k, format!("a {m} x {k} panel")), piece(1, k, n, format!("a {k} x {n} panel"))]
        }
        // An op that only orders holds nothing.
        WorkModel::Order => Vec::new(),
        _ => (0..args.len())
            .map(|i| {
                let cols = shape(i).last().copied().unwrap_or(1);
                piece(i, 1, cols, format!("a {cols}-element row"))
            })
            .collect(),
    }
}

/// Bytes all `pieces` take together, double-buffered.
pub fn footprint(pieces: &[Piece]) -> u64 {
    pieces.iter().fold(0u64, |acc, p| acc.saturating_add(p.bytes.saturating_mul(BUFFERS)))
}

/// Reports every tile whose largest op does not fit its core's local buffer, at that op.
pub fn check_footprint(r: &Resolved<'_>) -> Diagnostics {
    let tf = r.tf;
    let mut d = Diagnostics::default();
    for (f, calls) in tf.families.iter().zip(&r.calls) {
        let (buffer, capacity) = local_buffer(f.core);
        let worst = f
            .body
            .iter()
            .zip(calls)
            .map(|(call, resolved)| {
                let decls: Vec<&TensorDecl> = resolved.tensors.iter().map(|&t| &tf.tensors[t]).collect();
                let pieces = op_pieces(resolved.spec, &call.args, &decls);
                (footprint(&pieces), call, resolved.spec, pieces)
            })
            .max_by_key(|(bytes, ..)| *bytes);
        let Some((bytes, call, spec, pieces)) = worst else { continue };
        if bytes > capacity {
            let (what, help) = match spec.work {
                WorkModel::Matmul | WorkModel::MatmulNt | WorkModel::MatmulTn => {
                    ("panels", "use fewer output columns per tile (a narrower `b` panel) or fewer rows")
                }
                _ => ("rows", "split the innermost dimension across tiles, so that one row of each argument fits"),
            };
            let parts: Vec<String> =
                pieces.iter().map(|p| format!("{} of `{}` ({})", p.what, p.tensor, kib(p.bytes))).collect();
            d.push(
                Diagnostic::new(
                    ErrorKind::FootprintTooLarge,
                    call.loc,
                    format!(
                        "tile `{}` needs {} of {buffer} for `{}`, but an {} core has {}: it holds {}; {what} are \
                         double-buffered",
                        f.name,
                        kib(bytes),
                        call.op,
                        f.core,
                        kib(capacity),
                        parts.join(" and ")
                    ),
                )
                .help(help),
            );
        }
    }
    d
}

/// Extent of each dimension of `region` in `tensor` (dimensions past the region's own are whole).
fn region_shape(region: &Region, tensor: &TensorDecl) -> Vec<u64> {
    tensor.shape.iter().enumerate().map(|(k, &extent)| region.dims.get(k).map_or(extent, |d| d.len)).collect()
}

fn align(bytes: u64) -> u64 {
    bytes.div_ceil(BUFFER_ALIGN).saturating_mul(BUFFER_ALIGN)
}

/// `1.5 KiB`, `512 KiB`, `40 B`.
fn kib(bytes: u64) -> String {
    if bytes < 1024 {
        format!("{bytes} B")
    } else if bytes.is_multiple_of(1024) {
        format!("{} KiB", bytes / 1024)
    } else {
        format!("{:.1} KiB", bytes as f64 / 1024.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{DType, MachineProfile, Taskflow};
    use crate::resolve::check_structure;

    fn errors(tf: &Taskflow) -> Diagnostics {
        check_footprint(&check_structure(tf).unwrap())
    }

    #[test]
    fn a_matmul_with_a_wide_b_panel_overflows_l1() {
        let mut tf = Taskflow::new("t", MachineProfile::small(1, 1));
        let a = tf.input("a", DType::Bf16, &[128, 256]);
        let b = tf.input("b", DType::Bf16, &[256, 4096]);
        let c = tf.output("c", DType::F32, &[128, 4096]);
        tf.tile("mm", CoreKind::Aic, |t| {
            t.grid("i", 1);
            t.op("matmul", [a.whole(), b.whole(), c.whole()]);
        });
        let d = errors(&tf);
        assert_eq!(d.kinds(), vec![ErrorKind::FootprintTooLarge]);
        // a: 128 x 64 x 2 B = 16 KiB, b: 64 x 4096 x 2 B = 512 KiB; doubled = 1056 KiB.
        assert_eq!(
            d.errors[0].message,
            "tile `mm` needs 1056 KiB of L1 for `matmul`, but an aic core has 512 KiB: it holds a 128 x 64 panel of \
             `a` (16 KiB) and a 64 x 4096 panel of `b` (512 KiB); panels are double-buffered"
        );
        // Half as many columns fit: (16 + 256) * 2 = 544 KiB is still too much, a quarter is not.
        let mut tf = Taskflow::new("t", MachineProfile::small(1, 1));
        let a = tf.input("a", DType::Bf16, &[128, 256]);
        let b = tf.input("b", DType::Bf16, &[256, 1024]);
        let c = tf.output("c", DType::F32, &[128, 1024]);
        tf.tile("mm", CoreKind::Aic, |t| {
            t.grid("i", 1);
            t.op("matmul", [a.whole(), b.whole(), c.whole()]);
        });
        assert!(errors(&tf).is_empty());
    }

    #[test]
    fn a_vector_op_must_hold_one_row_of_every_argument() {
        let mut tf = Taskflow::new("t", MachineProfile::small(1, 1));
        let x = tf.input("x", DType::F32, &[4, 16384]);
        let y = tf.output("y", DType::F32, &[4, 16384]);
        tf.tile("cp", CoreKind::Aiv, |t| {
            let i = t.grid("i", 4);
            t.op("zero", [y.at(i.clone())]);
            t.op("copy", [x.at(i.clone()), y.at(i)]);
        });
        let d = errors(&tf);
        assert_eq!(d.kinds(), vec![ErrorKind::FootprintTooLarge]);
        // 2 arguments x 64 KiB rows x 2 buffers = 256 KiB > 192 KiB; the one-argument
        // `zero` (128 KiB) fits, and the error points at the larger `copy`.
        assert!(d.errors[0].message.starts_with("tile `cp` needs 256 KiB of UB for `copy`"), "{}", d);
        assert_eq!(d.errors[0].loc, tf.families[0].body[1].loc);
    }

    #[test]
    fn sizes_are_aligned_and_printed_readably() {
        assert_eq!(align(1), 32);
        assert_eq!(align(64), 64);
        assert_eq!(kib(40), "40 B");
        assert_eq!(kib(1536), "1.5 KiB");
        assert_eq!(kib(2048), "2 KiB");
    }
}
