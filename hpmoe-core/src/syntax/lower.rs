//! Lowering: the sorted body items → the taskflow IR, every node with its span.
//!
//! Errors are collected, never first-only. A declaration that fails is left out of the IR
//! and its name is *poisoned*, so that its uses do not add errors of their own.

use super::ast::{BodyItem, TensorItem, body_items};
use super::attr::{TaskflowArgs, TileArgs};
use super::consts::{Consts, Failed};
use super::spans::{SpanRange, Spans};
use super::{OpDecl, TileDecl};
use crate::model::{
    Affine, After, GridDim, Guard, IndexSel, Loc, MachineProfile, OpCall, Region, Taskflow, TensorDecl, TileFamily,
};
use quote::ToTokens;
use std::collections::{HashMap, HashSet};
use syn::{Expr, FnArg, ItemFn, Pat, RangeLimits, ReturnType, Stmt, Type};

/// Names whose declaration failed: their uses report nothing more.
#[derive(Clone, Debug, Default)]
pub struct Poison {
    /// Integer consts whose value the macro could not evaluate (the error is reported).
    pub consts: HashSet<String>,
    /// Tensors whose declaration failed (bad type, shape or constructor).
    pub tensors: HashSet<String>,
    /// Tile families whose declaration failed: `after` entries naming them are left out.
    pub tiles: HashSet<String>,
    /// User ops whose declaration failed: calls of them are left out.
    pub ops: HashSet<String>,
}

/// What a `let` in a tile body binds.
#[derive(Clone, Debug)]
pub enum Binding {
    Index(crate::model::Affine),
    Region(Box<Region>),
    /// The binding's expression failed (already reported): uses report nothing more.
    Failed,
}

/// The names a tile body's expressions see besides the taskflow's consts and tensors.
#[derive(Clone, Debug, Default)]
pub struct Scope {
    /// Grid indices, in order.
    pub grid: Vec<String>,
    pub lets: HashMap<String, Binding>,
}

/// What a tile body has shown of its guard so far.
#[derive(Default)]
pub(super) struct GuardState {
    /// The first `run_if_above` call, lowered or not.
    first: Option<SpanRange>,
    /// An op call came before (the guard must not follow one).
    after_op: bool,
    lowered: Option<Guard>,
}

/// The lowering state.
#[derive(Debug)]
pub struct Lower {
    pub tf: Taskflow,
    pub spans: Spans,
    pub consts: Consts,
    pub errors: Vec<syn::Error>,
    /// Declared tensors' shapes.
    pub tensors: HashMap<String, Vec<u64>>,
    /// Tensor aliases (`const A: Tensor<Bf16> = X;`) → the tensor each names.
    pub aliases: HashMap<String, String>,
    /// Grid arity of each tile, from its attribute (for `after(name)` with no indices).
    pub tile_arity: HashMap<String, usize>,
    /// Tiles whose `when` condition is false, with the condition as written: left out.
    pub absent: HashMap<String, String>,
    pub poison: Poison,
    pub tiles: Vec<TileDecl>,
    pub ops: Vec<OpDecl>,
}

impl Lower {
    /// Records an error at `node`.
    pub(super) fn error(&mut self, node: &impl ToTokens, msg: impl std::fmt::Display) -> Failed {
        self.errors.push(SpanRange::of(node).error(msg));
        Failed
    }

    /// A new location for the tokens of `range`.
    pub(super) fn loc(&mut self, range: SpanRange) -> Loc {
        self.spans.add(&mut self.tf.sources, range)
    }

    /// Lowers a taskflow function given its attribute's arguments.
    pub fn run(args: proc_macro2::TokenStream, item: &ItemFn) -> Lower {
        let mut errors = Vec::new();
        let (profile, ranks_span) = match TaskflowArgs::parse(args) {
            Ok(a) => (a.profile.profile(*a.ranks), a.ranks.span()),
            Err(e) => {
                errors.push(e);
                (MachineProfile::small(1, 1), item.sig.ident.span())
            }
        };
        let ranks = u64::from(profile.ranks);
        let mut l = Lower {
            tf: Taskflow::new(item.sig.ident.to_string(), profile),
            spans: Spans::default(),
            consts: Consts::new(ranks, ranks_span),
            errors,
            tensors: HashMap::new(),
            aliases: HashMap::new(),
            tile_arity: HashMap::new(),
            absent: HashMap::new(),
            poison: Poison::default(),
            tiles: Vec::new(),
            ops: Vec::new(),
        };
        let fn_range = SpanRange::of(&item.sig.ident);
        l.spans.fallback = Some(fn_range);
        l.tf.loc = l.loc(fn_range);
        l.signature(item);

        let mut errs = Vec::new();
        let items = body_items(&item.block.stmts, &mut errs);
        l.errors.extend(errs);
        // A `let` in the body is an error already; its uses add nothing more.
        for stmt in &item.block.stmts {
            if let Stmt::Local(local) = stmt {
                let pat = match &local.pat {
                    Pat::Type(t) => &*t.pat,
                    p => p,
                };
                if let Pat::Ident(p) = pat {
                    l.poison.tensors.insert(p.ident.to_string());
                    l.consts.declare_failed(p.ident.clone());
                }
            }
        }
        let mut tiles = Vec::new();
        for it in &items {
            match it {
                BodyItem::IntConst { ident, ty, expr } => l.consts.declare((*ident).clone(), *ty, (*expr).clone()),
                BodyItem::Tile { stmt, item, attr } => match TileArgs::parse(&attr.meta) {
                    Ok(args) => {
                        l.tile_arity.insert(item.sig.ident.to_string(), args.grid.len());
                        tiles.push((*stmt, *item, args));
                    }
                    Err(e) => {
                        l.errors.push(e);
                        l.poison.tiles.insert(item.sig.ident.to_string());
                    }
                },
                _ => {}
            }
        }
        for it in &items {
            match it {
                BodyItem::Op { stmt, item, attr } => l.user_op(*stmt, item, attr),
                BodyItem::Tensor(t) => l.tensor(t),
                BodyItem::FailedTensor(c) => {
                    l.poison.tensors.insert(c.ident.to_string());
                }
                _ => {}
            }
        }
        let aliases: Vec<_> =
            items.iter().filter_map(|it| if let BodyItem::Alias(a) = it { Some(a) } else { None }).collect();
        l.aliases(&aliases);
        // Every const is declared: the `when` conditions decide which families exist before
        // any `after` entry is read.
        let mut present = Vec::new();
        for (stmt, item, args) in tiles {
            let name = item.sig.ident.to_string();
            match args.when.as_ref().map(|w| (l.condition(w), w)) {
                None | Some((Ok(true), _)) => present.push((stmt, item, args)),
                Some((Ok(false), w)) => {
                    l.absent.insert(name, super::spans::written(w));
                }
                Some((Err(Failed), _)) => {
                    l.poison.tiles.insert(name);
                }
            }
        }
        for (stmt, item, args) in present {
            l.tile(stmt, item, args);
        }
        l.consts.evaluate_all();
        l.poison.consts.extend(l.consts.failed().map(ToString::to_string));
        let const_errors = l.consts.take_errors();
        l.errors.extend(const_errors);
        l
    }

    /// The taskflow function itself takes nothing and returns the `Program` the macro makes.
    fn signature(&mut self, item: &ItemFn) {
        let sig = &item.sig;
        if !sig.inputs.is_empty() {
            self.error(&sig.inputs, "a taskflow function takes no parameters");
        }
        if !sig.generics.params.is_empty() {
            self.error(&sig.generics, "a taskflow function has no generic parameters");
        }
        if let Some(a) = &sig.asyncness {
            self.error(a, "a taskflow function is not `async`");
        }
        if let ReturnType::Type(_, ty) = &sig.output
            && !ends_with(ty, "Program")
        {
            self.error(
                ty,
                "`#[taskflow]` makes the function return `hpmoe_core::dsl::Program`; leave the return type out",
            );
        }
    }

    fn tensor(&mut self, t: &TensorItem<'_>) {
        let name = t.item.ident.to_string();
        let mut shape = Vec::with_capacity(t.shape.len());
        let mut ok = true;
        for e in &t.shape {
            match self.consts.eval_u64(e) {
                Ok(v) => shape.push(v),
                Err(Failed) => ok = false,
            }
        }
        if !ok {
            self.poison.tensors.insert(name);
            return;
        }
        let loc = self.loc(SpanRange::of(&t.item.ident));
        self.tensors.insert(name.clone(), shape.clone());
        self.tf.tensors.push(TensorDecl {
            name,
            kind: t.kind,
            dtype: t.dtype,
            shape: shape.into_iter().collect(),
            loc,
        });
    }

    fn tile(&mut self, stmt: usize, item: &ItemFn, args: TileArgs) {
        let name = item.sig.ident.to_string();
        let loc = self.loc(SpanRange::of(&item.sig.ident));
        let mut scope = Scope::default();
        let mut grid = smallvec::SmallVec::new();
        let mut header_ok = true;
        for entry in &args.grid {
            scope.grid.push(entry.name.to_string());
            match self.extent(&entry.range) {
                Ok(extent) => {
                    let loc = self.loc(SpanRange::of_tokens(entry.tokens.clone()));
                    grid.push(GridDim { name: entry.name.to_string(), extent, loc });
                }
                Err(Failed) => header_ok = false,
            }
        }
        header_ok &= self.tile_params(item, &args).is_ok();
        if !header_ok {
            self.poison.tiles.insert(name);
            return;
        }
        let (body, guard) = self.tile_body(&item.block.stmts, &mut scope, &name);
        let after = self.afters(&args.after, &scope);
        self.tiles.push(TileDecl { stmt, ident: item.sig.ident.clone(), family: self.tf.families.len() });
        self.tf.families.push(TileFamily { name, core: args.core, grid, body, after, guard, loc });
    }

    /// `0..N` (or `0..=N-1`) → N.
    fn extent(&mut self, range: &Expr) -> Result<u64, Failed> {
        let usage = "a grid index ranges over `0..N`, with N a compile-time constant";
        let Expr::Range(r) = range else { return Err(self.error(range, usage)) };
        let (Some(start), Some(end)) = (&r.start, &r.end) else { return Err(self.error(range, usage)) };
        let start_value = self.consts.eval_u64(start);
        let end_value = self.consts.eval_u64(end);
        let (start_value, end_value) = (start_value?, end_value?);
        if start_value != 0 {
            return Err(self.error(start, format!("grid ranges start at 0, not {start_value}: write `0..N`")));
        }
        match r.limits {
            RangeLimits::HalfOpen(_) => Ok(end_value),
            RangeLimits::Closed(_) => {
                end_value.checked_add(1).ok_or_else(|| self.error(range, "the grid's extent overflows u64"))
            }
        }
    }

    /// The tile function's parameters name its grid indices, in order, each an `Idx`.
    fn tile_params(&mut self, item: &ItemFn, args: &TileArgs) -> Result<(), Failed> {
        let sig = &item.sig;
        let mut ok = true;
        if !sig.generics.params.is_empty() {
            self.error(&sig.generics, "a tile function has no generic parameters");
            ok = false;
        }
        if let ReturnType::Type(_, ty) = &sig.output {
            self.error(ty, "a tile function returns nothing");
            ok = false;
        }
        let names: Vec<String> = args.grid.iter().map(|g| g.name.to_string()).collect();
        if sig.inputs.len() != names.len() {
            let what = if names.is_empty() { "no grid".to_string() } else { format!("grid ({})", names.join(", ")) };
            let plural = |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
            self.errors.push(SpanRange::single(sig.paren_token.span.join()).error(format!(
                "tile `{}` has {} but its function takes {}: the parameters name the grid indices, in \
                 order\n\nhelp: write `fn {}({})` for {what}",
                sig.ident,
                plural(names.len(), "grid index", "grid indices"),
                plural(sig.inputs.len(), "parameter", "parameters"),
                sig.ident,
                names.iter().map(|n| format!("{n}: Idx")).collect::<Vec<_>>().join(", "),
            )));
            return Err(Failed);
        }
        for (arg, grid) in sig.inputs.iter().zip(&names) {
            let FnArg::Typed(pt) = arg else {
                self.error(arg, "a tile function takes its grid indices, not `self`");
                ok = false;
                continue;
            };
            match &*pt.pat {
                Pat::Ident(p) if p.ident == grid => {}
                pat => {
                    self.error(
                        pat,
                        format!(
                            "parameter `{}` does not match grid index `{grid}`: the parameters name the grid \
                             indices, in order",
                            super::spans::written(pat)
                        ),
                    );
                    ok = false;
                }
            }
            if !ends_with(&pt.ty, "Idx") {
                self.error(&pt.ty, "a grid index has type `Idx` (it is symbolic: the macro evaluates it)");
                ok = false;
            }
        }
        if ok { Ok(()) } else { Err(Failed) }
    }

    /// The op calls of a tile body, and its `run_if_above` guard.
    fn tile_body(&mut self, stmts: &[Stmt], scope: &mut Scope, tile: &str) -> (Vec<OpCall>, Option<Guard>) {
        let mut body = Vec::new();
        let mut guard = GuardState::default();
        self.tile_stmts(stmts, scope, tile, &mut body, &mut guard, None);
        (body, guard.lowered)
    }

    /// Lowers the statements of a tile body into `body`; `in_loop` is the `for` they repeat in.
    pub(super) fn tile_stmts(
        &mut self,
        stmts: &[Stmt],
        scope: &mut Scope,
        tile: &str,
        body: &mut Vec<OpCall>,
        guard: &mut GuardState,
        in_loop: Option<SpanRange>,
    ) {
        for stmt in stmts {
            match stmt {
                Stmt::Expr(Expr::Call(call), _) => {
                    let Expr::Path(p) = &*call.func else {
                        self.error(&call.func, "an op is called by name: `matmul(a, b, c)`");
                        continue;
                    };
                    let Some(op_ident) = p.path.segments.last().map(|s| s.ident.clone()) else { continue };
                    let op = op_ident.to_string();
                    if op == Guard::OP {
                        match in_loop {
                            Some(_) => {
                                self.error(
                                    call,
                                    format!(
                                        "`{}` guards the whole body of tile `{tile}`, so it cannot repeat in a \
                                         `for`\n\nhelp: move it above the loop",
                                        Guard::OP
                                    ),
                                );
                            }
                            None => self.guard(call, scope, tile, guard),
                        }
                        continue;
                    }
                    guard.after_op = true;
                    if self.poison.ops.contains(&op) {
                        continue;
                    }
                    let params: Vec<String> = self
                        .tf
                        .ops
                        .get(&op)
                        .map(|s| s.params.iter().map(|p| p.name.clone()).collect())
                        .unwrap_or_default();
                    let mut args = smallvec::SmallVec::new();
                    let mut ok = true;
                    for (i, a) in call.args.iter().enumerate() {
                        let what = match params.get(i) {
                            Some(p) => format!("argument `{p}` of `{op}`"),
                            None => format!("argument {} of `{op}`", i + 1),
                        };
                        match self.region(a, scope, &what) {
                            Ok(r) => args.push(r),
                            Err(Failed) => ok = false,
                        }
                    }
                    if ok {
                        let loc = self.loc(SpanRange::of(&call.func));
                        body.push(OpCall { op, args, loc });
                    }
                }
                Stmt::Expr(Expr::ForLoop(l), _) => self.repeat(l, scope, tile, body, guard),
                Stmt::Local(local) => self.binding(local, scope),
                Stmt::Item(syn::Item::Fn(f)) if f.attrs.iter().any(|a| super::ast::helper(a).is_some()) => {
                    self.error(
                        &f.sig.ident,
                        format!("tiles and ops are declared in the taskflow body, not inside tile `{tile}`"),
                    );
                }
                other => {
                    self.error(
                        other,
                        "a tile body holds op calls (`matmul(a, b, c);`), `let` bindings, `for` loops over a \
                         constant range and a `run_if_above` guard only",
                    );
                }
            }
        }
    }

    /// `run_if_above(count, above);`: at most one per tile, before its ops.
    fn guard(&mut self, call: &syn::ExprCall, scope: &Scope, tile: &str, state: &mut GuardState) {
        let here = SpanRange::of(&call.func);
        if let Some(first) = state.first {
            let line = first.start.start().line;
            let at = if line > 0 { format!(" (line {line})") } else { String::new() };
            self.errors.push(here.error(format!(
                "tile `{tile}` has two `{}` guards\n\nhelp: a tile has one guard: keep one of the calls\nnote: the \
                 first guard is here{at}",
                Guard::OP
            )));
            return;
        }
        state.first = Some(here);
        if state.after_op {
            self.errors.push(here.error(format!(
                "`{}` guards the whole body of tile `{tile}`, so it comes before the tile's ops\n\nhelp: move it \
                 above the first op call (`let` bindings may come first)",
                Guard::OP
            )));
        }
        let mut args = call.args.iter();
        let (Some(count), Some(above), None) = (args.next(), args.next(), args.next()) else {
            self.error(
                call,
                format!("`{}` takes the count and the bound it must exceed: `{0}(COUNTS.at(e), b * B)`", Guard::OP),
            );
            return;
        };
        let count = self.region(count, scope, &format!("argument `count` of `{}`", Guard::OP));
        let above = self.index(above, scope);
        if let (Ok(count), Ok(above)) = (count, above) {
            let loc = self.loc(here);
            state.lowered = Some(Guard { count, above, loc });
        }
    }

    fn binding(&mut self, local: &syn::Local, scope: &mut Scope) {
        let usage = "a `let` in a tile body binds a name to a region or an index: `let rows = X.at(e);`";
        let (Pat::Ident(p), Some(init)) = (&local.pat, &local.init) else {
            self.error(local, usage);
            return;
        };
        if p.by_ref.is_some() || p.mutability.is_some() || p.subpat.is_some() || init.diverge.is_some() {
            self.error(local, usage);
            return;
        }
        let name = p.ident.to_string();
        let bound = if self.looks_like_region(&init.expr, scope) {
            self.region(&init.expr, scope, &format!("`{name}`")).map(|r| Binding::Region(Box::new(r)))
        } else {
            self.index(&init.expr, scope).map(Binding::Index)
        };
        scope.lets.insert(name, bound.unwrap_or(Binding::Failed));
    }

    fn afters(&mut self, entries: &[Expr], scope: &Scope) -> Vec<After> {
        let mut out = Vec::new();
        let usage = "an `after` entry is a tile, optionally with one index (or `..`) per grid dimension of that \
                     tile: `after(gmm1(e, ..))`";
        for entry in entries {
            let (path, args): (&Expr, Vec<&Expr>) = match entry {
                Expr::Path(_) => (entry, Vec::new()),
                Expr::Call(c) => (&*c.func, c.args.iter().collect()),
                _ => {
                    self.error(entry, usage);
                    continue;
                }
            };
            let Some(family) = (match path {
                Expr::Path(p) => p.path.get_ident().map(ToString::to_string),
                _ => None,
            }) else {
                self.error(entry, usage);
                continue;
            };
            if self.poison.tiles.contains(&family) {
                continue;
            }
            if let Some(when) = self.absent.get(&family) {
                let msg = format!(
                    "tile `{family}` does not exist at these sizes (its `when({when})` is false), so no tile can \
                     wait for it\n\nhelp: give this tile a `when` that is false whenever `{family}`'s is, or drop the \
                     entry"
                );
                self.error(entry, msg);
                continue;
            }
            let mut indices = smallvec::SmallVec::new();
            let mut ok = true;
            if args.is_empty() && matches!(entry, Expr::Path(_)) {
                // `after(name)`: every instance of that tile.
                let arity = self.tile_arity.get(&family).copied().unwrap_or(0);
                indices.extend(std::iter::repeat_n(IndexSel::All, arity));
            }
            let grid_only = Scope { grid: scope.grid.clone(), lets: HashMap::new() };
            for a in args {
                match a {
                    Expr::Range(r) if r.start.is_none() && r.end.is_none() => indices.push(IndexSel::All),
                    Expr::Range(r) => match self.after_range(r, &grid_only) {
                        Ok(sel) => indices.push(sel),
                        Err(Failed) => ok = false,
                    },
                    _ => match self.index(a, &grid_only) {
                        Ok(e) => indices.push(IndexSel::At(e)),
                        Err(Failed) => ok = false,
                    },
                }
            }
            if ok {
                let loc = self.loc(SpanRange::of(entry));
                out.push(After { family, indices, loc });
            }
        }
        out
    }
}

impl Lower {
    /// `a .. b`, `a ..= b`, `.. b` in an `after` entry: the instances from `a` (0 if left out)
    /// up to `b`. A range must name its end: the lowering does not know the target's extent.
    fn after_range(&mut self, r: &syn::ExprRange, scope: &Scope) -> Result<IndexSel, Failed> {
        let Some(end) = &r.end else {
            return Err(self.error(
                r,
                "an `after` range names its end: `after(load(r * 4 .. r * 4 + 4))`, or `..` for every instance",
            ));
        };
        let start = match &r.start {
            Some(s) => self.index(s, scope),
            None => Ok(Affine::constant(0)),
        };
        let (start, end) = (start?, self.index(end, scope)?);
        let end = match r.limits {
            RangeLimits::HalfOpen(_) => Some(end),
            RangeLimits::Closed(_) => super::affine::add(&end, &Affine::constant(1), 1),
        };
        match end {
            Some(end) if start.modulo.is_none() && end.modulo.is_none() => Ok(IndexSel::Range { start, end }),
            Some(_) => Err(self.error(r, "the ends of an `after` range cannot use `%`: a range does not wrap around")),
            None => Err(self.error(r, "index expression overflows 64-bit arithmetic")),
        }
    }
}

/// Whether a type is a path ending in `last` (`Idx`, `dsl::Idx`, `Program`).
pub(super) fn ends_with(ty: &Type, last: &str) -> bool {
    match ty {
        Type::Path(p) => p.path.segments.last().is_some_and(|s| s.ident == last),
        Type::Group(g) => ends_with(&g.elem, last),
        Type::Paren(p) => ends_with(&p.elem, last),
        _ => false,
    }
}
