//! [`Idx`]: a grid index expression in a tile body.

use std::ops::{Add, Mul, Rem, Sub};

/// A grid index expression: a tile's grid parameters, [`RANK`], and affine combinations
/// of them with integer constants (`m * B + 1`, `RANK * S + b * B`, `(RANK + d) % RANKS`).
///
/// It is symbolic: `#[taskflow]` reads the expression from the tokens and evaluates it for
/// every tile instance at compile time. At run time an `Idx` carries no value; it exists so
/// that tile bodies type-check and the IDE can follow them. Only affine arithmetic is
/// implemented, so `e * m` (two indices multiplied) is a type error as well as a DSL error.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Idx {
    _symbolic: (),
}

/// The rank executing the tile (the taskflow is SPMD: every rank runs every tile).
pub const RANK: Idx = Idx { _symbolic: () };

impl From<u64> for Idx {
    fn from(_: u64) -> Idx {
        Idx::default()
    }
}

macro_rules! idx_ops {
    ($($trait:ident $method:ident),*) => {$(
        impl $trait<Idx> for Idx {
            type Output = Idx;
            fn $method(self, _: Idx) -> Idx {
                Idx::default()
            }
        }
        impl $trait<u64> for Idx {
            type Output = Idx;
            fn $method(self, _: u64) -> Idx {
                Idx::default()
            }
        }
        impl $trait<Idx> for u64 {
            type Output = Idx;
            fn $method(self, _: Idx) -> Idx {
                Idx::default()
            }
        }
    )*};
}

idx_ops!(Add add, Sub sub);

impl Mul<u64> for Idx {
    type Output = Idx;
    fn mul(self, _: u64) -> Idx {
        Idx::default()
    }
}

impl Mul<Idx> for u64 {
    type Output = Idx;
    fn mul(self, _: Idx) -> Idx {
        Idx::default()
    }
}

/// `expr % m`: Euclidean remainder, so the result is in `0..m` (for rotations such as
/// `(RANK + d) % RANKS`). It must be the last operation of an index expression.
impl Rem<u64> for Idx {
    type Output = Idx;
    fn rem(self, _: u64) -> Idx {
        Idx::default()
    }
}
