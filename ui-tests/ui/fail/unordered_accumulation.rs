use hpmoe_core::dsl::*;
use hpmoe_macros::taskflow;

#[taskflow(profile = small(2), ranks = 1)]
fn wgrad() {
    const X: Tensor<Bf16> = input([5, 16, 32]);
    const DY: Tensor<Bf16> = input([32, 16]);
    const DW: Tensor<F32> = output([16, 16]);

    #[tile(aic)]
    fn first() {
        matmul(X.at(0), DY, DW);
    }

    /// Every instance adds its block into all of `DW`, in no fixed order.
    #[tile(aic, grid(s in 0..4))]
    fn rest(s: Idx) {
        matmul_accumulate(X.at(s + 1), DY, DW);
    }
}

fn main() {}
