//! [`run_if_above`]: the guard of a tile whose work depends on a count known only at run time.

use super::{Idx, Region};

/// Runs the tile's body only when the `i32` element `count` holds a value greater than
/// `above`; otherwise the instance does no work, but it still waits for its inputs and
/// signals its waiters, so the static schedule stays as it is (see
/// [`crate::model::Guard`]).
///
/// For buffers padded to a capacity: a tile on rows `b * B .. b * B + B` of a buffer holding
/// `count` valid rows runs when at least one of its rows is valid:
///
/// ```text
/// #[tile(aic, grid(e in 0..E, b in 0..C / B))]
/// fn gmm(e: Idx, b: Idx) {
///     run_if_above(COUNTS.at(e), b * B);
///     matmul(RECV.at(e).slice(b * B, B), W.at(e), Y.at(e).slice(b * B, B));
/// }
/// ```
///
/// A tile has at most one guard, written before its ops (`let` bindings may come first). The
/// count is one element (index every dimension) of an `i32` tensor on the executing rank,
/// written by an earlier tile (a put from another rank, for instance) or a kernel input; the
/// tile depends on whoever writes it, and may not write it itself. `above` is an index
/// expression like a region's start. Like the rest of the vocabulary this is symbolic:
/// `#[taskflow]` reads the call; the function does nothing.
pub fn run_if_above(count: impl Into<Region>, above: impl Into<Idx>) {
    let _ = (count.into(), above.into());
}
