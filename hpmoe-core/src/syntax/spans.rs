//! The side table that gives every [`Loc`] of the IR its place in the tokens, and the
//! conversion of the checks' [`Diagnostic`]s into `syn::Error`s at those places.

use crate::error::Diagnostic;
use crate::model::{Loc, SourceMap, SourcePos};
use proc_macro2::{Ident, Span, TokenStream, TokenTree};
use quote::ToTokens;

/// First and last token of a node: an error spans from one to the other.
#[derive(Clone, Copy, Debug)]
pub struct SpanRange {
    /// The span of the first token.
    pub start: Span,
    /// The span of the last token (the same as `start` for one token).
    pub end: Span,
}

impl SpanRange {
    /// The range of `node`'s tokens (the call site if it has none).
    pub fn of(node: &impl ToTokens) -> Self {
        Self::of_tokens(node.to_token_stream())
    }

    /// The range of a token stream.
    pub fn of_tokens(tokens: TokenStream) -> Self {
        let mut iter = tokens.into_iter();
        let start = iter.next().map_or_else(Span::call_site, |t| t.span());
        let end = iter.last().map_or(start, |t| match t {
            TokenTree::Group(g) => g.span_close(),
            t => t.span(),
        });
        SpanRange { start, end }
    }

    /// A single token's span.
    pub fn single(span: Span) -> Self {
        SpanRange { start: span, end: span }
    }

    /// An error covering the range.
    pub fn error(&self, message: impl std::fmt::Display) -> syn::Error {
        let mut tokens = TokenStream::new();
        tokens
            .extend([TokenTree::Ident(Ident::new("start", self.start)), TokenTree::Ident(Ident::new("end", self.end))]);
        syn::Error::new_spanned(tokens, message)
    }
}

/// `Loc` → token range, kept beside the taskflow's [`SourceMap`] (which holds the same
/// places as file, line and column, for tools that have no tokens).
#[derive(Clone, Debug, Default)]
pub struct Spans {
    ranges: Vec<SpanRange>,
    /// Where errors without a location go: the taskflow function's name.
    pub fallback: Option<SpanRange>,
}

impl Spans {
    /// Registers a node's place in both tables and returns its handle.
    pub fn add(&mut self, sources: &mut SourceMap, range: SpanRange) -> Loc {
        let loc = sources.add(source_pos(range.start));
        debug_assert_eq!(loc.get().map(|l| l.index()), Some(self.ranges.len()), "Spans and SourceMap out of step");
        self.ranges.push(range);
        loc
    }

    /// The range of `loc`, or the fallback.
    pub fn get(&self, loc: Loc) -> SpanRange {
        loc.get()
            .and_then(|l| self.ranges.get(l.index()))
            .copied()
            .or(self.fallback)
            .unwrap_or_else(|| SpanRange::single(Span::call_site()))
    }

    /// One `syn::Error` for a diagnostic, at its location. The help and the notes become
    /// extra lines of the message (a proc-macro cannot attach notes on stable Rust); a
    /// note's location is given as a line number when the compiler tells it.
    pub fn error(&self, d: &Diagnostic) -> syn::Error {
        self.get(d.loc).error(render(d, |loc| self.line_of(loc)))
    }

    fn line_of(&self, loc: Loc) -> Option<usize> {
        let range = self.ranges.get(loc.get()?.index())?;
        let line = range.start.start().line;
        (line > 0).then_some(line)
    }
}

/// The message of a diagnostic with its help and notes as further lines.
fn render(d: &Diagnostic, line_of: impl Fn(Loc) -> Option<usize>) -> String {
    let mut msg = d.message.clone();
    if let Some(h) = &d.help {
        msg.push_str("\n\nhelp: ");
        msg.push_str(h);
    }
    for n in &d.notes {
        msg.push_str(if d.help.is_some() { "\nnote: " } else { "\n\nnote: " });
        msg.push_str(&n.message);
        if let Some(line) = line_of(n.loc) {
            msg.push_str(&format!(" (line {line})"));
        }
    }
    msg
}

/// A node's tokens as a person writes them, for messages: `u64::MAX + 1`, `X.at(e)`,
/// `output([N, 4])` (a token stream's own `to_string` spaces every token: `u64 :: MAX`).
pub fn written(node: &impl ToTokens) -> String {
    let mut out = String::new();
    write_tokens(node.to_token_stream(), &mut out);
    out
}

/// What the last token written was, which decides the space before the next one.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Last {
    /// Nothing yet, or an opening delimiter.
    Open,
    /// An identifier, literal or closed group: a value.
    Value,
    /// A binary operator, comma or `:`: a space follows.
    Spaced,
    /// `.`, `::`, a unary operator or the first character of a longer operator: nothing follows.
    Tight,
}

fn write_tokens(tokens: TokenStream, out: &mut String) {
    let mut last = Last::Open;
    // Whether the last token was a punctuation joined to the next (`:` of `::`, `+` of `+=`).
    let mut joined = false;
    for t in tokens {
        match t {
            TokenTree::Ident(_) | TokenTree::Literal(_) => {
                if matches!(last, Last::Value | Last::Spaced) {
                    out.push(' ');
                }
                out.push_str(&t.to_string());
                last = Last::Value;
            }
            TokenTree::Group(g) => {
                let (open, close) = match g.delimiter() {
                    proc_macro2::Delimiter::Parenthesis => ("(", ")"),
                    proc_macro2::Delimiter::Bracket => ("[", "]"),
                    proc_macro2::Delimiter::Brace => ("{ ", " }"),
                    proc_macro2::Delimiter::None => ("", ""),
                };
                // A call or an index follows its value directly: `f(x)`, `a[0]`.
                if last == Last::Spaced || (last == Last::Value && open == "{ ") {
                    out.push(' ');
                }
                out.push_str(open);
                write_tokens(g.stream(), out);
                out.push_str(close);
                last = Last::Value;
            }
            TokenTree::Punct(p) => {
                let c = p.as_char();
                let joint = p.spacing() == proc_macro2::Spacing::Joint;
                let continues = last == Last::Tight && joined;
                joined = false;
                match c {
                    ',' | ';' => {
                        out.push(c);
                        last = Last::Spaced;
                    }
                    '.' => {
                        out.push(c);
                        last = Last::Tight;
                        joined = true;
                    }
                    ':' if joint || continues => {
                        out.push(c);
                        last = Last::Tight;
                        joined = joint;
                    }
                    ':' => {
                        out.push(c);
                        last = Last::Spaced;
                    }
                    // A prefix operator: at the start, after an operator or an opening delimiter.
                    '-' | '!' | '&' | '*' if matches!(last, Last::Open | Last::Spaced) && !continues => {
                        if last == Last::Spaced {
                            out.push(' ');
                        }
                        out.push(c);
                        last = Last::Tight;
                    }
                    _ => {
                        if !continues && matches!(last, Last::Value | Last::Spaced) {
                            out.push(' ');
                        }
                        // `..=` is written tight, like `..`.
                        let range = continues && out.ends_with('.');
                        out.push(c);
                        last = if joint || range { Last::Tight } else { Last::Spaced };
                        joined = joint;
                    }
                }
            }
        }
    }
}

/// `\n\nhelp: did you mean `x`?` when a candidate is close enough to `name` to be a typo
/// (see [`crate::resolve::closest`]), else nothing: the tail of an error message.
pub fn did_you_mean<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    crate::resolve::closest(name, candidates).map(|c| format!("\n\nhelp: did you mean `{c}`?")).unwrap_or_default()
}

/// Combines errors into one (`None` for none).
pub fn combine(errors: impl IntoIterator<Item = syn::Error>) -> Option<syn::Error> {
    errors.into_iter().reduce(|mut acc, e| {
        acc.combine(e);
        acc
    })
}

/// File, line and column of a span, when the compiler (or the fallback parser) knows them.
fn source_pos(span: Span) -> Option<SourcePos> {
    let start = span.start();
    let file = span.file();
    // Tokens made by a macro (or parsed from a string) have no file of their own.
    (start.line > 0 && file != "<unspecified>").then(|| SourcePos {
        file,
        line: u32::try_from(start.line).unwrap_or(u32::MAX),
        column: u32::try_from(start.column + 1).unwrap_or(u32::MAX),
    })
}

#[cfg(test)]
mod tests {
    use super::written;

    fn shown(src: &str) -> String {
        written(&syn::parse_str::<syn::Expr>(src).unwrap())
    }

    #[test]
    fn tokens_print_as_a_person_writes_them() {
        assert_eq!(shown("u64::MAX + 1"), "u64::MAX + 1");
        assert_eq!(shown("X.at(e).slice(b * 16, 16)"), "X.at(e).slice(b * 16, 16)");
        assert_eq!(shown("output([N, 4])"), "output([N, 4])");
        assert_eq!(shown("(i + RANK) % 4 * 4 - -1"), "(i + RANK) % 4 * 4 - -1");
        assert_eq!(shown("1 << 40 >= x as u64"), "1 << 40 >= x as u64");
        assert_eq!(shown("-a..=b"), "-a..=b");
        assert_eq!(shown("::core::u64::MAX"), "::core::u64::MAX");
    }
}
