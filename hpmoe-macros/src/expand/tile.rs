//! The host form of a tile family: a function evaluating each op's regions for one
//! instance (coordinates `at`, rank `ctx.rank()`) and calling `ctx.call(op, regions)`,
//! after checking the family's `run_if_above` guard, if it has one.
//!
//! Expressions are evaluated in `i64`, as the checks evaluated them for every instance of
//! the grid on every rank; `Program::run_tile` refuses coordinates outside the grid.

use hpmoe_core::model::{Affine, RankSel, Reduce, Region, Taskflow, TileFamily, Var};
use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote};
use std::collections::BTreeSet;

/// `fn #name(ctx: &mut dyn TileContext, at: &[u64]) { .. }` for family `family`. A guarded
/// family returns before its first op unless `ctx.read_count(count) > above`.
pub fn tile_fn(tf: &Taskflow, family: &TileFamily, name: &Ident) -> TokenStream {
    let site = Span::mixed_site();
    let ctx = Ident::new("ctx", site);
    let at = Ident::new("at", site);
    let rank = Ident::new("rank", site);
    let coords: Vec<Ident> = (0..family.grid.len()).map(|k| format_ident!("i{}", k, span = site)).collect();
    let mut used = BTreeSet::new();
    let guard = family.guard.as_ref().map(|g| {
        let count = region(tf, &g.count, &coords, &rank, &mut used);
        let above = affine(&g.above, &coords, &rank, &mut used);
        quote! {
            if !::hpmoe_core::dsl::__private::runs(#ctx, #count, #above) {
                return;
            }
        }
    });
    let calls: Vec<TokenStream> = family
        .body
        .iter()
        .map(|call| {
            let op = &call.op;
            let regions: Vec<TokenStream> =
                call.args.iter().map(|r| region(tf, r, &coords, &rank, &mut used)).collect();
            quote!(#ctx.call(#op, &[#(#regions),*]);)
        })
        .collect();
    let n = family.grid.len();
    let bound: Vec<TokenStream> =
        coords.iter().enumerate().map(|(k, c)| if used.contains(&k) { quote!(#c) } else { quote!(_) }).collect();
    let prelude = if calls.is_empty() && guard.is_none() {
        quote!(let _ = (#ctx, #at);)
    } else {
        quote! {
            let [#(#bound),*] = ::hpmoe_core::dsl::__private::coords::<#n>(#at);
            let #rank = i64::from(#ctx.rank());
        }
    };
    quote! {
        fn #name(#ctx: &mut dyn ::hpmoe_core::dsl::TileContext, #at: &[u64]) {
            #prelude
            #guard
            #(#calls)*
        }
    }
}

/// `__private::region(tensor, rank, starts, lens)` for region `r` of the instance.
fn region(tf: &Taskflow, r: &Region, coords: &[Ident], rank: &Ident, used: &mut BTreeSet<usize>) -> TokenStream {
    let (tensor, decl) =
        tf.tensors.iter().enumerate().find(|(_, t)| t.name == r.tensor).expect("the checks resolved every tensor");
    let rank_expr = match &r.rank {
        RankSel::Local => quote!(#rank),
        RankSel::Remote(e) => affine(e, coords, rank, used),
    };
    let starts: Vec<TokenStream> = (0..decl.shape.len())
        .map(|k| match r.dims.get(k) {
            Some(d) => affine(&d.start, coords, rank, used),
            None => quote!(0i64),
        })
        .collect();
    let lens = decl.shape.iter().enumerate().map(|(k, &extent)| {
        // The checks bounded extents by MAX_DIM_EXTENT (u32).
        let len = r.dims.get(k).map_or(extent, |d| d.len) as u32;
        quote!(#len)
    });
    quote!(::hpmoe_core::dsl::__private::region(#tensor, #rank_expr, &[#(#starts),*], &[#(#lens),*]))
}

/// `c + k0 * i0 + k * rank + k1 * (..).rem_euclid(m1) + k2 * (..).div_euclid(d2)`, then
/// `.rem_euclid(m)`, as an `i64` expression.
fn affine(e: &Affine, coords: &[Ident], rank: &Ident, used: &mut BTreeSet<usize>) -> TokenStream {
    let c = e.constant;
    let mut out: Option<TokenStream> = (c != 0 || (e.terms.is_empty() && e.parts.is_empty())).then(|| quote!(#c));
    for &(v, k) in &e.terms {
        let var = match v {
            Var::Index(i) => {
                used.insert(usize::from(i));
                let c = &coords[usize::from(i)];
                quote!(#c)
            }
            Var::Rank => quote!(#rank),
        };
        let term = if k == 1 { quote!(#var) } else { quote!(#k * #var) };
        out = Some(match out {
            Some(out) => quote!(#out + #term),
            None => term,
        });
    }
    for (p, k) in &e.parts {
        let inner = affine(&p.inner, coords, rank, used);
        let reduced = match p.op {
            Reduce::Rem(m) => {
                let m = m as i64;
                quote!((#inner).rem_euclid(#m))
            }
            Reduce::Div(d) => {
                let d = d as i64;
                quote!((#inner).div_euclid(#d))
            }
        };
        let term = if *k == 1 { reduced } else { quote!(#k * #reduced) };
        out = Some(match out {
            Some(out) => quote!(#out + #term),
            None => term,
        });
    }
    let out = out.unwrap_or_else(|| quote!(0i64));
    match e.modulo {
        Some(m) => {
            let m = m as i64;
            quote!((#out).rem_euclid(#m))
        }
        None => out,
    }
}
