use hpmoe_core::dsl::*;
use hpmoe_macros::taskflow;

#[taskflow(profile = small(1), ranks = 2)]
fn t() {
    const Y: Tensor<F32> = output([64]);
    const Z: Tensor<F32> = output([64]);
    #[tile(aiv, grid(i in 0..4, j in 0..4))]
    fn clear(i: Idx, j: Idx) {
        zero(Y.at((i + RANK) % 4 * 4));
        zero(Z.at((i + RANK) % 4 * 4 + j));
    }
}

fn main() {}
