//! Taskflows inside modules, with visibility, docs, qualified attribute paths, helper
//! items the DSL does not read, a tile without a grid, two taskflows in one file, and the
//! program used in a const context.

use hpmoe_core::dsl::{Program, TileData};

mod flows {
    use hpmoe_core::dsl::*;

    /// Clamps values: shared by the reference bodies of both taskflows.
    pub fn clamp_all(t: &mut TileData, limit: f32) {
        for v in &mut t.values {
            *v = v.clamp(-limit, limit);
        }
    }

    /// A one-tile taskflow.
    #[hpmoe_macros::taskflow(profile = small(1), ranks = 1)]
    pub fn single() {
        use super::flows::clamp_all;
        const LIMIT: f32 = 4.0; // not an integer: kept, not read by the macro
        const X: Tensor<F32> = output([8, 8]);

        #[derive(Clone, Copy)]
        struct Unused;

        #[op(aiv, emit = "Clamp({x})", read_write(x))]
        fn clamp(x: &mut TileData) {
            clamp_all(x, LIMIT);
        }

        #[hpmoe_macros::tile(aiv)]
        fn only() {
            zero(X);
            clamp(X);
        }
    }

    #[hpmoe_macros::taskflow(profile = small(1), ranks = 2)]
    pub(crate) fn pair() {
        const X: Tensor<F32> = scratch([2, 8]);
        const Y: Tensor<F32> = output([2, 8]);

        #[tile(aiv, grid(i in 0..2))]
        fn fill(i: Idx) {
            zero(X.at(i));
        }

        #[tile(aiv, grid(i in 0..2))]
        fn move_out(i: Idx) {
            copy(X.at(i), Y.at(i));
        }
    }
}

const SINGLE: Program = flows::single();

fn main() {
    assert_eq!(SINGLE.name, "single");
    assert_eq!(SINGLE.grids, &[&[] as &[u64]]);
    assert_eq!(SINGLE.table().unwrap().entries().len(), 1);
    let mut t = TileData::new(&[2], vec![-9.0, 9.0]).unwrap();
    SINGLE.user_op("clamp").unwrap().run(std::slice::from_mut(&mut t)).unwrap();
    assert_eq!(t.values, vec![-4.0, 4.0]);

    let pair = flows::pair();
    assert_eq!(pair.tiles.len(), 2);
    assert_eq!(pair.table().unwrap().entries().len(), 4 * 2);
    assert!(pair.user_ops.is_empty());
}
