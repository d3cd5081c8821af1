use hpmoe_core::dsl::*;
use hpmoe_macros::taskflow;

#[taskflow(profile = small(1), ranks = 2)]
fn t() {
    const Y: Tensor<F32> = output([4, 4]);

    #[tile(aiv, grid(e in 0..4, m in 0..4))]
    fn fill(e: Idx) {
        zero(Y.at(e));
    }
}

fn main() {}
