use hpmoe_core::dsl::*;
use hpmoe_macros::taskflow;

#[taskflow(profile = small(1), ranks = 2)]
fn t() {
    const X: Tensor<F32> = output([64]);

    #[tile(aiv, grid(i in 0..0))]
    fn fill(i: Idx) {
        zero(X.at(i));
    }
}

fn main() {}
