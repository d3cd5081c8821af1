//! The build-script side: every `#[taskflow]` function of a source file, and errors as
//! `file:line:column` text.

use super::{Frontend, ast::helper, lower_in};
use crate::model::SourcePos;
use std::path::Path;
use syn::{Item, Meta};

/// Reads every `#[taskflow(..)]` function of a Rust source file, including those in inline
/// modules, in order. Fails only when the file does not parse as Rust or is beyond the
/// input bounds of [`super::input_bounds`].
pub fn parse_file(src: &str) -> syn::Result<Vec<Frontend>> {
    parse_file_in(src, None)
}

/// [`parse_file`] for the source of a file in folder `dir`, against which the taskflows'
/// `include!`s are resolved ([`super::include`]).
pub fn parse_file_in(src: &str, dir: Option<&Path>) -> syn::Result<Vec<Frontend>> {
    let tokens: proc_macro2::TokenStream = src.parse()?;
    super::input_bounds::check_tokens(&tokens)?;
    let file: syn::File = syn::parse2(tokens)?;
    let mut out = Vec::new();
    collect(&file.items, dir, &mut out);
    Ok(out)
}

fn collect(items: &[Item], dir: Option<&Path>, out: &mut Vec<Frontend>) {
    for item in items {
        match item {
            Item::Fn(f) => {
                let Some(pos) = f.attrs.iter().position(|a| helper(a) == Some("taskflow")) else { continue };
                let mut f = f.clone();
                let attr = f.attrs.remove(pos);
                let args = match attr.meta {
                    Meta::List(l) => l.tokens,
                    _ => proc_macro2::TokenStream::new(),
                };
                out.push(lower_in(dir, args, f));
            }
            Item::Mod(m) => {
                if let Some((_, items)) = &m.content {
                    collect(items, dir, out);
                }
            }
            _ => {}
        }
    }
}

/// Renders an error (each of its messages) as `path:line:column: error: message` lines.
pub fn render_error(err: &syn::Error, path: &str) -> String {
    error_positions(err, path).iter().map(|(at, message)| format!("{at}: error: {message}\n")).collect()
}

/// Each message of an error with where it starts in file `path` (1-based line and column).
pub fn error_positions(err: &syn::Error, path: &str) -> Vec<(SourcePos, String)> {
    err.clone().into_iter().map(|e| (position(path, e.span()), e.to_string())).collect()
}

/// Where `span` starts in file `path` (1-based line and column).
pub fn position(path: &str, span: proc_macro2::Span) -> SourcePos {
    let start = span.start();
    SourcePos {
        file: path.to_string(),
        line: u32::try_from(start.line).unwrap_or(u32::MAX),
        column: u32::try_from(start.column + 1).unwrap_or(u32::MAX),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_taskflows_in_modules_and_renders_positions() {
        let src = "mod a {\n    #[taskflow(profile = small(1), ranks = 1)]\n    fn t() {\n        const X: Tensor<F32> = \
                   input([0]);\n        let y = 3;\n    }\n}\nfn not_one() {}\n";
        let found = parse_file(src).unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].taskflow.name, "t");
        let err = found[0].compile(&crate::schedule::UnitCost).unwrap_err();
        let text = render_error(&err, "src/lib.rs");
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("src/lib.rs:4:15: error: tensor `X` has extent 0"), "{text}");
        assert!(lines[1].starts_with("src/lib.rs:5:9: error: a taskflow body holds items only"), "{text}");
    }
}
