use hpmoe_core::dsl::*;
use hpmoe_macros::taskflow;

#[taskflow(profile = small(1), ranks = 1)]
fn t() {
    const N: u64 = 1;
    const X: Tensor<F32> = output([4, 8]);

    /// Left out at this size.
    #[tile(aiv, grid(i in 0..N - 1), when(N > 1))]
    fn extra(i: Idx) {
        zero(X.at(i));
    }

    #[tile(aiv, grid(i in 0..4), after(extra))]
    fn clear(i: Idx) {
        zero(X.at(i));
    }
}

fn main() {}
