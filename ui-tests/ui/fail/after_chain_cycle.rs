use hpmoe_core::dsl::*;
use hpmoe_macros::taskflow;

#[taskflow(profile = small(1), ranks = 1)]
fn t() {
    const X: Tensor<F32> = output([4, 8]);

    /// Each step after the one before it AND the one after it: a cycle.
    #[tile(aiv, grid(s in 0..4), after(step(s - 1), step(s + 1)))]
    fn step(s: Idx) {
        zero(X.at(s));
    }
}

fn main() {}
