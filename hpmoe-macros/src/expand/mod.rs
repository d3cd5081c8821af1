//! Expansion: the front-end's result → the emitted tokens.
//!
//! [`kept`] rewrites the user's function (helper attributes removed, `RANKS` added, made a
//! `const fn` returning `Program`); [`program`] builds the block that function returns:
//! the schedule table, the IR, the host form of each tile ([`tile`]) and the user ops'
//! reference bodies. On error the function is still emitted, with every error beside it.
//! The planned table is certified ([`hpmoe_core::certify`]) before it is embedded: one that
//! fails is an internal error of hpmoe, a compile error at the taskflow.

mod kept;
mod program;
mod tile;

use hpmoe_core::Compiled;
use hpmoe_core::certify::certify_compiled;
use hpmoe_core::syntax::{self, Frontend};
use proc_macro2::{Span, TokenStream};
use quote::quote;
use std::path::Path;

/// Expands `#[taskflow(args)] item` of a file in folder `dir` (when the compiler tells it).
pub fn taskflow(dir: Option<&Path>, args: TokenStream, item: TokenStream) -> TokenStream {
    let fe = match syntax::parse_in(dir, args, item.clone()) {
        Ok(fe) => fe,
        // Not a function (or beyond the input bounds): nothing to rewrite.
        Err(e) => {
            let e = e.to_compile_error();
            return quote!(#e #item);
        }
    };
    // The one plan of the taskflow: the cost model and flags `hpmoe_ascendc::Build` and the main
    // job use too, so the embedded table, flag plan and kernel agree with theirs.
    let tracked = included(&fe);
    let planned = fe.plan(&hpmoe_core::PlanOptions::default());
    match planned.and_then(|compiled| certified_beside(&fe, &compiled, || program::program(&fe, &compiled))) {
        Ok(program) => {
            let kept = kept::function(&fe, Some(program));
            quote!(#kept #tracked)
        }
        Err(errors) => {
            let kept = kept::function(&fe, None);
            let errors = errors.to_compile_error();
            quote!(#kept #tracked #errors)
        }
    }
}

/// One `include_bytes!` per file the body includes: the macro read them, and this makes the
/// compiler rebuild the crate when one changes (a proc-macro cannot declare inputs otherwise).
fn included(fe: &Frontend) -> TokenStream {
    let paths = fe.includes.iter().map(|p| p.display().to_string());
    quote!(#(const _: &[u8] = ::core::include_bytes!(#paths);)*)
}

/// What `build` returns, once the certificate check passes `compiled`'s table and flag plan;
/// else a compile error at the taskflow (an internal-bug guard: the planner's tables always
/// pass). The check runs on a second thread while `build` runs on this one (tokens can only be
/// made on the macro's own thread): on the natural-routing flagship the check takes ~0.2 s and
/// the program's tokens ~0.07 s, which no longer add up.
fn certified_beside<T>(fe: &Frontend, compiled: &Compiled, build: impl FnOnce() -> T) -> Result<T, syn::Error> {
    let taskflow = &fe.taskflow;
    let (certificate, built) = std::thread::scope(|s| {
        let check = s.spawn(|| certify_compiled(taskflow, compiled));
        let built = build();
        (check.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)), built)
    });
    match certificate {
        Ok(_) => Ok(built),
        Err(e) => Err(fe.spans.get(fe.taskflow.loc).error(format!(
            "internal error in `#[taskflow]` (a bug in hpmoe, please report it): the planned schedule table is not certified: {e}"
        ))),
    }
}

/// `#[tile]` or `#[op]` used outside a taskflow: an error, and the item unchanged.
pub fn outside(what: &str, item: TokenStream) -> TokenStream {
    let msg = format!(
        "`#[{what}]` is only meaningful inside a `#[taskflow]` function: declare the {} in the body of the function \
         marked `#[taskflow(profile = .., ranks = ..)]`",
        if what == "tile" { "tile" } else { "op" }
    );
    let e = syn::Error::new(Span::call_site(), msg).to_compile_error();
    quote!(#e #item)
}

/// Runs `f`, turning a panic into a compile error beside the unchanged `item`, so a bug in
/// the macro never looks like a compiler crash and the IDE keeps the user's code.
pub fn guarded(item: TokenStream, f: impl FnOnce() -> TokenStream) -> TokenStream {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(tokens) => tokens,
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_string());
            let msg = format!("internal error in `#[taskflow]` (a bug in hpmoe, please report it): {what}");
            let e = syn::Error::new(Span::call_site(), msg).to_compile_error();
            quote!(#e #item)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_a_compile_error_beside_the_item() {
        let item = quote!(
            fn f() {}
        );
        let out = guarded(item, || panic!("boom")).to_string();
        assert!(out.contains("compile_error"), "{out}");
        assert!(out.contains("internal error in `#[taskflow]` (a bug in hpmoe, please report it): boom"), "{out}");
        assert!(out.ends_with("fn f () { }"), "{out}");
        let fine = guarded(quote!(), || {
            quote!(
                struct S;
            )
        })
        .to_string();
        assert_eq!(fine, "struct S ;");
    }

    #[test]
    fn helper_attributes_outside_a_taskflow_are_errors() {
        let out = outside(
            "tile",
            quote!(
                fn t() {}
            ),
        )
        .to_string();
        assert!(out.contains("`#[tile]` is only meaningful inside a `#[taskflow]` function"), "{out}");
        assert!(out.ends_with("fn t () { }"), "{out}");
    }
}

#[cfg(test)]
mod snapshot {
    //! The whole expansion of a small taskflow, pretty-printed, against a checked-in file
    //! (`UPDATE_EXPECT=1 cargo test -p hpmoe-macros` rewrites it after a deliberate change).

    use super::taskflow;
    use quote::quote;

    fn pretty(tokens: proc_macro2::TokenStream) -> String {
        let file: syn::File = syn::parse2(tokens).expect("the expansion parses as a file");
        prettyplease::unparse(&file)
    }

    #[test]
    fn small_taskflow() {
        let out = taskflow(
            None,
            quote!(profile = small(1), ranks = 2),
            quote! {
                /// Sends each rank's rows to the next rank, which doubles the blocks holding rows.
                pub fn ring() {
                    const N: u64 = 4;
                    const X: Tensor<F32> = input([2 * N, 8]);
                    const Y: Tensor<F32> = symmetric([2 * N, 8]);
                    const ROWS: Tensor<I32> = input([2]);
                    #[op(aiv, work = vector(1), emit = "Twice({dst}, {src})")]
                    fn twice(src: &TileData, dst: &mut TileData) {
                        for (d, s) in dst.values.iter_mut().zip(&src.values) {
                            *d = 2.0 * s;
                        }
                    }
                    #[tile(aiv, grid(b in 0..2))]
                    fn send(b: Idx) {
                        put(X.slice(b * N, N), Y.on((RANK + 1) % RANKS).slice(b * N, N));
                    }
                    #[tile(aiv, grid(b in 0..2))]
                    fn scale(b: Idx) {
                        run_if_above(ROWS.at(b), 0);
                        twice(Y.slice(b * N, N), Y.slice(b * N, N));
                    }
                }
            },
        );
        expect_test::expect_file!["snapshots/small_taskflow.rs"].assert_eq(&pretty(out));
    }

    #[test]
    fn on_error_the_function_is_kept_beside_the_errors() {
        let out = taskflow(
            None,
            quote!(profile = small(1), ranks = 2),
            quote! {
                fn broken() {
                    const X: Tensor<F32> = input([8]);
                    #[tile(aic, grid(i in 0..8))]
                    fn t(i: Idx) {
                        zero(X.at(i));
                    }
                }
            },
        );
        expect_test::expect_file!["snapshots/on_error.rs"].assert_eq(&pretty(out));
    }
}

#[cfg(test)]
mod certificate {
    use hpmoe_core::table::{NO_WAIT, TableView};
    use quote::quote;

    #[test]
    fn a_plan_whose_table_fails_the_certificate_is_a_compile_error_at_the_taskflow() {
        let fe = hpmoe_core::syntax::parse(
            quote!(profile = small(1), ranks = 2),
            quote! {
                fn ring() {
                    const X: Tensor<F32> = input([8, 8]);
                    const Y: Tensor<F32> = symmetric([8, 8]);
                    const Z: Tensor<F32> = output([8, 8]);
                    #[tile(aiv, grid(b in 0..2))]
                    fn send(b: Idx) {
                        put(X.slice(b * 4, 4), Y.on((RANK + 1) % RANKS).slice(b * 4, 4));
                    }
                    #[tile(aiv, grid(b in 0..2))]
                    fn keep(b: Idx) {
                        copy(Y.slice(b * 4, 4), Z.slice(b * 4, 4));
                    }
                }
            },
        )
        .unwrap();
        let mut compiled = fe.plan(&hpmoe_core::PlanOptions::default()).unwrap();
        super::certified_beside(&fe, &compiled, || ()).unwrap();
        let view = compiled.table.view();
        let mut entries = view.entries.to_vec();
        let i = entries.iter().position(|e| e.wait().is_some()).unwrap();
        entries[i].wait_counter = NO_WAIT;
        entries[i].wait_target = 0;
        compiled.table = TableView { entries: &entries, ..view }.to_owned();
        let err = super::certified_beside(&fe, &compiled, || ()).unwrap_err().to_string();
        assert!(err.starts_with("internal error in `#[taskflow]`"), "{err}");
        assert!(err.contains("not certified") && err.contains("keep(b="), "{err}");
    }
}

#[cfg(test)]
mod timing {
    //! Where the expansion of the DeepSeek-V3 EP8 layers (`examples/examples/moe_ffn_dsl.rs`,
    //! balanced and natural routing) spends its time, stage by stage, then the certificate check
    //! of the plan alone. A measurement, not a
    //! check: `cargo test -p hpmoe-macros --release -- --ignored --nocapture expansion_time`.
    //! The whole build cost (rustc included) is measured by `hpmoe-macros/macro_cost.sh`.

    use std::time::{Duration, Instant};

    fn ms(d: Duration) -> f64 {
        d.as_secs_f64() * 1e3
    }

    #[test]
    #[ignore = "a measurement; run in release"]
    fn expansion_time_of_the_deepseek_layer() {
        let file: syn::File = syn::parse_str(include_str!("../../../examples/examples/moe_ffn_dsl.rs")).unwrap();
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/examples");
        for name in ["moe_ffn", "moe_ffn_natural"] {
            let mut f = file
                .items
                .iter()
                .find_map(|i| match i {
                    syn::Item::Fn(f) if f.sig.ident == name => Some(f.clone()),
                    _ => None,
                })
                .unwrap();
            let attr = f.attrs.iter().position(|a| a.path().is_ident("taskflow")).unwrap();
            let syn::Meta::List(args) = f.attrs.remove(attr).meta else { panic!("#[taskflow(..)] has arguments") };
            let item = quote::ToTokens::to_token_stream(&f);
            for _ in 0..3 {
                let t = Instant::now();
                let out = super::taskflow(Some(&dir), args.tokens.clone(), item.clone());
                let whole = t.elapsed();
                let text = out.to_string();
                assert!(!text.contains("compile_error"));

                // The same stages one by one.
                let t = Instant::now();
                let fe = hpmoe_core::syntax::parse_in(Some(&dir), args.tokens.clone(), item.clone()).unwrap();
                let parse = t.elapsed();
                let t = Instant::now();
                let compiled = fe.plan(&hpmoe_core::PlanOptions::default()).unwrap();
                let plan = t.elapsed();
                let s = &compiled.times;
                let t = Instant::now();
                let files = hpmoe_ascendc::emit(&fe.taskflow, &compiled).unwrap();
                let emit = t.elapsed();
                let t = Instant::now();
                let bytes = compiled.table.to_bytes();
                let to_bytes = t.elapsed();
                let t = Instant::now();
                let packed = hpmoe_core::dsl::pack::pack(&bytes);
                let pack = t.elapsed();
                let t = Instant::now();
                let ir = fe.taskflow.to_json();
                let to_json = t.elapsed();
                let t = Instant::now();
                let tokens = super::kept::function(&fe, Some(super::program::program(&fe, &compiled)));
                let program = t.elapsed();
                drop(tokens);
                println!(
                    "{name}: whole {:.1} ms ({} bytes of tokens, table {} bytes) | parse {:.1} | plan {:.1} = checks {:.1} + expand {:.1} \
                     + list {:.1} + proof {:.1} + sync {:.1} + flags/table {:.1} + cost model/other {:.1} | to_bytes {:.1} | \
                     pack {:.1} ({} bytes) | ir json {:.1} ({} bytes) | emit {:.1} ({} bytes) | program tokens {:.1} (emit, to_bytes, pack and json included)",
                    ms(whole),
                    text.len(),
                    bytes.len(),
                    ms(parse),
                    ms(plan),
                    ms(s.structure + s.order_checks),
                    ms(s.expand),
                    ms(s.list_schedule),
                    ms(s.deadlock_proof),
                    ms(s.sync),
                    ms(s.table),
                    ms(plan.saturating_sub(s.total())),
                    ms(to_bytes),
                    ms(pack),
                    packed.len(),
                    ms(to_json),
                    ir.len(),
                    ms(emit),
                    files.cpp.len() + files.header.len() + files.launcher.len(),
                    ms(program),
                );
            }
            // Of that, the certificate check of the plan.
            let fe = hpmoe_core::syntax::parse_in(Some(&dir), args.tokens.clone(), item.clone()).unwrap();
            let compiled = fe.plan(&hpmoe_core::PlanOptions::default()).unwrap();
            for _ in 0..3 {
                let t = std::time::Instant::now();
                super::certified_beside(&fe, &compiled, || ()).unwrap();
                let elapsed = t.elapsed();
                println!("  of which the certificate check: {:.1} ms", elapsed.as_secs_f64() * 1e3);
            }
        }
    }
}
