//! The items of a taskflow body, sorted by what they declare: integer constants, tensors,
//! tiles, user ops, and items the DSL does not read (kept as they are).

use super::consts::IntTy;
use super::spans::SpanRange;
use crate::model::{DType, TensorKind};
use syn::{Attribute, Expr, GenericArgument, Ident, ItemConst, ItemFn, PathArguments, Stmt, Type};

/// One item of the body the DSL reads.
#[derive(Clone, Debug)]
pub enum BodyItem<'a> {
    /// `const N: u64 = ...;`
    IntConst { ident: &'a Ident, ty: IntTy, expr: &'a Expr },
    /// `const X: Tensor<Bf16> = input([..]);`
    Tensor(TensorItem<'a>),
    /// `const A: Tensor<Bf16> = X;`: another name for the tensor `X` of the body.
    Alias(AliasItem<'a>),
    /// A `Tensor<..>` const whose declaration has an error already (an unknown element type,
    /// another initializer, a shape not written as an array): its name is declared, so its uses
    /// add no error of their own.
    FailedTensor(&'a ItemConst),
    /// `#[tile(...)] fn name(i: Idx, ..) { .. }`
    Tile { stmt: usize, item: &'a ItemFn, attr: &'a Attribute },
    /// `#[op(...)] fn name(a: &TileData, b: &mut TileData) { .. }`
    Op { stmt: usize, item: &'a ItemFn, attr: &'a Attribute },
}

/// A tensor declaration.
#[derive(Clone, Debug)]
pub struct TensorItem<'a> {
    pub item: &'a ItemConst,
    pub kind: TensorKind,
    pub dtype: DType,
    pub shape: Vec<&'a Expr>,
    /// The `[..]` of the shape, for errors.
    pub shape_expr: &'a Expr,
}

/// Another name for a tensor of the body: `const A: Tensor<Bf16> = X;`. A region written with
/// `A` is a region of `X` (the IR knows `X` only), so a shared layout file can read a tensor
/// whose name its includer chooses.
#[derive(Clone, Debug)]
pub struct AliasItem<'a> {
    pub item: &'a ItemConst,
    pub dtype: DType,
    /// The name it stands for.
    pub target: &'a Ident,
}

/// Which helper attribute an attribute is: `tile`, `op` or `taskflow` (by the last path
/// segment, so `#[hpmoe_macros::tile]` counts too).
pub fn helper(attr: &Attribute) -> Option<&'static str> {
    let last = attr.path().segments.last()?.ident.to_string();
    ["tile", "op", "taskflow"].into_iter().find(|h| *h == last)
}

/// Sorts the body's statements; statements the DSL cannot hold are errors.
pub fn body_items<'a>(stmts: &'a [Stmt], errors: &mut Vec<syn::Error>) -> Vec<BodyItem<'a>> {
    let mut out = Vec::new();
    for (i, stmt) in stmts.iter().enumerate() {
        match stmt {
            Stmt::Item(syn::Item::Const(c)) => {
                if c.ident == "RANKS" {
                    errors.push(SpanRange::of(&c.ident).error(
                        "`RANKS` is defined by `#[taskflow(ranks = ..)]`; it cannot be declared in the taskflow body",
                    ));
                } else if let Some(ty) = IntTy::from_type(&c.ty) {
                    out.push(BodyItem::IntConst { ident: &c.ident, ty, expr: &c.expr });
                } else if tensor_element(&c.ty).is_some()
                    && let Some(target) = alias_target(&c.expr)
                {
                    out.push(match element_dtype(c, errors) {
                        Some(dtype) => BodyItem::Alias(AliasItem { item: c, dtype, target }),
                        None => BodyItem::FailedTensor(c),
                    });
                } else if tensor_element(&c.ty).is_some() {
                    out.push(tensor_item(c, errors).map_or(BodyItem::FailedTensor(c), BodyItem::Tensor));
                }
            }
            Stmt::Item(syn::Item::Fn(f)) => {
                let helpers: Vec<(&Attribute, &str)> =
                    f.attrs.iter().filter_map(|a| helper(a).map(|h| (a, h))).collect();
                match helpers.as_slice() {
                    [] => {}
                    [(attr, "tile")] => out.push(BodyItem::Tile { stmt: i, item: f, attr }),
                    [(attr, "op")] => out.push(BodyItem::Op { stmt: i, item: f, attr }),
                    [(attr, "taskflow")] => {
                        errors.push(SpanRange::of(*attr).error("a taskflow cannot be declared inside another taskflow"))
                    }
                    [_] => {}
                    [_, (second, _), ..] => errors.push(
                        SpanRange::of(*second)
                            .error("a function of a taskflow is a `#[tile]` or an `#[op]`, with one such attribute"),
                    ),
                }
            }
            Stmt::Item(_) => {}
            Stmt::Local(l) => {
                let hint = match &l.init {
                    Some(init) if constructor(&init.expr).is_some() => {
                        "\n\nhelp: declare tensors as consts: `const X: Tensor<Bf16> = input([..]);` \
                         (tile functions cannot see `let` bindings)"
                    }
                    _ => "",
                };
                errors.push(SpanRange::of(l).error(format!(
                    "a taskflow body holds items only: integer consts, tensor consts, `#[tile]` and `#[op]` \
                     functions{hint}"
                )));
            }
            Stmt::Expr(..) | Stmt::Macro(_) => errors.push(SpanRange::of(stmt).error(
                "a taskflow body holds items only: integer consts, tensor consts, `#[tile]` and `#[op]` functions",
            )),
        }
    }
    out
}

/// `D` of a `Tensor<D>` type, when the type is one.
fn tensor_element(ty: &Type) -> Option<&Type> {
    let Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    if last.ident != "Tensor" {
        return None;
    }
    match &last.arguments {
        PathArguments::AngleBracketed(a) if a.args.len() == 1 => match &a.args[0] {
            GenericArgument::Type(t) => Some(t),
            _ => None,
        },
        _ => None,
    }
}

/// The tensor kind a constructor call makes: `input(..)`, `output(..)`, `scratch(..)`,
/// `symmetric(..)` (any path ending so, with or without a turbofish).
fn constructor(expr: &Expr) -> Option<(TensorKind, &syn::ExprCall)> {
    let Expr::Call(call) = expr else { return None };
    let Expr::Path(p) = &*call.func else { return None };
    let kind = match p.path.segments.last()?.ident.to_string().as_str() {
        "input" => TensorKind::Input,
        "output" => TensorKind::Output,
        "scratch" => TensorKind::Scratch,
        "symmetric" => TensorKind::Symmetric,
        _ => return None,
    };
    Some((kind, call))
}

/// `X` of `const A: Tensor<..> = X;`, when the initializer is a lone name.
fn alias_target(expr: &Expr) -> Option<&Ident> {
    match expr {
        Expr::Path(p) if p.qself.is_none() && p.attrs.is_empty() => p.path.get_ident(),
        Expr::Paren(p) => alias_target(&p.expr),
        Expr::Group(g) => alias_target(&g.expr),
        _ => None,
    }
}

/// The element type `D` of a `Tensor<D>` type names, when it is one the DSL knows (by the last
/// path segment: `Bf16`, `F16`, `F32`, `I8` or `I32`).
pub fn element_of(ty: &Type) -> Option<DType> {
    let Type::Path(p) = tensor_element(ty)? else { return None };
    match p.path.segments.last()?.ident.to_string().as_str() {
        "Bf16" => Some(DType::Bf16),
        "F16" => Some(DType::F16),
        "F32" => Some(DType::F32),
        "I8" => Some(DType::I8),
        "I32" => Some(DType::I32),
        _ => None,
    }
}

/// The element type of a `Tensor<D>` const, or an error at `D`.
fn element_dtype(c: &ItemConst, errors: &mut Vec<syn::Error>) -> Option<DType> {
    let elem = tensor_element(&c.ty)?;
    let dtype = element_of(&c.ty);
    if dtype.is_none() {
        errors.push(SpanRange::of(elem).error("unknown element type; tensors hold Bf16, F16, F32, I8 or I32"));
    }
    dtype
}

fn tensor_item<'a>(c: &'a ItemConst, errors: &mut Vec<syn::Error>) -> Option<TensorItem<'a>> {
    let dtype = element_dtype(c, errors)?;
    let Some((kind, call)) = constructor(&c.expr) else {
        errors.push(SpanRange::of(&c.expr).error(
            "a tensor is declared with `input([..])`, `output([..])`, `scratch([..])` or `symmetric([..])`, or \
                 names another tensor of the body (`const A: Tensor<Bf16> = X;`)",
        ));
        return None;
    };
    match call.args.first() {
        Some(shape_expr @ Expr::Array(a)) if call.args.len() == 1 => {
            Some(TensorItem { item: c, kind, dtype, shape: a.elems.iter().collect(), shape_expr })
        }
        _ => {
            errors.push(
                SpanRange::of(&call.args)
                    .error("a tensor's shape is an array of compile-time constants: `input([T, H])`"),
            );
            None
        }
    }
}
