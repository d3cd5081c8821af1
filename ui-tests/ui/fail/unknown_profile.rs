use hpmoe_core::dsl::*;
use hpmoe_macros::taskflow;

#[taskflow(profile = ascend910x, ranks = 2)]
fn t() {
    const X: Tensor<F32> = output([4]);
}

fn main() {}
