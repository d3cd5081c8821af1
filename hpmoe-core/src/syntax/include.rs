//! `include!("file.rs");` in a taskflow body: the items of another file, read in its place.
//!
//! One taskflow layout can then serve several shapes: each includer declares the shape's
//! integer consts and includes the file holding the tensors and tiles written in terms of them
//! (`examples/dsl/moe_ffn.rs` is included by the DeepSeek-V3 example, the trybuild pass case
//! and the host tests at their own sizes). A proc-macro attribute sees tokens only, so the
//! front-end reads the file itself, relative to the folder of the file holding the taskflow —
//! as rustc's `include!` does; the `#[taskflow]` macro knows that folder from the compiler, a
//! build script from the path it was given ([`super::parse_file_in`]).
//!
//! The included file holds body items only (integer and tensor consts, `#[tile]` and `#[op]`
//! functions) and includes nothing itself. Its tokens take the span of the `include!`
//! statement, so an error inside it is reported there, alike in the macro and in build
//! scripts (whose own parse of the text would number its lines from the included file's
//! start and name the includer).

use super::input_bounds;
use super::spans::SpanRange;
use proc_macro2::{Group, Span, TokenStream, TokenTree};
use std::path::{Path, PathBuf};
use syn::{ItemFn, Stmt};

/// Replaces each `include!("path");` statement of `item`'s body by the items of the file,
/// `path` being relative to `dir`. Returns the files read (for rebuild tracking), and an error
/// per include that could not be read or parsed; such a statement is left out. The paths
/// returned are absolute.
pub fn splice(item: &mut ItemFn, dir: Option<&Path>) -> (Vec<PathBuf>, Vec<syn::Error>) {
    let mut files = Vec::new();
    let mut errors = Vec::new();
    let stmts = std::mem::take(&mut item.block.stmts);
    for stmt in stmts {
        let Some(mac) = include_macro(&stmt) else {
            item.block.stmts.push(stmt);
            continue;
        };
        let at = SpanRange::of(mac);
        match read(mac, dir, at) {
            Ok((path, items)) => {
                item.block.stmts.extend(items.into_iter().map(Stmt::Item));
                files.push(path);
            }
            Err(e) => errors.push(e),
        }
    }
    (files, errors)
}

/// The `include!(..)` macro of a statement, if it is one.
fn include_macro(stmt: &Stmt) -> Option<&syn::Macro> {
    let mac = match stmt {
        Stmt::Macro(m) => &m.mac,
        Stmt::Item(syn::Item::Macro(m)) => &m.mac,
        _ => return None,
    };
    mac.path.is_ident("include").then_some(mac)
}

/// The file an `include!` names and its items, spanned at the `include!`.
fn read(mac: &syn::Macro, dir: Option<&Path>, at: SpanRange) -> syn::Result<(PathBuf, Vec<syn::Item>)> {
    let name: syn::LitStr = mac
        .parse_body()
        .map_err(|_| at.error("`include!` in a taskflow takes one string literal: `include!(\"layer.rs\");`"))?;
    let dir = dir.ok_or_else(|| {
        at.error("`include!` needs the folder of the file holding the taskflow, which is not known here")
    })?;
    let path = dir.join(name.value());
    let text =
        std::fs::read_to_string(&path).map_err(|e| at.error(format!("cannot read `{}`: {e}", path.display())))?;
    // Absolute, so that it names the same file wherever it is used again (`include_bytes!`
    // resolves a relative path against the file it appears in, not the compiler's folder).
    let path = path.canonicalize().unwrap_or(path);
    let tokens: TokenStream =
        text.parse().map_err(|e| at.error(format!("`{}` is not Rust tokens: {e}", path.display())))?;
    input_bounds::check_tokens(&tokens)?;
    let file: syn::File = syn::parse2(respan(tokens, at.start))
        .map_err(|e| at.error(format!("`{}` does not parse as items: {e}", path.display())))?;
    if let Some(nested) = file.items.iter().find(|i| matches!(i, syn::Item::Macro(m) if m.mac.path.is_ident("include")))
    {
        return Err(SpanRange::of(nested).error(format!("`{}` includes another file; one level only", path.display())));
    }
    Ok((path, file.items))
}

/// `tokens` with every span set to `span`.
fn respan(tokens: TokenStream, span: Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut tt| {
            if let TokenTree::Group(g) = &tt {
                let mut group = Group::new(g.delimiter(), respan(g.stream(), span));
                group.set_span(span);
                tt = TokenTree::Group(group);
            } else {
                tt.set_span(span);
            }
            tt
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("hpmoe-include-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn taskflow(body: &str) -> ItemFn {
        syn::parse_str(&format!("fn t() {{ const N: u64 = 4; {body} }}")).unwrap()
    }

    #[test]
    fn an_include_becomes_the_items_of_its_file() {
        let d = dir("ok");
        std::fs::write(d.join("body.rs"), "const X: Tensor<F32> = input([N]);\n#[tile(aiv)]\nfn t() {}\n").unwrap();
        let mut item = taskflow("include!(\"body.rs\");");
        let (files, errors) = splice(&mut item, Some(&d));
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(files, [d.join("body.rs").canonicalize().unwrap()]);
        let kinds: Vec<&str> = item
            .block
            .stmts
            .iter()
            .map(|s| match s {
                Stmt::Item(syn::Item::Const(c)) => {
                    if c.ident == "N" {
                        "N"
                    } else {
                        "X"
                    }
                }
                Stmt::Item(syn::Item::Fn(_)) => "fn",
                _ => "other",
            })
            .collect();
        assert_eq!(kinds, ["N", "X", "fn"]);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_check_error_inside_an_included_file_is_reported_at_the_include() {
        let d = dir("check");
        let body = "const X: Tensor<F32> = input([N, 8]);\n\
                    #[tile(aiv, grid(b in 0..2))]\nfn t(b: Idx) {\n    copy(X.slice(b * 2, 2), MISSING);\n}\n";
        std::fs::write(d.join("body.rs"), body).unwrap();
        let src = "#[taskflow(profile = small(1), ranks = 1)]\nfn t() {\n    const N: u64 = 4;\n    \
                   include!(\"body.rs\");\n}\n";
        let found = super::super::parse_file_in(src, Some(&d)).unwrap();
        assert_eq!(found[0].includes, [d.join("body.rs").canonicalize().unwrap()]);
        let err = found[0].compile(&crate::schedule::UnitCost).unwrap_err();
        let text = super::super::render_error(&err, "lib.rs");
        assert!(text.starts_with("lib.rs:4:5: error: "), "{text}");
        assert!(text.contains("MISSING"), "{text}");
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn what_cannot_be_included_is_an_error_at_the_include() {
        let d = dir("bad");
        std::fs::write(d.join("nested.rs"), "include!(\"other.rs\");\n").unwrap();
        std::fs::write(d.join("broken.rs"), "fn 3() {}\n").unwrap();
        std::fs::write(d.join("unbalanced.rs"), "fn (\n").unwrap();
        let cases = [
            ("include!(\"missing.rs\");", Some(d.as_path()), "cannot read"),
            ("include!(\"nested.rs\");", Some(d.as_path()), "one level only"),
            ("include!(\"broken.rs\");", Some(d.as_path()), "does not parse as items"),
            ("include!(\"unbalanced.rs\");", Some(d.as_path()), "is not Rust tokens"),
            ("include!(body);", Some(d.as_path()), "one string literal"),
            ("include!(\"body.rs\");", None, "folder of the file"),
        ];
        for (body, at, want) in cases {
            let mut item = taskflow(body);
            let (files, errors) = splice(&mut item, at);
            assert!(files.is_empty(), "{body}");
            assert_eq!(errors.len(), 1, "{body}");
            assert!(errors[0].to_string().contains(want), "{body}: {}", errors[0]);
            assert_eq!(item.block.stmts.len(), 1, "the include is left out: {body}");
        }
        let _ = std::fs::remove_dir_all(&d);
    }
}
