// Three tensors whose declarations are wrong: each gets one error at its tokens, and the
// tiles that use them add none (no "unknown tensor", no rustc error on the kept consts).
use hpmoe_core::dsl::*;
use hpmoe_macros::taskflow;

#[taskflow(profile = small(1), ranks = 2)]
fn t() {
    const X: Tensor<F32> = inputs([8, 4]);
    const W: Tensor<Q7> = input([8, 4]);
    const S: Tensor<F32> = scratch(8);
    const Y: Tensor<F32> = output([8, 4]);

    #[tile(aiv, grid(i in 0..8))]
    fn a(i: Idx) {
        copy(X.at(i), S.at(i));
        copy(W.at(i), Y.at(i));
    }
}

fn main() {}
