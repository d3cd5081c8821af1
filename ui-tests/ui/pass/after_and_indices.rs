//! Explicit dependencies (`after` with index maps, `..` and bare names), rotated put
//! destinations (`% RANKS`), `let` bindings, inclusive ranges and compile-time arithmetic.

use hpmoe_core::dsl::*;
use hpmoe_core::model::{Affine, IndexSel};
use hpmoe_macros::taskflow;

#[taskflow(profile = small(1), ranks = 4)]
fn ring() {
    const LOG_N: u32 = 3;
    const N: u64 = 1 << LOG_N; // rows per rank block
    const C: u64 = (N * 4) as u64 - 16; // 16 columns
    const BLOCKS: u64 = RANKS;
    const X: Tensor<F32> = input([BLOCKS * N, C]);
    const RECV: Tensor<F32> = symmetric([RANKS * N, C]);
    const FLAGS: Tensor<I32> = output([RANKS, 4]);

    /// Rank r sends block d to rank (r + d) % RANKS: every rank writes a different peer.
    #[tile(aiv, grid(d in 0..=RANKS - 1))]
    fn send(d: Idx) {
        let dst = (RANK + d) % RANKS;
        let rows = RANK * N;
        put(X.slice(d * N, N), RECV.on(dst).slice(rows, N));
    }

    #[tile(aiv, grid(s in 0..RANKS))]
    fn mark(s: Idx) {
        zero(FLAGS.at(s));
    }

    /// Runs after every mark, and after the marks of the same index explicitly.
    #[tile(aiv, grid(s in 0..RANKS, h in 0..2), after(mark, mark(s)))]
    fn check(s: Idx, h: Idx) {
        let half = h * (C / 2);
        copy(RECV.slice(s * N, N).slice(half, C / 2), RECV.slice(s * N, N).slice(half, C / 2));
    }

    #[tile(aiv, grid(s in 0..RANKS), after(check(s, ..)))]
    fn done(s: Idx) {
        accumulate(FLAGS.at(s), FLAGS.at(s));
    }
}

fn main() {
    let tf = ring().taskflow().unwrap();
    assert_eq!(tf.tensors[0].shape.as_slice(), [32, 16]);
    let send = &tf.families[0];
    assert_eq!(send.grid[0].extent, 4);
    let dst = &send.body[0].args[1];
    assert_eq!(dst.rank, hpmoe_core::model::RankSel::Remote((Affine::rank() + Affine::index(0)).modulo(4)));
    let check = &tf.families[2];
    assert_eq!(check.after.len(), 2);
    assert_eq!(check.after[0].indices.as_slice(), [IndexSel::All]);
    assert_eq!(check.after[1].indices.as_slice(), [IndexSel::At(Affine::index(0))]);
    let done = &tf.families[3];
    assert_eq!(done.after[0].indices.as_slice(), [IndexSel::At(Affine::index(0)), IndexSel::All]);
    let table = ring().table().unwrap();
    assert_eq!(table.entries().len(), (4 + 4 + 8 + 4) * 4);
}
