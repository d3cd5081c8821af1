use hpmoe_core::dsl::*;
use hpmoe_macros::taskflow;

#[taskflow(profile = small(1), ranks = 2)]
fn t() {
    const X: Tensor<Bf16> = input([8, 16]);
    const RECV: Tensor<Bf16> = symmetric([RANKS * 8, 16]);

    #[tile(aiv)]
    fn send() {
        put(X, RECV.slice(RANK * 8, 8));
    }
}

fn main() {}
