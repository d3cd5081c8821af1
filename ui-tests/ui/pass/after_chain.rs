//! Dependencies inside a tile family, and ranges of instances in `after`.
use hpmoe_core::dsl::*;
use hpmoe_macros::taskflow;

#[taskflow(profile = small(2), ranks = 2)]
fn chains() {
    const E: u64 = 2;
    const S: u64 = 4;
    const X: Tensor<F32> = input([E, S, 8]);
    const SUMS: Tensor<F32> = output([E, S + 1, 8]);
    const BACK: Tensor<F32> = output([E, S + 1, 8]);
    const MARKS: Tensor<F32> = output([E, 8]);

    #[tile(aiv, grid(e in 0..E))]
    fn start(e: Idx) {
        zero(SUMS.at(e).at(0));
        zero(BACK.at(e).at(S));
    }

    /// A running sum along `s`: `step(e, 0)` has no `step` to wait for.
    #[tile(aiv, grid(e in 0..E, s in 0..S), after(step(e, s - 1)))]
    fn step(e: Idx, s: Idx) {
        copy(SUMS.at(e).at(s), SUMS.at(e).at(s + 1));
        accumulate(X.at(e).at(s), SUMS.at(e).at(s + 1));
    }

    /// The same from the other end: `back(e, S - 1)` runs first.
    #[tile(aiv, grid(e in 0..E, s in 0..S), after(back(e, s + 1)))]
    fn back(e: Idx, s: Idx) {
        copy(BACK.at(e).at(s + 1), BACK.at(e).at(s));
        accumulate(X.at(e).at(s), BACK.at(e).at(s));
    }

    /// Waits for a block of instances: all of `step(e, ..)`, written as a range.
    #[tile(aiv, grid(e in 0..E), after(step(e, 0..S), back(e, ..=S - 1)))]
    fn mark(e: Idx) {
        zero(MARKS.at(e));
    }
}

fn main() {
    let program = chains();
    assert!(program.table().is_ok());
}
