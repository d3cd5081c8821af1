use hpmoe_core::dsl::*;
use hpmoe_macros::taskflow;

#[taskflow(profile = small(1), ranks = 2)]
fn t() {
    const RECV: Tensor<Bf16> = symmetric([8, 16]);
    const Y: Tensor<Bf16> = output([8, 16]);

    #[tile(aiv)]
    fn init() {
        zero(RECV);
    }

    #[tile(aiv)]
    fn peek() {
        copy(RECV.on(1), Y);
    }
}

fn main() {}
