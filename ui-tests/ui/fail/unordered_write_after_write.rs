use hpmoe_core::dsl::*;
use hpmoe_macros::taskflow;

#[taskflow(profile = small(1), ranks = 2)]
fn t() {
    const Y: Tensor<F32> = output([4, 16]);

    #[tile(aiv, grid(i in 0..4))]
    fn first(i: Idx) {
        zero(Y.at(i));
    }

    #[tile(aiv, grid(i in 0..4))]
    fn second(i: Idx) {
        zero(Y.at(i));
    }
}

fn main() {}
