use hpmoe_core::dsl::*;
use hpmoe_macros::taskflow;

// Aliases that name one another in a cycle: refused at the alias whose chain comes back to
// itself, and its uses add no error of their own.
#[taskflow(profile = small(1), ranks = 2)]
fn t() {
    const X: Tensor<F32> = input([4, 4]);
    const Y: Tensor<F32> = output([4, 4]);
    const A: Tensor<F32> = B;
    const B: Tensor<F32> = A;

    #[tile(aiv, grid(i in 0..4))]
    fn copy_rows(i: Idx) {
        copy(A.at(i), Y.at(i));
        copy(X.at(i), Y.at(i));
    }
}

fn main() {}
