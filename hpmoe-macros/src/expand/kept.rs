//! The user's function as emitted: its items kept as written, so they type-check against
//! `hpmoe_core::dsl` and rust-analyzer can follow them, with these changes only:
//!
//! - the `#[tile]` / `#[op]` attributes are removed and every item is `#[allow(dead_code)]`
//!   (nothing calls the tile functions: the macro read them); tile functions also allow the
//!   clippy lints that judge index arithmetic at the consts' one value (`modulo_one`,
//!   `identity_op`, `erasing_op`);
//! - a tile function whose `when(..)` is false is left out (the taskflow does not have it);
//! - `const RANKS: u64 = N;` is added;
//! - when the taskflow has errors, statements the body may not hold are left out, consts
//!   the macro could not evaluate or tensors it could not declare get a neutral initializer
//!   (and a tensor of an unknown element type `Tensor<F32>`) and a tile's `for` whose range is
//!   not constant gets an empty one, so each mistake is reported once;
//! - inside each tile function, a function with each user op's name and parameters taking
//!   regions shadows the op's reference body, so that `my_op(X.at(e), ..)` type-checks
//!   (go-to-definition still lands on the user's op, whose name the shadow carries);
//! - the function becomes `const fn name() -> ::hpmoe_core::dsl::Program` and returns the
//!   generated block (or, when the taskflow has errors, panics: it never compiles anyway).

use hpmoe_core::syntax::{
    Frontend,
    ast::{element_of, helper},
};
use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote, quote_spanned};
use syn::{Item, Stmt};

/// The kept function, returning `body` (the generated program) or, without one, a panic.
pub fn function(fe: &Frontend, body: Option<TokenStream>) -> TokenStream {
    let item = &fe.item;
    let attrs = &item.attrs;
    let vis = &item.vis;
    let ident = &item.sig.ident;
    let ranks = fe.taskflow.profile.ranks as u64;
    let shadows = shadows(fe);
    let failed = body.is_none();
    let stmts = item.block.stmts.iter().filter(|stmt| !(absent(fe, stmt) || failed && rejected(stmt))).map(|stmt| match stmt {
        Stmt::Item(it) => {
            let mut it = it.clone();
            if failed && let Item::Const(c) = &mut it {
                neutralise(fe, c);
            }
            let is_tile = matches!(&it, Item::Fn(f) if f.attrs.iter().any(|a| helper(a) == Some("tile")));
            if let Some(attrs) = item_attrs(&mut it) {
                attrs.retain(|a| helper(a).is_none());
            }
            if let (true, Item::Fn(f)) = (is_tile, &mut it) {
                if failed {
                    let symbolic = symbolic_names(f);
                    neutralise_loops(&mut f.block.stmts, &symbolic);
                }
                let old = std::mem::take(&mut f.block.stmts);
                let shadow: syn::Block = syn::parse_quote!({ #shadows });
                f.block.stmts = shadow.stmts.into_iter().chain(old).collect();
                // A tile body is read by the macro, not run: its index arithmetic is written for
                // every value of the taskflow's consts, so lints that judge it at this one value
                // (`% WG` with `WG = 1`, `+ 0`, `* 0`) give advice that would break other values.
                quote!(#[allow(dead_code, unused_variables, clippy::modulo_one, clippy::identity_op, clippy::erasing_op)] #it)
            } else {
                quote!(#[allow(dead_code)] #it)
            }
        }
        other => other.to_token_stream(),
    });
    let tail = body.unwrap_or_else(|| {
        let msg = format!("taskflow `{ident}` has errors");
        quote!(::core::panic!(#msg))
    });
    let ranks_doc = format!(" Number of ranks (`#[taskflow(ranks = {ranks})]`).");
    let ranks_ident = syn::Ident::new("RANKS", Span::call_site());
    let fn_token = &item.sig.fn_token;
    let program = quote_spanned!(item.sig.ident.span()=> ::hpmoe_core::dsl::Program);
    quote! {
        #(#attrs)*
        #vis const #fn_token #ident() -> #program {
            #[doc = #ranks_doc]
            #[allow(dead_code)]
            const #ranks_ident: u64 = #ranks;
            #(#stmts)*
            #tail
        }
    }
}

/// A tile function whose `when(..)` is false: the taskflow does not have it, as if it were not
/// written (like an item under a false `#[cfg]`), so it is left out here too and rustc and
/// clippy do not judge a body written for other sizes (`% G` with `G = 1`, a grid that would be
/// empty) at this one.
fn absent(fe: &Frontend, stmt: &Stmt) -> bool {
    matches!(stmt, Stmt::Item(Item::Fn(f))
        if f.attrs.iter().any(|a| helper(a) == Some("tile")) && fe.absent.contains_key(&f.sig.ident.to_string()))
}

/// A statement the front-end refused (a taskflow body holds items only): with errors, it is
/// left out, so rustc does not report it, or a const that uses it, a second time.
fn rejected(stmt: &Stmt) -> bool {
    matches!(stmt, Stmt::Local(_) | Stmt::Expr(..) | Stmt::Macro(_))
}

/// A const whose value or shape the macro could not evaluate has its error already: with
/// errors, its initializer becomes a neutral value of its type (`0`, or a tensor of no
/// shape), so rustc does not report the same mistake again (an E0080 overflow, E0435, a
/// mismatched type) while the const stays declared for the code that names it.
fn neutralise(fe: &Frontend, c: &mut syn::ItemConst) {
    let name = c.ident.to_string();
    let span = syn::spanned::Spanned::span(&*c.expr);
    if fe.poison.consts.contains(&name) {
        *c.expr = syn::parse_quote_spanned!(span=> 0);
    } else if fe.poison.tensors.contains(&name) {
        *c.expr = syn::parse_quote_spanned!(span=> ::hpmoe_core::dsl::scratch([]));
        if element_of(&c.ty).is_none() {
            // An unknown element type (reported): a known one, so rustc does not look it up.
            let span = syn::spanned::Spanned::span(&*c.ty);
            *c.ty = syn::parse_quote_spanned!(span=> ::hpmoe_core::dsl::Tensor<::hpmoe_core::dsl::F32>);
        }
    }
}

/// The names a tile body's index expressions may use that are not integers to rustc: its
/// grid parameters, `RANK` and its `let`s.
fn symbolic_names(f: &syn::ItemFn) -> Vec<String> {
    let mut names = vec!["RANK".to_string()];
    for input in &f.sig.inputs {
        if let syn::FnArg::Typed(t) = input {
            names.push(t.pat.to_token_stream().to_string());
        }
    }
    for stmt in &f.block.stmts {
        if let Stmt::Local(l) = stmt {
            names.push(l.pat.to_token_stream().to_string());
        }
    }
    names
}

/// A `for` whose range uses a grid index, `RANK` or a `let` has its error already (the range of
/// a `for` in a tile body is a compile-time constant): with errors, the range becomes `0..0`, so
/// rustc does not report the same mistake again as a mismatched type.
fn neutralise_loops(stmts: &mut [Stmt], symbolic: &[String]) {
    for stmt in stmts {
        if let Stmt::Expr(syn::Expr::ForLoop(l), _) = stmt {
            if mentions(l.expr.to_token_stream(), symbolic) {
                let span = syn::spanned::Spanned::span(&*l.expr);
                *l.expr = syn::parse_quote_spanned!(span=> 0u64..0);
            }
            neutralise_loops(&mut l.body.stmts, symbolic);
        }
    }
}

/// Whether `tokens` hold an identifier of `names`.
fn mentions(tokens: TokenStream, names: &[String]) -> bool {
    tokens.into_iter().any(|t| match t {
        proc_macro2::TokenTree::Ident(i) => names.iter().any(|n| i == n),
        proc_macro2::TokenTree::Group(g) => mentions(g.stream(), names),
        _ => false,
    })
}

/// The region-taking stand-ins of the user ops, for the bodies of tile functions.
fn shadows(fe: &Frontend) -> TokenStream {
    let fns = fe.ops.iter().map(|op| {
        let name = &op.ident;
        let params = &op.params;
        quote! {
            #[allow(dead_code, unused_variables, clippy::too_many_arguments)]
            fn #name(#(#params: impl ::core::convert::Into<::hpmoe_core::dsl::Region>),*) {}
        }
    });
    quote!(#(#fns)*)
}

fn item_attrs(item: &mut Item) -> Option<&mut Vec<syn::Attribute>> {
    Some(match item {
        Item::Fn(f) => &mut f.attrs,
        Item::Const(c) => &mut c.attrs,
        Item::Static(s) => &mut s.attrs,
        Item::Struct(s) => &mut s.attrs,
        Item::Enum(e) => &mut e.attrs,
        Item::Use(u) => &mut u.attrs,
        Item::Mod(m) => &mut m.attrs,
        Item::Type(t) => &mut t.attrs,
        Item::Impl(i) => &mut i.attrs,
        Item::Trait(t) => &mut t.attrs,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::super::taskflow;
    use quote::quote;

    /// The kept function's tile functions, by name, of a layout with a chain of accumulating
    /// tiles under `when(ROWS / G > 1)`, at `G` rows per group.
    fn kept_tiles(g: u64) -> Vec<String> {
        let g = proc_macro2::Literal::u64_unsuffixed(g);
        let out = taskflow(
            None,
            quote!(profile = small(1), ranks = 1),
            quote! {
                fn groups() {
                    const ROWS: u64 = 8;
                    const G: u64 = #g;
                    const X: Tensor<F32> = input([ROWS, 8]);
                    const SUM: Tensor<F32> = output([1, 8]);
                    #[tile(aiv)]
                    fn first() {
                        copy(X.slice(0, 1), SUM.all());
                    }
                    #[tile(aiv, grid(m in 0..ROWS / G - 1), after(rest(m - 1)), when(ROWS / G > 1))]
                    fn rest(m: Idx) {
                        accumulate(X.slice((m + 1) * G, 1), SUM.all());
                    }
                }
            },
        );
        let file: syn::File = syn::parse2(out).expect("the expansion parses as a file");
        let syn::Item::Fn(kept) = &file.items[0] else { panic!("the kept function comes first") };
        kept.block
            .stmts
            .iter()
            .filter_map(|s| match s {
                syn::Stmt::Item(syn::Item::Fn(f)) => Some(f.sig.ident.to_string()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_tile_whose_when_is_false_is_left_out_of_the_kept_function() {
        assert_eq!(kept_tiles(4), ["first", "rest"]);
        assert_eq!(kept_tiles(8), ["first"]);
    }
}
