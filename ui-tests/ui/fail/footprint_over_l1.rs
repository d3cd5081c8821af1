use hpmoe_core::dsl::*;
use hpmoe_macros::taskflow;

#[taskflow(profile = small(1), ranks = 2)]
fn t() {
    const A: Tensor<Bf16> = input([128, 256]);
    const W: Tensor<Bf16> = input([256, 4096]);
    const C: Tensor<F32> = output([128, 4096]);

    #[tile(aic)]
    fn mm() {
        matmul(A, W, C);
    }
}

fn main() {}
