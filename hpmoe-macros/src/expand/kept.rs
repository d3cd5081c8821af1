//! The user's function as emitted: its items kept as written, so they type-check against
//! `hpmoe_core::dsl` and rust-analyzer can follow them, with these changes only:
//!
//! - the `#[tile]` / `#[op]` attributes are removed and every item is `#[allow(dead_code)]`
//!   (nothing calls the tile functions: the macro read them);
//! - `const RANKS: u64 = N;` is added;
//! - when the taskflow has errors, statements the body may not hold are left out and consts
//!   the macro could not evaluate get a neutral initializer, so each mistake is reported once;
//! - inside each tile function, a function with each user op's name and parameters taking
//!   regions shadows the op's reference body, so that `my_op(X.at(e), ..)` type-checks
//!   (go-to-definition still lands on the user's op, whose name the shadow carries);
//! - the function becomes `const fn name() -> ::hpmoe_core::dsl::Program` and returns the
//!   generated block (or, when the taskflow has errors, panics: it never compiles anyway).

use hpmoe_core::syntax::{Frontend, ast::helper};
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
    let stmts = item.block.stmts.iter().filter(|stmt| !(failed && rejected(stmt))).map(|stmt| match stmt {
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
                let old = std::mem::take(&mut f.block.stmts);
                let shadow: syn::Block = syn::parse_quote!({ #shadows });
                f.block.stmts = shadow.stmts.into_iter().chain(old).collect();
                quote!(#[allow(dead_code, unused_variables)] #it)
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
    }
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
