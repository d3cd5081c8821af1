//! Bounds on the input's shape, checked before anything parses it.
//!
//! syn parses and drops expressions recursively, so an input nested deeply enough would
//! overflow the stack of the compiler thread the macro runs on (an abort, not a panic that
//! could be caught). rustc itself grows its stack as it parses; a proc-macro cannot. So
//! before parsing, one iterative pass over the tokens refuses inputs that no taskflow needs:
//! groups nested more than [`MAX_GROUP_DEPTH`] deep, more than [`MAX_RUN_TOKENS`] tokens in
//! one expression (a run of tokens between `,` / `;` / item boundaries, at one nesting
//! level), or more than [`MAX_TOKENS`] tokens in all. Within these bounds any expression tree
//! is at most `MAX_GROUP_DEPTH * MAX_RUN_TOKENS` deep.

use super::spans::SpanRange;
use proc_macro2::{Delimiter, Spacing, TokenStream, TokenTree};

/// Deepest nesting of `()`, `[]` and `{}` groups.
pub const MAX_GROUP_DEPTH: usize = 32;
/// Most tokens in one expression at one nesting level.
pub const MAX_RUN_TOKENS: usize = 256;
/// Most tokens in one taskflow (or one file, for build scripts).
pub const MAX_TOKENS: usize = 1 << 20;

const ITEM_STARTS: &[&str] = &[
    "fn", "const", "pub", "struct", "enum", "impl", "mod", "use", "static", "type", "trait", "unsafe", "extern", "let",
];

/// Refuses token streams beyond the bounds above.
pub fn check_tokens(tokens: &TokenStream) -> syn::Result<()> {
    let mut total = 0usize;
    // One entry per open group: its tokens, the run length at its level, whether it is braced.
    let mut stack: Vec<(proc_macro2::token_stream::IntoIter, usize, bool)> =
        vec![(tokens.clone().into_iter(), 0, false)];
    // Whether the previous token at the current level was a `{..}` group (a possible item end).
    let mut after_brace = false;
    while let Some((iter, run, _)) = stack.last_mut() {
        let Some(tt) = iter.next() else {
            after_brace = stack.pop().is_some_and(|(_, _, brace)| brace);
            continue;
        };
        total += 1;
        if total > MAX_TOKENS {
            return Err(SpanRange::single(tt.span()).error(format!(
                "the taskflow has more than {MAX_TOKENS} tokens; the macro refuses inputs this large"
            )));
        }
        let boundary = match &tt {
            TokenTree::Punct(p) if matches!(p.as_char(), ';' | ',') && p.spacing() == Spacing::Alone => true,
            TokenTree::Punct(p) => after_brace && p.as_char() == '#',
            TokenTree::Ident(i) => after_brace && ITEM_STARTS.iter().any(|k| i == k),
            _ => false,
        };
        *run = if boundary { 0 } else { *run + 1 };
        if *run > MAX_RUN_TOKENS {
            return Err(SpanRange::single(tt.span()).error(format!(
                "an expression of more than {MAX_RUN_TOKENS} tokens; the macro refuses expressions this long"
            )));
        }
        after_brace = false;
        if let TokenTree::Group(g) = tt {
            if stack.len() >= MAX_GROUP_DEPTH {
                return Err(SpanRange::single(g.span_open()).error(format!(
                    "brackets nested more than {MAX_GROUP_DEPTH} deep; the macro refuses inputs nested this deeply"
                )));
            }
            stack.push((g.stream().into_iter(), 0, g.delimiter() == Delimiter::Brace));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(src: &str) -> Result<(), String> {
        check_tokens(&src.parse().unwrap()).map_err(|e| e.to_string())
    }

    #[test]
    fn ordinary_taskflows_pass() {
        let items: String = (0..500).map(|i| format!("#[tile(aiv)] fn t{i}() {{ zero(X); }}\n")).collect();
        assert_eq!(check(&format!("fn f() {{ const X: u64 = (1 + 2) * 3; {items} }}")), Ok(()));
    }

    #[test]
    fn deep_nesting_and_long_expressions_are_refused() {
        let deep = format!("{}1{}", "(".repeat(40), ")".repeat(40));
        assert!(check(&deep).unwrap_err().contains("nested more than 32 deep"));
        let long = vec!["1"; 300].join(" + ");
        assert!(check(&format!("const A: u64 = {long};")).unwrap_err().contains("more than 256 tokens"));
        let unary = format!("const A: i64 = {}1;", "- ".repeat(300));
        assert!(check(&unary).is_err());
        let list = vec!["1"; 300].join(", ");
        assert_eq!(check(&format!("const A: [u64; 300] = [{list}];")), Ok(()));
    }
}
