use hpmoe_core::dsl::*;
use hpmoe_macros::taskflow;

#[taskflow(profile = small(1), ranks = 2)]
fn t() {
    const X: Tensor<Bf16> = input([8, 16]);
    const RECV: Tensor<Bf16> = symmetric([RANKS * 8, 16]);

    /// Forgets to wrap around: the last rank sends to rank RANKS.
    #[tile(aiv)]
    fn send() {
        put(X, RECV.on(RANK + 1).slice(RANK * 8, 8));
    }
}

fn main() {}
