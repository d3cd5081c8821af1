use hpmoe_core::dsl::*;
use hpmoe_macros::taskflow;

#[taskflow(profile = small(1), ranks = 2)]
fn t() {
    const X: Tensor<F32> = input([4, 65536]);
    const Y: Tensor<F32> = output([4, 65536]);

    #[tile(aiv, grid(i in 0..4))]
    fn move_rows(i: Idx) {
        copy(X.at(i), Y.at(i));
    }
}

fn main() {}
