use hpmoe_core::dsl::*;
use hpmoe_macros::taskflow;

#[taskflow(profile = small(1), ranks = 1)]
fn t() {
    const N: u64 = 70_000;
    const A: Tensor<Bf16> = input([N, 16]);
    const W: Tensor<Bf16> = input([16, 16]);
    const C: Tensor<F32> = output([N, 16]);

    /// One AIC per rank runs all 70 000 instances: over the 65 535 entries a core's list holds.
    #[tile(aic, grid(i in 0..N))]
    fn mm(i: Idx) {
        matmul(A.at(i), W, C.at(i));
    }
}

fn main() {}
