use hpmoe_core::dsl::*;
use hpmoe_macros::taskflow;

#[taskflow(profile = small(1), ranks = 2)]
fn t() {
    const Y: Tensor<F32> = output([16]);

    #[tile(aiv, grid(idx in 0..16))]
    fn clear(idx: Idx) {
        zero(Y.at(ixd));
    }
}

fn main() {}
