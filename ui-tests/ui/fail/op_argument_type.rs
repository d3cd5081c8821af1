use hpmoe_core::dsl::*;
use hpmoe_macros::taskflow;

#[taskflow(profile = small(1), ranks = 2)]
fn t() {
    const C: Tensor<F32> = output([64, 64]);

    #[tile(aiv, grid(m in 0..4))]
    fn clear(m: Idx) {
        zero(m * 16);
    }
}

fn main() {}
