use hpmoe_core::dsl::*;
use hpmoe_macros::taskflow;

// A core kind written like a call: an error at it, never a panic inside the macro.
#[taskflow(profile = small(1), ranks = 2)]
fn t() {
    const X: Tensor<Bf16> = input([RANKS * 8, 16]);
    const Y: Tensor<Bf16> = output([RANKS * 8, 16]);

    #[tile(aiv(), grid(b in 0..RANKS))]
    fn copy_rows(b: Idx) {
        copy(X.slice(b * 8, 8), Y.slice(b * 8, 8));
    }
}

fn main() {}
