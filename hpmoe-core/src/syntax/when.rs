//! `#[tile(.., when(CONDITION))]`: a tile family that exists only at some sizes.
//!
//! One layout written once and included at several sizes may need a family at one size and
//! none at another: a weight gradient summed in several row groups is written by a first tile
//! and completed by a chain of accumulating tiles, and with one group there is no chain (its
//! grid would be empty, which is an error). `when` makes the family's existence a
//! compile-time condition: comparisons (`<`, `<=`, `>`, `>=`, `==`, `!=`) of compile-time
//! integer expressions, combined with `&&`, `||`, `!` and parentheses, or `true` / `false`.
//! When it is false the family is left out of the taskflow as if it were not written (its
//! grid, body and `after` entries are not read, like an item under a false `#[cfg]`), and an
//! `after` naming it elsewhere is an error.

use super::consts::{Consts, Failed};
use super::lower::Lower;
use super::spans::SpanRange;
use syn::{BinOp, Expr, Lit, UnOp};

/// How a `when` condition is written, for its errors.
const USAGE: &str = "a `when` condition compares compile-time integers: `when(R / W > 1)`, combined with `&&`, \
                     `||`, `!` and parentheses";

impl Lower {
    /// The value of a tile's `when` condition; its errors are reported.
    pub(super) fn condition(&mut self, expr: &Expr) -> Result<bool, Failed> {
        condition(&mut self.consts, &mut self.errors, expr)
    }
}

/// Evaluates `expr`, every operand of `&&` and `||` included (so that each mistake is reported).
fn condition(consts: &mut Consts, errors: &mut Vec<syn::Error>, expr: &Expr) -> Result<bool, Failed> {
    match expr {
        Expr::Paren(p) => condition(consts, errors, &p.expr),
        Expr::Group(g) => condition(consts, errors, &g.expr),
        Expr::Lit(l) => match &l.lit {
            Lit::Bool(b) => Ok(b.value),
            _ => fail(errors, expr),
        },
        Expr::Unary(u) if matches!(u.op, UnOp::Not(_)) => condition(consts, errors, &u.expr).map(|v| !v),
        Expr::Binary(b) if matches!(b.op, BinOp::And(_) | BinOp::Or(_)) => {
            let (l, r) = (condition(consts, errors, &b.left), condition(consts, errors, &b.right));
            let (l, r) = (l?, r?);
            Ok(if matches!(b.op, BinOp::And(_)) { l && r } else { l || r })
        }
        Expr::Binary(b) => {
            let compare: fn(&u64, &u64) -> bool = match b.op {
                BinOp::Lt(_) => u64::lt,
                BinOp::Le(_) => u64::le,
                BinOp::Gt(_) => u64::gt,
                BinOp::Ge(_) => u64::ge,
                BinOp::Eq(_) => u64::eq,
                BinOp::Ne(_) => u64::ne,
                _ => return fail(errors, expr),
            };
            let (l, r) = (consts.eval_u64(&b.left), consts.eval_u64(&b.right));
            Ok(compare(&l?, &r?))
        }
        _ => fail(errors, expr),
    }
}

fn fail(errors: &mut Vec<syn::Error>, expr: &Expr) -> Result<bool, Failed> {
    errors.push(SpanRange::of(expr).error(USAGE));
    Err(Failed)
}
