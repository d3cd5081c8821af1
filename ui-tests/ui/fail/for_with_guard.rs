use hpmoe_core::dsl::*;
use hpmoe_macros::taskflow;

// A guard covers the whole tile: it cannot repeat inside a `for`.
#[taskflow(profile = small(1), ranks = 2)]
fn t() {
    const COUNTS: Tensor<I32> = input([4]);
    const X: Tensor<Bf16> = input([4, 32, 32]);
    const G: Tensor<Bf16> = input([4, 32, 16]);
    const GRAD: Tensor<F32> = output([4, 32, 16]);

    #[tile(aic, grid(b in 0..4))]
    fn wgrad(b: Idx) {
        for p in 0..4 {
            run_if_above(COUNTS.at(b), p * 8);
            matmul_tn(X.at(b).all().slice(p * 8, 8), G.at(b), GRAD.at(b).slice(p * 8, 8));
        }
    }
}

fn main() {}
