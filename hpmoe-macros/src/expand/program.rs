//! The block a taskflow function returns: a `::hpmoe_core::dsl::Program` of `'static`
//! data computed now. Its items live in their own block, named `__hpmoe_*`, so they cannot
//! collide with the user's items; every path is absolute.

use super::tile::tile_fn;
use hpmoe_core::Compiled;
use hpmoe_core::syntax::Frontend;
use proc_macro2::{Literal, Span, TokenStream};
use quote::{format_ident, quote};

/// The program block.
pub fn program(fe: &Frontend, compiled: &Compiled) -> TokenStream {
    let tf = &fe.taskflow;
    let site = Span::mixed_site();
    let name = &tf.name;
    let table = Literal::byte_string(&hpmoe_core::dsl::pack::pack(&compiled.table.to_bytes()));
    let flags = Literal::byte_string(&compiled.flags_bin);
    let ir = Literal::string(&tf.to_json());
    let grids = tf.families.iter().map(|f| {
        let extents = f.grid.iter().map(|g| g.extent);
        quote!(&[#(#extents),*])
    });
    let tile_names: Vec<_> = (0..tf.families.len()).map(|i| format_ident!("__hpmoe_tile_{}", i, span = site)).collect();
    let tiles = tf.families.iter().zip(&tile_names).map(|(f, n)| tile_fn(tf, f, n));
    let (op_fns, op_records): (Vec<TokenStream>, Vec<TokenStream>) = fe
        .ops
        .iter()
        .enumerate()
        .map(|(i, op)| {
            let adapter = format_ident!("__hpmoe_op_{}", i, span = site);
            let args = proc_macro2::Ident::new("args", site);
            let user = &op.ident;
            let name = op.ident.to_string();
            let vars: Vec<_> = (0..op.params.len()).map(|k| format_ident!("a{}", k, span = site)).collect();
            let n = op.params.len();
            let emit = tf.ops.get(&name).and_then(|s| s.emit()).unwrap_or_default().to_owned();
            let msg = format!("op `{name}` takes {n} regions");
            let f = quote! {
                fn #adapter(#args: &mut [::hpmoe_core::dsl::TileData]) {
                    match #args {
                        [#(#vars),*] => #user(#(#vars),*),
                        _ => ::core::panic!(#msg),
                    }
                }
            };
            let record = quote! {
                ::hpmoe_core::dsl::UserOp { name: #name, params: #n, emit: #emit, reference: #adapter }
            };
            (f, record)
        })
        .unzip();
    let (kernel, header, launcher) = match hpmoe_ascendc::emit(tf, compiled) {
        Ok(files) => {
            let source = Literal::string(&files.cpp);
            (
                quote!(::core::result::Result::Ok(#source)),
                Literal::string(&files.header),
                Literal::string(&files.launcher),
            )
        }
        Err(why) => {
            let why = Literal::string(&why.to_string());
            (quote!(::core::result::Result::Err(#why)), Literal::string(""), Literal::string(""))
        }
    };
    let table_ident = format_ident!("__HPMOE_TABLE", span = site);
    let flags_ident = format_ident!("__HPMOE_FLAGS", span = site);
    let ir_ident = format_ident!("__HPMOE_IR", span = site);
    quote! {{
        #[doc = " The schedule table (`ScheduleTable::to_bytes`), packed (`hpmoe_core::dsl::pack`)."]
        const #table_ident: &[u8] = #table;
        #[doc = " The flag plan (`NAME_flags.bin`) of the table."]
        const #flags_ident: &[u8] = #flags;
        #[doc = " The taskflow IR, as JSON."]
        const #ir_ident: &str = #ir;
        #(#tiles)*
        #(#op_fns)*
        ::hpmoe_core::dsl::Program {
            name: #name,
            ir_json: #ir_ident,
            table_packed: #table_ident,
            flags_bytes: #flags_ident,
            grids: &[#(#grids),*],
            tiles: &[#(#tile_names as ::hpmoe_core::dsl::TileFn),*],
            user_ops: &[#(#op_records),*],
            kernel_source: #kernel,
            kernel_header: #header,
            kernel_launcher: #launcher,
        }
    }}
}
