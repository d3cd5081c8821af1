use hpmoe_core::dsl::*;
use hpmoe_macros::taskflow;

// An alias names a tensor of the body with its element type: one error each, and rustc adds
// none of its own (no mismatched type, no unknown name).
#[taskflow(profile = small(1), ranks = 2)]
fn t() {
    const X: Tensor<F32> = input([4, 4]);
    const Y: Tensor<F32> = output([4, 4]);
    const AS_BF16: Tensor<Bf16> = X;
    const TYPO: Tensor<F32> = XX;

    #[tile(aiv, grid(i in 0..4))]
    fn copy_rows(i: Idx) {
        copy(AS_BF16.at(i), Y.at(i));
        copy(TYPO.at(i), Y.at(i));
    }
}

fn main() {}
