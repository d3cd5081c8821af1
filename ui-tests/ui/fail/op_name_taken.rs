use hpmoe_core::dsl::*;
use hpmoe_macros::taskflow;

#[taskflow(profile = small(1), ranks = 2)]
fn t() {
    #[op(aiv, emit = "hpmoe_user::MyCopy({dst}, {src})")]
    fn copy(src: &TileData, dst: &mut TileData) {
        dst.values.copy_from_slice(&src.values);
    }
}

fn main() {}
