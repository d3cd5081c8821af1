use hpmoe_core::dsl::*;
use hpmoe_macros::taskflow;

#[taskflow(profile = small(1), ranks = 2)]
fn t() {
    const X: Tensor<F32> = output([4, 4]);

    #[tile(aiv, grid(i in 0..4), after(d(i)))]
    fn a(i: Idx) {
        zero(X.at(0).slice(i, 1));
    }

    #[tile(aiv, grid(i in 0..4), after(a(i)))]
    fn b(i: Idx) {
        zero(X.at(1).slice(i, 1));
    }

    #[tile(aiv, grid(i in 0..4), after(b(i)))]
    fn c(i: Idx) {
        zero(X.at(2).slice(i, 1));
    }

    #[tile(aiv, grid(i in 0..4), after(c(i)))]
    fn d(i: Idx) {
        zero(X.at(3).slice(i, 1));
    }
}

fn main() {}
