use hpmoe_core::dsl::*;
use hpmoe_macros::taskflow;

#[taskflow(profile = small(1), ranks = 2)]
fn t() {
    const PARTS: u64 = RANKS - 2;
    const X: Tensor<F32> = output([64 / PARTS]);
}

fn main() {}
