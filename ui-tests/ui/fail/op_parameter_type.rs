use hpmoe_core::dsl::*;
use hpmoe_macros::taskflow;

#[taskflow(profile = small(1), ranks = 2)]
fn t() {
    #[op(aiv, emit = "hpmoe_user::Neg({dst}, {src})")]
    fn neg(src: &[f32], dst: &mut TileData) {
        for (d, s) in dst.values.iter_mut().zip(src) {
            *d = -s;
        }
    }
}

fn main() {}
