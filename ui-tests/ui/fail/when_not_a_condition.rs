use hpmoe_core::dsl::*;
use hpmoe_macros::taskflow;

#[taskflow(profile = small(1), ranks = 1)]
fn t() {
    const N: u64 = 2;
    const X: Tensor<F32> = output([4, 8]);

    /// A count, not a condition.
    #[tile(aiv, grid(i in 0..4), when(N - 1))]
    fn clear(i: Idx) {
        zero(X.at(i));
    }
}

fn main() {}
