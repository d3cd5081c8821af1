//! Ordered accumulation: tiles adding into one region in a fixed order (here, families in
//! declaration order: each later family's read-modify-write waits for the earlier ones).
use hpmoe_core::dsl::*;
use hpmoe_macros::taskflow;

#[taskflow(profile = small(2), ranks = 1)]
fn wgrad() {
    const X: Tensor<Bf16> = input([3, 16, 32]);
    const DY: Tensor<Bf16> = input([32, 16]);
    const V: Tensor<F32> = input([3, 64]);
    const DW: Tensor<F32> = output([16, 16]);
    const Y: Tensor<F32> = output([64]);

    #[tile(aic)]
    fn first() {
        matmul(X.at(0), DY, DW);
    }

    #[tile(aic)]
    fn second() {
        matmul_accumulate(X.at(1), DY, DW);
    }

    #[tile(aic)]
    fn third() {
        matmul_accumulate(X.at(2), DY, DW);
    }

    #[tile(aiv)]
    fn start() {
        copy(V.at(0), Y);
    }

    #[tile(aiv)]
    fn add_second() {
        accumulate(V.at(1), Y);
    }

    #[tile(aiv)]
    fn add_third() {
        accumulate(V.at(2), Y);
    }
}

fn main() {
    let program = wgrad();
    assert!(program.table().is_ok());
}
