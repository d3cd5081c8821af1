//! `for p in 0..N { .. }` in a tile body: the loop is unrolled while the taskflow compiles,
//! its index a constant in each copy of the body, so one tile can call an op once per block of
//! a dimension its grid does not split (a grid has at most four dimensions). The range is a
//! compile-time constant: the same for every instance of the tile.

use super::consts::Failed;
use super::lower::{Binding, GuardState, Lower, Scope};
use super::spans::SpanRange;
use crate::limits::MAX_OPS_PER_TILE;
use crate::model::{Affine, OpCall};
use syn::{Expr, Pat, RangeLimits};

const USAGE: &str = "a `for` in a tile body repeats its ops over a constant range: `for p in 0..H / P { .. }`";

impl Lower {
    /// Lowers `for index in start..end { body }` of tile `tile` into `body`, once per index.
    pub(super) fn repeat(
        &mut self,
        l: &syn::ExprForLoop,
        scope: &Scope,
        tile: &str,
        body: &mut Vec<OpCall>,
        guard: &mut GuardState,
    ) {
        let Ok((name, indices)) = self.repeat_header(l, scope, tile) else { return };
        let here = SpanRange::of(l);
        for index in indices {
            let mut inner = scope.clone();
            if let Some(name) = &name {
                inner.lets.insert(name.clone(), Binding::Index(Affine::constant(index)));
            }
            let errors = self.errors.len();
            self.tile_stmts(&l.body.stmts, &mut inner, tile, body, guard, Some(here));
            // One error per mistake, not one per repetition; past the op limit the structural
            // check reports the count.
            if self.errors.len() > errors || body.len() > MAX_OPS_PER_TILE {
                break;
            }
        }
    }

    /// The loop's index name (`None` for `_`) and its values.
    fn repeat_header(
        &mut self,
        l: &syn::ExprForLoop,
        scope: &Scope,
        tile: &str,
    ) -> Result<(Option<String>, std::ops::Range<i64>), Failed> {
        if let Some(label) = &l.label {
            return Err(self.error(label, "a `for` in a tile body is unrolled: it has no label to break to"));
        }
        let name = match &*l.pat {
            Pat::Ident(p) if p.by_ref.is_none() && p.mutability.is_none() && p.subpat.is_none() => {
                Some(p.ident.to_string())
            }
            Pat::Wild(_) => None,
            other => return Err(self.error(other, USAGE)),
        };
        if let Some(n) = &name
            && scope.grid.contains(n)
        {
            return Err(self.error(
                &l.pat,
                format!("`{n}` is a grid index of tile `{tile}`: the loop's index needs a name of its own"),
            ));
        }
        let Expr::Range(r) = &*l.expr else { return Err(self.error(&l.expr, USAGE)) };
        let (Some(start), Some(end)) = (&r.start, &r.end) else {
            return Err(self.error(r, "the range of a `for` in a tile body names both ends: `0..N`"));
        };
        for e in [start, end] {
            if self.is_symbolic(e, scope) {
                return Err(self.error(
                    e,
                    format!(
                        "the range of a `for` in a tile body is a compile-time constant: the loop is unrolled \
                         once for all of tile `{tile}`'s instances, so it cannot depend on a grid index, `RANK` or \
                         a `let`\n\nhelp: a count that differs between instances is a grid dimension, or a \
                         `run_if_above` guard for one known at run time"
                    ),
                ));
            }
        }
        let (start, end) = (self.consts.eval_u64(start), self.consts.eval_u64(end));
        let (start, end) = (start?, end?);
        let end = match r.limits {
            RangeLimits::HalfOpen(_) => Some(end),
            RangeLimits::Closed(_) => end.checked_add(1),
        };
        let (Ok(start), Some(Ok(end))) = (i64::try_from(start), end.map(i64::try_from)) else {
            return Err(self.error(r, "the range of a `for` in a tile body does not fit in i64"));
        };
        let count = end.saturating_sub(start).max(0);
        if count > MAX_OPS_PER_TILE as i64 {
            return Err(self.error(
                r,
                format!(
                    "this `for` repeats its body {count} times, but a tile calls at most {MAX_OPS_PER_TILE} ops \
                     (`limits::MAX_OPS_PER_TILE`)\n\nhelp: split the dimension over the tile's grid instead"
                ),
            ));
        }
        Ok((name, start..end.max(start)))
    }
}
