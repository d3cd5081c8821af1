use hpmoe_core::dsl::*;
use hpmoe_macros::taskflow;

#[taskflow(profile = small(1), ranks = 2)]
fn t() {
    const S: Tensor<F32> = scratch([4, 16]);
    const Y: Tensor<F32> = output([4, 16]);

    #[tile(aiv, grid(i in 0..4))]
    fn init(i: Idx) {
        zero(S.at(i));
    }

    #[tile(aiv, grid(i in 0..4))]
    fn read(i: Idx) {
        copy(S.at(i), Y.at(i));
    }

    /// Ordered after `init` (the earlier write) but not after `read`.
    #[tile(aiv, grid(i in 0..4), after(init(i)))]
    fn overwrite(i: Idx) {
        zero(S.at(i));
    }
}

fn main() {}
