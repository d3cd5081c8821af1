use hpmoe_core::dsl::*;
use hpmoe_macros::taskflow;

// a waits for b and b for a: the error names the cycle and sits on the entry closing it.
#[taskflow(profile = small(1), ranks = 2)]
fn t() {
    const X: Tensor<F32> = output([4]);
    const Y: Tensor<F32> = output([4]);

    #[tile(aiv, grid(i in 0..4), after(b(i)))]
    fn a(i: Idx) {
        zero(X.at(i));
    }

    #[tile(aiv, grid(i in 0..4), after(a(i)))]
    fn b(i: Idx) {
        zero(Y.at(i));
    }
}

fn main() {}
