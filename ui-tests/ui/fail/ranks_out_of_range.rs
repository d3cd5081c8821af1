use hpmoe_core::dsl::*;
use hpmoe_macros::taskflow;

#[taskflow(profile = small(1), ranks = 0)]
fn t() {
    const X: Tensor<F32> = output([4]);
}

fn main() {}
