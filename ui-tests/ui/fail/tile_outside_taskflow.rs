use hpmoe_core::dsl::*;
use hpmoe_macros::tile;

#[tile(aiv, grid(i in 0..4))]
fn fill(i: Idx) {
    let _ = i;
}

fn main() {}
