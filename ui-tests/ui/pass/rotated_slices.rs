//! A remainder or quotient by a constant is an index like any other: scaled and added to, it
//! gives a rotated slice start — the rows of source rank `(RANK + k) % RANKS`, a block of
//! them, the group of ranks `RANK / 2` belongs to.

use hpmoe_core::dsl::*;
use hpmoe_core::model::{Affine, Reduce};
use hpmoe_macros::taskflow;

#[taskflow(profile = small(1), ranks = 4)]
fn rotated() {
    const S: u64 = 8; // rows per source rank
    const B: u64 = 4; // rows per block
    const X: Tensor<F32> = input([RANKS * S, 16]);
    const Y: Tensor<F32> = output([RANKS * S, 16]);

    /// Step k copies block b of the rows of source rank (RANK + k) % RANKS, one step after another.
    #[tile(aiv, grid(k in 0..RANKS, b in 0..S / B), after(step(k - 1, b)))]
    fn step(k: Idx, b: Idx) {
        let rows = (RANK + k) % RANKS * S + b * B;
        copy(X.slice(rows, B), Y.slice(rows, B));
    }

    /// The other pair of ranks' rows: (RANK / 2 + 1) % 2 of the two pairs.
    #[tile(aiv, grid(h in 0..2), after(step))]
    fn other_pair(h: Idx) {
        let rows = (RANK / 2 + 1) % 2 * (2 * S) + h * S;
        copy(X.slice(rows, S), Y.slice(rows, S));
    }
}

fn main() {
    let tf = rotated().taskflow().unwrap();
    let start = &tf.families[0].body[0].args[0].dims[0].start;
    let expected = (Affine::rank() + Affine::index(0)).modulo(4) * 8 + Affine::index(1) * 4;
    assert_eq!(*start, expected);
    assert_eq!(start.eval(&[3, 1], 2), Ok(8 + 4)); // rank 2, k 3: source 1
    let pair = &tf.families[1].body[0].args[0].dims[0].start;
    assert_eq!(*pair, (Affine::rank().quotient(2) + 1).modulo(2) * 16 + Affine::index(0) * 8);
    assert_eq!([0, 1, 2, 3].map(|r| pair.eval(&[0], r)), [Ok(16), Ok(16), Ok(0), Ok(0)]);
    assert!(matches!(pair.parts[0].0.inner.parts[0].0.op, Reduce::Div(2)));
    rotated().table().unwrap();
}
