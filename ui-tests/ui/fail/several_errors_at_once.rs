use hpmoe_core::dsl::*;
use hpmoe_macros::taskflow;

// Every error of a taskflow is reported in one compilation.
#[taskflow(profile = small(1), ranks = 2)]
fn t() {
    const BYTE: u8 = 255 + 1;
    const Y: Tensor<F32> = output([16]);
    const Z: Tensor<F32> = output([16]);

    #[tile(aic, grid(i in 0..4))]
    fn first(i: Idx) {
        zero(Y.slice(i * 4, 4));
    }

    #[tile(aiv, grid(i in 0..4), after(thrid(i)))]
    fn second(i: Idx) {
        zero(Z.slice(i * 8, 8));
    }
}

fn main() {}
