use hpmoe_core::dsl::*;
use hpmoe_macros::taskflow;

#[taskflow(profile = small(1), ranks = 2)]
fn t() {
    const Y: Tensor<F32> = output([16]);

    /// Every instance writes all of `Y`.
    #[tile(aiv, grid(i in 0..4))]
    fn clear(i: Idx) {
        zero(Y);
    }
}

fn main() {}
