use hpmoe_core::dsl::*;
use hpmoe_macros::taskflow;

#[taskflow(profile = small(1), ranks = 2)]
fn t() {
    let n = 8;
    const X: Tensor<F32> = output([n, 4]);
    #[tile(aiv)]
    fn fill() {
        zero(X);
    }
}

fn main() {}
