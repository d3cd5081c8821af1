use hpmoe_core::dsl::*;
use hpmoe_macros::taskflow;

#[taskflow(profile = small(1), ranks = 2)]
fn t() {
    const A: u64 = B + 1;
    const B: u64 = A;
    const X: Tensor<F32> = output([A]);
}

fn main() {}
