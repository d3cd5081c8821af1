//! Index expressions → [`Affine`]: grid parameters, `RANK`, `let`-bound indices and
//! compile-time constants, combined with `+`, `-`, `*` by a constant, and a final `% m`.
//! Arithmetic on coefficients is checked: an overflow is an error, not a saturation.

use super::affine::{add, scale};
use super::consts::Failed;
use super::lower::{Binding, Lower, Scope};
use super::spans::written;
use crate::model::{Affine, Var};
use quote::ToTokens;
use syn::{BinOp, Expr};

impl Lower {
    /// Whether `e` mentions a grid index, `RANK` or a `let`-bound index.
    pub(super) fn is_symbolic(&self, e: &Expr, scope: &Scope) -> bool {
        match e {
            Expr::Path(p) => p.path.get_ident().is_some_and(|i| {
                let name = i.to_string();
                name == "RANK" || scope.grid.contains(&name) || scope.lets.contains_key(&name)
            }),
            Expr::Paren(p) => self.is_symbolic(&p.expr, scope),
            Expr::Group(g) => self.is_symbolic(&g.expr, scope),
            Expr::Unary(u) => self.is_symbolic(&u.expr, scope),
            Expr::Cast(c) => self.is_symbolic(&c.expr, scope),
            Expr::Binary(b) => self.is_symbolic(&b.left, scope) || self.is_symbolic(&b.right, scope),
            Expr::MethodCall(_) | Expr::Call(_) => true,
            _ => false,
        }
    }

    /// Lowers an index expression of a tile (its grid indices named by `scope`).
    pub(super) fn index(&mut self, e: &Expr, scope: &Scope) -> Result<Affine, Failed> {
        if !self.is_symbolic(e, scope) {
            if let Some(ident) = path_ident(e)
                && !self.consts.contains(&ident.to_string())
            {
                return Err(self.unknown_name(e, &ident.to_string(), scope));
            }
            let v = self.consts.eval(e, super::consts::IntTy::U64)?;
            return i64::try_from(v).map(Affine::constant).map_err(|_| self.error(e, "constant does not fit in i64"));
        }
        match e {
            Expr::Path(p) => {
                let name = p.path.get_ident().map(ToString::to_string).unwrap_or_default();
                if name == "RANK" {
                    return Ok(Affine::rank());
                }
                if let Some(k) = scope.grid.iter().position(|g| *g == name) {
                    return Ok(Affine::var(Var::Index(k as u8)));
                }
                match scope.lets.get(&name) {
                    Some(Binding::Index(a)) => Ok(a.clone()),
                    Some(Binding::Region(_)) => Err(self.error(e, format!("`{name}` is a region, not an index"))),
                    Some(Binding::Failed) => Err(Failed),
                    None => Err(self.unknown_name(e, &name, scope)),
                }
            }
            Expr::Paren(p) => self.index(&p.expr, scope),
            Expr::Group(g) => self.index(&g.expr, scope),
            Expr::Binary(b) => self.binary(e, b, scope),
            _ => Err(self.error(
                e,
                "not an index expression: indices are grid indices, `RANK` and constants combined with \
                 `+`, `-`, `*` by a constant and a final `% m`",
            )),
        }
    }

    fn binary(&mut self, e: &Expr, b: &syn::ExprBinary, scope: &Scope) -> Result<Affine, Failed> {
        let overflow = |this: &mut Self| this.error(e, "index expression overflows 64-bit arithmetic");
        match b.op {
            BinOp::Add(_) | BinOp::Sub(_) => {
                let sign = if matches!(b.op, BinOp::Add(_)) { 1 } else { -1 };
                // `x % m * k + b` as a whole: its rewrite says more than the product's alone.
                for (reduced, other) in [(&b.left, &b.right), (&b.right, &b.left)] {
                    if let Some((x, _, Some(k))) = wrapped(reduced)
                        && sign == 1
                        && self.is_symbolic(x, scope)
                        && !self.is_symbolic(k, scope)
                    {
                        let help = sum_rewrite(reduced, other, b.op);
                        return Err(self.not_reduced_error(e, help));
                    }
                }
                let (l, r) = (self.index(&b.left, scope), self.index(&b.right, scope));
                let (l, r) = (l?, r?);
                self.not_reduced(e, &l, || sum_rewrite(&b.left, &b.right, b.op))?;
                self.not_reduced(e, &r, || sum_rewrite(&b.right, &b.left, b.op))?;
                add(&l, &r, sign).ok_or_else(|| overflow(self))
            }
            BinOp::Mul(_) => {
                let (ls, rs) = (self.is_symbolic(&b.left, scope), self.is_symbolic(&b.right, scope));
                if ls && rs {
                    return Err(
                        self.error(e, format!("index expressions are affine: `{}` multiplies two indices", written(e)))
                    );
                }
                let (sym, k_expr) = if ls { (&b.left, &b.right) } else { (&b.right, &b.left) };
                let (a, k) = (self.index(sym, scope), self.index(k_expr, scope));
                let (a, k) = (a?, k?);
                self.not_reduced(e, &a, || product_rewrite(e, sym, k_expr))?;
                scale(&a, k.constant).ok_or_else(|| overflow(self))
            }
            BinOp::Rem(_) if !self.is_symbolic(&b.right, scope) => {
                let (a, m) = (self.index(&b.left, scope), self.index(&b.right, scope));
                let (mut a, m) = (a?, m?);
                self.not_reduced(e, &a, || "an index expression takes one `%`, as its last operation".to_string())?;
                if m.constant <= 0 {
                    return Err(self.error(&b.right, "the modulus of an index expression must be positive"));
                }
                a.modulo = Some(m.constant as u64);
                Ok(a)
            }
            _ => Err(self.error(
                e,
                format!(
                    "index expressions are affine (grid indices and `RANK` times constants, plus a final `% m`); \
                     `{}` is not supported on an index",
                    b.op.to_token_stream()
                ),
            )),
        }
    }

    /// Refuses an operand reduced by `%` inside `e`, with `help` (a rewrite) beside the error.
    fn not_reduced(&mut self, e: &Expr, a: &Affine, help: impl FnOnce() -> String) -> Result<(), Failed> {
        match a.modulo {
            Some(_) => Err(self.not_reduced_error(e, help())),
            None => Ok(()),
        }
    }

    fn not_reduced_error(&mut self, e: &Expr, help: String) -> Failed {
        self.error(e, format!("`%` must be the last operation of an index expression\n\nhelp: {help}"))
    }

    fn unknown_name(&mut self, e: &Expr, name: &str, scope: &Scope) -> Failed {
        let mut candidates: Vec<String> = scope.grid.clone();
        candidates.extend(scope.lets.keys().cloned());
        candidates.extend(self.consts.names().map(str::to_string));
        candidates.push("RANK".into());
        let help = super::spans::did_you_mean(name, candidates.iter().map(String::as_str));
        self.error(e, format!("unknown name `{name}` in an index expression{help}"))
    }
}

/// `e` without the parentheses around it.
fn bare(e: &Expr) -> &Expr {
    match e {
        Expr::Paren(p) => bare(&p.expr),
        Expr::Group(g) => bare(&g.expr),
        e => e,
    }
}

/// `x` written as an operand of `*` or `%`: in parentheses unless it is one token.
fn operand(x: &Expr) -> String {
    match bare(x) {
        Expr::Path(_) | Expr::Lit(_) => written(bare(x)),
        other => format!("({})", written(other)),
    }
}

/// `(x, m, k)` of an operand written `x % m` (`k` none) or `x % m * k` / `k * (x % m)`.
fn wrapped(e: &Expr) -> Option<(&Expr, &Expr, Option<&Expr>)> {
    match bare(e) {
        Expr::Binary(b) if matches!(b.op, BinOp::Rem(_)) => Some((&b.left, &b.right, None)),
        Expr::Binary(b) if matches!(b.op, BinOp::Mul(_)) => {
            let (rem, k) = match (bare(&b.left), bare(&b.right)) {
                (Expr::Binary(r), _) if matches!(r.op, BinOp::Rem(_)) => (r, &b.right),
                (_, Expr::Binary(r)) if matches!(r.op, BinOp::Rem(_)) => (r, &b.left),
                _ => return None,
            };
            Some((&rem.left, &rem.right, Some(k)))
        }
        _ => None,
    }
}

/// The help for `x % m * k`: the same value with `%` last, `x * k % (m * k)`.
fn product_rewrite(e: &Expr, sym: &Expr, k: &Expr) -> String {
    match wrapped(sym) {
        Some((x, m, None)) => format!(
            "`{}` equals `{} * {k} % ({m} * {k})`, whose `%` comes last",
            written(e),
            operand(x),
            k = operand(k),
            m = operand(m)
        ),
        _ => "an index expression takes one `%`, as its last operation".to_string(),
    }
}

/// The help for `x % m * k + b` (`reduced` the wrapped operand, `other` the rest of the sum).
fn sum_rewrite(reduced: &Expr, other: &Expr, op: BinOp) -> String {
    let b = written(bare(other));
    match (wrapped(reduced), op) {
        (Some((x, m, Some(k))), BinOp::Add(_)) => format!(
            "while `{b}` stays in 0..{k}, `{} % {m} * {k} + {b}` equals `({} * {k} + {b}) % ({m} * {k})`, whose `%` \
             comes last; or give the wrapped index a dimension of its own: `.at({} % {m})` on a tensor whose next \
             dimension `{b}` indexes",
            operand(x),
            operand(x),
            operand(x),
            k = operand(k),
            m = operand(m)
        ),
        (Some((x, m, None)), _) => format!(
            "to wrap the whole sum, write `({} {} {b}) % {m}`; to add `{b}` to the wrapped index, give that index a \
             dimension of its own: `.at({} % {m})` on a tensor whose next dimension `{b}` indexes",
            written(bare(x)),
            op.to_token_stream(),
            operand(x),
            m = operand(m)
        ),
        _ => "an index expression takes one `%`, as its last operation".to_string(),
    }
}

fn path_ident(e: &Expr) -> Option<&syn::Ident> {
    match e {
        Expr::Path(p) if p.qself.is_none() => p.path.get_ident(),
        _ => None,
    }
}
