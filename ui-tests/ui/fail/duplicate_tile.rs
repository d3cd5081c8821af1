use hpmoe_core::dsl::*;
use hpmoe_macros::taskflow;

#[taskflow(profile = small(1), ranks = 2)]
fn t() {
    const X: Tensor<F32> = output([4]);
    const Y: Tensor<F32> = output([4]);

    #[tile(aiv, grid(i in 0..4))]
    fn fill(i: Idx) {
        zero(X.at(i));
    }

    #[tile(aiv, grid(i in 0..4))]
    fn fill(i: Idx) {
        zero(Y.at(i));
    }
}

fn main() {}
