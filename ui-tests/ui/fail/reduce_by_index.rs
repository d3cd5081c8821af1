use hpmoe_core::dsl::*;
use hpmoe_macros::taskflow;

#[taskflow(profile = small(1), ranks = 2)]
fn t() {
    const Y: Tensor<F32> = output([64]);
    #[tile(aiv, grid(i in 0..4, j in 0..4))]
    fn clear(i: Idx, j: Idx) {
        zero(Y.at((i + RANK) % j * 4));
        zero(Y.at(i / 0));
        zero(Y.at((i + RANK) / (j + 1)));
    }
}

fn main() {}
