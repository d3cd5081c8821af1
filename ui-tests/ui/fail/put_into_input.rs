use hpmoe_core::dsl::*;
use hpmoe_macros::taskflow;

#[taskflow(profile = small(1), ranks = 2)]
fn t() {
    const X: Tensor<Bf16> = input([RANKS * 8, 16]);
    const RECV: Tensor<Bf16> = input([RANKS * 8, 16]);
    #[tile(aiv, grid(d in 0..RANKS))]
    fn send(d: Idx) {
        put(X.slice(d * 8, 8), RECV.on(d).slice(RANK * 8, 8));
    }
}

fn main() {}
