use hpmoe_core::dsl::*;
use hpmoe_macros::taskflow;

#[taskflow(profile = small(1), ranks = 2)]
fn t() {
    let x: Tensor<F32> = output([4]);

    #[tile(aiv, grid(i in 0..4))]
    fn clear(i: Idx) {
        zero(x.at(i));
    }
}

fn main() {}
