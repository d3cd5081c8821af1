use hpmoe_core::dsl::*;
use hpmoe_macros::taskflow;

#[taskflow(profile = small(1), ranks = 1)]
fn t() {
    const X: Tensor<F32> = output([16, 8]);
    const Y: Tensor<F32> = output([4, 8]);

    #[tile(aiv, grid(i in 0..16))]
    fn load(i: Idx) {
        zero(X.at(i));
    }

    #[tile(aiv, grid(r in 0..4), after(load(r * 4..)))]
    fn mark(r: Idx) {
        zero(Y.at(r));
    }
}

fn main() {}
