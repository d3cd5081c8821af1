use hpmoe_core::dsl::*;
use hpmoe_macros::taskflow;

#[taskflow(profile = small(1), ranks = 2)]
fn t() {
    const A: Tensor<Bf16> = input([64, 64]);
    const C: Tensor<F32> = output([64, 64]);

    #[tile(aic, grid(m in 0..4))]
    fn mm(m: Idx) {
        matmull(A.slice(m * 16, 16), A, C.slice(m * 16, 16));
    }
}

fn main() {}
