use hpmoe_core::dsl::*;
use hpmoe_macros::taskflow;

#[taskflow(profile = small(1), ranks = 2)]
fn t() {
    const X: Tensor<F32> = output([64]);

    #[tile(aiv, grid(i in 0..4))]
    fn fill(i: Idx) {
        zero(X.slice(i * 16 + 8, 16));
    }
}

fn main() {}
