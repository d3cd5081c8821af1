use hpmoe_core::dsl::*;
use hpmoe_macros::taskflow;

#[taskflow(profile = small(1), ranks = 2)]
fn t() {
    const T: u64 = 1 << 40;
    const BIG: u64 = T * T;
    const X: Tensor<F32> = output([BIG]);
}

fn main() {}
