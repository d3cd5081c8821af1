use hpmoe_core::dsl::*;
use hpmoe_macros::taskflow;

#[taskflow(profile = small(1), ranks = 2)]
fn t() {
    const Y: Tensor<F32> = output([4]);

    #[tile(aiv, grid(i in 0..4))]
    fn fill(j: Idx) {
        zero(Y.at(j));
    }
}

fn main() {}
