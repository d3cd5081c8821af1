//! Index expressions → [`Affine`]: grid parameters, `RANK`, `let`-bound indices and
//! compile-time constants, combined with `+`, `-`, `*` by a constant, `% m` (Euclidean
//! remainder) and `/ d` (rounded down) by a positive constant, in any order: a reduced
//! sub-expression scales and adds like an index (`(RANK + k) % R * S + b * B`, the rows of
//! source rank `(RANK + k) % R`). Arithmetic on coefficients is checked: an overflow is an
//! error, not a saturation.

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
                 `+`, `-`, `*` by a constant, `%` and `/` by a positive constant",
            )),
        }
    }

    fn binary(&mut self, e: &Expr, b: &syn::ExprBinary, scope: &Scope) -> Result<Affine, Failed> {
        let overflow = |this: &mut Self| this.error(e, "index expression overflows 64-bit arithmetic");
        match b.op {
            BinOp::Add(_) | BinOp::Sub(_) => {
                let sign = if matches!(b.op, BinOp::Add(_)) { 1 } else { -1 };
                let (l, r) = (self.index(&b.left, scope), self.index(&b.right, scope));
                let (l, r) = (l?, r?);
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
                scale(&a, k.constant).ok_or_else(|| overflow(self))
            }
            BinOp::Rem(_) | BinOp::Div(_) => {
                let (op, what) = if matches!(b.op, BinOp::Rem(_)) { ("%", "modulus") } else { ("/", "divisor") };
                if self.is_symbolic(&b.right, scope) {
                    return Err(self.error(
                        &b.right,
                        format!(
                            "the {what} of `{op}` in an index expression must be a compile-time constant, not an \
                             index: `{}`\n\nhelp: reduce by a constant, e.g. `{} {op} RANKS` with `const RANKS: u64`",
                            written(e),
                            operand(&b.left)
                        ),
                    ));
                }
                let (a, m) = (self.index(&b.left, scope), self.index(&b.right, scope));
                let (a, m) = (a?, m?);
                if m.constant <= 0 {
                    return Err(self.error(&b.right, format!("the {what} of an index expression must be positive")));
                }
                let m = m.constant as u64;
                Ok(if op == "%" { a.modulo(m) } else { a.quotient(m) })
            }
            _ => Err(self.error(
                e,
                format!(
                    "index expressions combine indices with `+`, `-`, `*` by a constant, `%` and `/` by a positive \
                     constant; `{}` is not supported on an index",
                    b.op.to_token_stream()
                ),
            )),
        }
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

fn path_ident(e: &Expr) -> Option<&syn::Ident> {
    match e {
        Expr::Path(p) if p.qself.is_none() => p.path.get_ident(),
        _ => None,
    }
}
