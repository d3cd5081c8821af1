//! Region expressions → [`Region`]: a tensor (or a `let`-bound region) followed by
//! `.at(i)`, `.slice(start, len)` / `.rows(start, len)`, `.all()`, `.whole()` and `.on(rank)`.

use super::consts::Failed;
use super::lower::{Binding, Lower, Scope};
use super::spans::SpanRange;
use crate::model::{Affine, DimSlice, RankSel, Region};
use syn::{Expr, ExprMethodCall};

const METHODS: [&str; 6] = ["at", "slice", "rows", "all", "whole", "on"];

impl Lower {
    /// Whether `e` is written as a region (a tensor or region binding, with methods) rather
    /// than an index. Decides what a `let` in a tile body binds.
    pub(super) fn looks_like_region(&self, e: &Expr, scope: &Scope) -> bool {
        match e {
            Expr::MethodCall(_) => true,
            Expr::Paren(p) => self.looks_like_region(&p.expr, scope),
            Expr::Path(p) => p.path.get_ident().is_some_and(|i| {
                let name = i.to_string();
                self.tensors.contains_key(&name)
                    || self.aliases.contains_key(&name)
                    || self.poison.tensors.contains(&name)
                    || matches!(scope.lets.get(&name), Some(Binding::Region(_)))
            }),
            _ => false,
        }
    }

    /// Lowers a region; `what` names the place for errors (`argument `a` of `matmul``).
    pub(super) fn region(&mut self, e: &Expr, scope: &Scope, what: &str) -> Result<Region, Failed> {
        let mut methods: Vec<&ExprMethodCall> = Vec::new();
        let mut base = e;
        loop {
            match base {
                Expr::MethodCall(m) => {
                    methods.push(m);
                    base = &m.receiver;
                }
                Expr::Paren(p) => base = &p.expr,
                Expr::Group(g) => base = &g.expr,
                _ => break,
            }
        }
        let mut region = self.region_base(e, base, scope, what)?;
        let loc = self.loc(SpanRange::of(e));
        region.loc = loc;
        let mut failed = false;
        for m in methods.into_iter().rev() {
            if self.method(&mut region, m, scope).is_err() {
                failed = true;
            }
        }
        if failed { Err(Failed) } else { Ok(region) }
    }

    fn region_base(&mut self, whole: &Expr, base: &Expr, scope: &Scope, what: &str) -> Result<Region, Failed> {
        let not_region = |this: &mut Self| {
            this.error(
                whole,
                format!(
                    "{what} must be a region (a tensor `X`, or `X.at(i)`, `X.slice(start, len)`, ...), but `{}` is an \
                     index expression",
                    super::spans::written(whole)
                ),
            )
        };
        let Expr::Path(p) = base else {
            return Err(match base {
                Expr::Lit(_) | Expr::Binary(_) | Expr::Unary(_) => not_region(self),
                _ => self.error(
                    whole,
                    format!(
                        "{what} must be a region: a tensor const, optionally followed by `.at(..)`, `.slice(..)`, \
                             `.all()` or `.on(..)`"
                    ),
                ),
            });
        };
        let Some(ident) = p.path.get_ident() else {
            return Err(self.error(whole, format!("{what} must start with a tensor declared in the taskflow body")));
        };
        let name = ident.to_string();
        if self.poison.tensors.contains(&name) {
            return Err(Failed);
        }
        match scope.lets.get(&name) {
            Some(Binding::Region(r)) => return Ok((**r).clone()),
            Some(Binding::Index(_)) => return Err(not_region(self)),
            Some(Binding::Failed) => return Err(Failed),
            None => {}
        }
        if name == "RANK" || scope.grid.contains(&name) || self.consts.contains(&name) {
            return Err(not_region(self));
        }
        // An alias stands for its tensor (the IR knows the tensor alone). An unknown name is
        // reported by the checks as an unknown tensor, with a suggestion.
        let name = self.aliases.get(&name).cloned().unwrap_or(name);
        Ok(Region::whole(name))
    }

    fn method(&mut self, region: &mut Region, m: &ExprMethodCall, scope: &Scope) -> Result<(), Failed> {
        let name = m.method.to_string();
        let args: Vec<&Expr> = m.args.iter().collect();
        let arity = |this: &mut Self, usage: &str| this.error(m, format!("`{name}` is written `{usage}`"));
        match (name.as_str(), args.as_slice()) {
            ("at", [i]) => {
                let start = self.index(i, scope)?;
                region.dims.push(DimSlice { start, len: 1 });
            }
            ("slice" | "rows", [start, len]) => {
                let start = self.index(start, scope);
                let len = if self.is_symbolic(len, scope) {
                    Err(self.error(len, "the length of a slice is a compile-time constant, not an index expression"))
                } else {
                    self.consts.eval_u64(len)
                };
                region.dims.push(DimSlice { start: start?, len: len? });
            }
            ("all", []) => {
                let k = region.dims.len();
                let extent = match self.tensors.get(&region.tensor) {
                    Some(shape) if k < shape.len() => shape[k],
                    Some(shape) => {
                        return Err(self.error(
                            m,
                            format!(
                                "`all()` past the last dimension of `{}`, which has {}",
                                region.tensor,
                                shape.len()
                            ),
                        ));
                    }
                    None => 1,
                };
                region.dims.push(DimSlice { start: Affine::constant(0), len: extent });
            }
            ("whole", []) if region.dims.is_empty() => {}
            ("whole", []) => return Err(self.error(m, "`whole()` applies to a tensor, before any other method")),
            ("on", [r]) => {
                if region.is_remote() {
                    return Err(self.error(m, "a region names its rank once: `.on(..)` is given twice"));
                }
                region.rank = RankSel::Remote(self.index(r, scope)?);
            }
            ("at", _) => return Err(arity(self, "at(index)")),
            ("slice", _) => return Err(arity(self, "slice(start, len)")),
            ("rows", _) => return Err(arity(self, "rows(start, len)")),
            ("all" | "whole", _) => return Err(arity(self, &format!("{name}()"))),
            ("on", _) => return Err(arity(self, "on(rank)")),
            _ => {
                let help = super::spans::did_you_mean(&name, METHODS);
                return Err(self.error(
                    &m.method,
                    format!("unknown region method `{name}`; regions have `at`, `slice`, `rows`, `all` and `on`{help}"),
                ));
            }
        }
        Ok(())
    }
}
