use hpmoe_core::dsl::*;
use hpmoe_macros::taskflow;

#[taskflow(profile = small(1), ranks = 2)]
fn t() {
    #[op(aiv, emit = "hpmoe_user::Clear({dst})")]
    fn run_if_above(dst: &mut TileData) {
        dst.values.fill(0.0);
    }
}

fn main() {}
