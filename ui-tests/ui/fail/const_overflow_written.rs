use hpmoe_core::dsl::*;
use hpmoe_macros::taskflow;

#[taskflow(profile = small(1), ranks = 1)]
fn t() {
    const BIG: u64 = u64::MAX + 1;
    const X: Tensor<F32> = output([BIG]);
}

fn main() {}
