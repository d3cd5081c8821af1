use hpmoe_core::dsl::*;
use hpmoe_macros::taskflow;

#[taskflow(profile = small(1), ranks = 1)]
fn t() {
    const X: Tensor<F32> = output([4, 8]);

    /// `..` selects every instance of `step`, each one itself included.
    #[tile(aiv, grid(e in 0..2, s in 0..2), after(step(e, ..)))]
    fn step(e: Idx, s: Idx) {
        zero(X.at(e * 2 + s));
    }
}

fn main() {}
