use hpmoe_core::dsl::*;
use hpmoe_macros::taskflow;

#[taskflow(profile = small(1), ranks = 1)]
fn t() {
    const N: u64 = 2_000_000;
    const X: Tensor<F32> = output([N]);

    #[tile(aiv, grid(i in 0..N))]
    fn fill(i: Idx) {
        zero(X.at(i));
    }
}

fn main() {}
