use hpmoe_core::dsl::*;
use hpmoe_macros::taskflow;

#[taskflow(profile = small(1), ranks = 1)]
fn t() {
    const X: Tensor<F32> = output([64]);

    #[tile(aiv, grid(i in 0..4))]
    fn first(i: Idx) {
        zero(X.slice(i * 16, 16));
    }

    #[tile(aiv, grid(i in 0..4), after(frist(i)))]
    fn second(i: Idx) {
        zero(X.slice(i * 16, 16));
    }
}

fn main() {}
