use hpmoe_core::dsl::*;
use hpmoe_macros::taskflow;

#[taskflow(profile = small(1), ranks = 2)]
fn t() {
    const COUNTS: Tensor<I32> = input([4, 2]);
    const Y: Tensor<F32> = output([4, 16]);

    #[tile(aiv, grid(i in 0..4))]
    fn clear(i: Idx) {
        run_if_above(COUNTS.at(i), 0);
        zero(Y.at(i));
    }
}

fn main() {}
