//! Tile families that exist only at some sizes: one layout, a chain of accumulating tiles
//! when there is more than one group, none when there is one.
use hpmoe_core::dsl::*;
use hpmoe_macros::taskflow;

#[taskflow(profile = small(1), ranks = 1)]
fn groups() {
    const ROWS: u64 = 8;
    const G: u64 = 4; // rows per group
    const X: Tensor<F32> = input([ROWS, 8]);
    const SUM: Tensor<F32> = output([1, 8]);

    #[tile(aiv)]
    fn first() {
        copy(X.slice(0, 1), SUM.all());
    }

    /// Groups 1.. of the rows, in order; there are none when G is all of them.
    #[tile(aiv, grid(m in 0..ROWS / G - 1), after(rest(m - 1)), when(ROWS / G > 1 && !(G == 0)))]
    fn rest(m: Idx) {
        accumulate(X.slice((m + 1) * G, 1), SUM.all());
    }
}

#[taskflow(profile = small(1), ranks = 1)]
fn one_group() {
    const ROWS: u64 = 8;
    const G: u64 = 8;
    const X: Tensor<F32> = input([ROWS, 8]);
    const SUM: Tensor<F32> = output([1, 8]);

    #[tile(aiv)]
    fn first() {
        copy(X.slice(0, 1), SUM.all());
    }

    /// Left out: its grid would be empty.
    #[tile(aiv, grid(m in 0..ROWS / G - 1), after(rest(m - 1)), when(ROWS / G > 1))]
    fn rest(m: Idx) {
        accumulate(X.slice((m + 1) * G, 1), SUM.all());
    }
}

fn main() {
    let names = |p: Program| p.taskflow().unwrap().families.iter().map(|f| f.name.clone()).collect::<Vec<_>>();
    assert_eq!(names(groups()), ["first", "rest"]);
    assert_eq!(names(one_group()), ["first"]);
}
