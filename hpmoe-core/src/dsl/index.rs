//! [`Idx`]: a grid index expression in a tile body.

use std::ops::{Add, Div, Mul, Rem, Sub};

/// A grid index expression: a tile's grid parameters, [`RANK`], and affine combinations
/// of them with integer constants (`m * B + 1`, `RANK * S + b * B`, `(RANK + d) % RANKS`),
/// where a remainder or quotient by a constant counts as an index (`(RANK + k) % RANKS * S`,
/// the rows of source rank `(RANK + k) % RANKS`; `RANK / 8`).
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

/// `expr % m`: Euclidean remainder by a positive constant, so the result is in `0..m` (for
/// rotations such as `(RANK + d) % RANKS`). The result is an index like any other: it may be
/// scaled and added to (`(RANK + d) % RANKS * S + b * B`).
impl Rem<u64> for Idx {
    type Output = Idx;
    fn rem(self, _: u64) -> Idx {
        Idx::default()
    }
}

/// `expr / d`: quotient by a positive constant, rounded down (Euclidean: `-1 / 4` is `-1`),
/// e.g. the group of `Q` ranks a rank belongs to, `RANK / Q`. The result is an index like any
/// other.
impl Div<u64> for Idx {
    type Output = Idx;
    fn div(self, _: u64) -> Idx {
        Idx::default()
    }
}
