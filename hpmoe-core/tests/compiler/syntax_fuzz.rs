//! The front-end never panics: mutated taskflows (tokens deleted, duplicated, swapped,
//! replaced) and random token streams give errors or a compiled taskflow, through both
//! entry points (the macro's `parse` and the build scripts' `parse_file`).
//!
//! Time and memory stay bounded by construction, and this checks the parts that make it
//! so: the input bounds of `syntax::input_bounds` (refused before any recursive parsing), output
//! linear in the input (at most a few IR locations per token), and the core's instance
//! limits before anything is expanded (so a mutation to a huge grid is refused, not run).

use hpmoe_core::limits::MAX_INSTANCES;
use hpmoe_core::schedule::UnitCost;
use hpmoe_core::syntax::{self, Frontend, input_bounds};
use proc_macro2::{Delimiter, Spacing, TokenStream, TokenTree};
use proptest::prelude::*;

const SEED: &str = r#"
#[taskflow(profile = small(2), ranks = 2)]
fn seed() {
    const N: u64 = 8;
    const C: u64 = 16;
    const X: Tensor<Bf16> = input([RANKS * N, C]);
    const RECV: Tensor<Bf16> = symmetric([RANKS * N, C]);
    const W: Tensor<Bf16> = input([C, C]);
    const Y: Tensor<F32> = output([RANKS * N, C]);
    const S: Tensor<F32> = scratch([RANKS * N, C]);
    const COUNTS: Tensor<I32> = input([RANKS]);

    #[op(aiv, work = vector(2), emit = "Twice({out}, {src})", read_write(out))]
    fn twice(src: &TileData, out: &mut TileData) {
        for (o, s) in out.values.iter_mut().zip(&src.values) {
            *o += 2.0 * s;
        }
    }

    #[tile(aiv, grid(d in 0..RANKS))]
    fn send(d: Idx) {
        put(X.slice(d * N, N), RECV.on((RANK + d) % RANKS).slice(RANK * N, N));
    }

    #[tile(aic, grid(r in 0..RANKS))]
    fn mm(r: Idx) {
        let rows = RECV.slice(r * N, N);
        run_if_above(COUNTS.at(r), 0);
        matmul(rows, W, Y.slice(r * N, N));
    }

    #[tile(aiv, grid(r in 0..=RANKS - 1, h in 0..2), after(mm(r..r + 1), send, scale(r, h - 1)))]
    fn scale(r: Idx, h: Idx) {
        zero(S.slice(r * N, N).slice(h * (C / 2), C / 2));
        twice(Y.slice(r * N, N).slice(h * (C / 2), C / 2), S.slice(r * N, N).slice(h * (C / 2), C / 2));
    }
}
"#;

/// Tokens that make interesting replacements and insertions.
const VOCAB: &[&str] = &[
    "0",
    "1",
    "7",
    "64",
    "4294967296",
    "18446744073709551615",
    "RANKS",
    "RANK",
    "N",
    "C",
    "X",
    "Y",
    "S",
    "W",
    "d",
    "r",
    "h",
    "+",
    "-",
    "*",
    "/",
    "%",
    "<<",
    "..",
    "..=",
    ",",
    ";",
    ":",
    "=",
    ".",
    "&",
    "#",
    "fn",
    "const",
    "let",
    "mut",
    "Idx",
    "Tensor",
    "<",
    ">",
    "F32",
    "Bf16",
    "input",
    "output",
    "scratch",
    "symmetric",
    "tile",
    "op",
    "taskflow",
    "aic",
    "aiv",
    "grid",
    "after",
    "in",
    "put",
    "matmul",
    "zero",
    "run_if_above",
    "COUNTS",
    "twice",
    "at",
    "slice",
    "rows",
    "all",
    "on",
    "TileData",
    "emit",
    "\"{x}\"",
    "work",
    "vector",
    "read_write",
    "()",
    "[]",
    "{}",
    "(1)",
    "[N, C]",
];

/// A flat list of lexemes: a token's text and whether it joins the next one (`..`, `<<`).
fn lexemes(tokens: TokenStream, out: &mut Vec<(String, bool)>) {
    for tt in tokens {
        match tt {
            TokenTree::Group(g) => {
                let (open, close) = match g.delimiter() {
                    Delimiter::Parenthesis => ("(", ")"),
                    Delimiter::Bracket => ("[", "]"),
                    Delimiter::Brace => ("{", "}"),
                    Delimiter::None => ("", ""),
                };
                out.push((open.to_string(), false));
                lexemes(g.stream(), out);
                out.push((close.to_string(), false));
            }
            TokenTree::Punct(p) => out.push((p.as_char().to_string(), p.spacing() == Spacing::Joint)),
            other => out.push((other.to_string(), false)),
        }
    }
}

fn render(lexemes: &[(String, bool)]) -> String {
    let mut s = String::new();
    for (text, joint) in lexemes {
        s.push_str(text);
        if !joint {
            s.push(' ');
        }
    }
    s
}

#[derive(Clone, Debug)]
enum Mutation {
    Delete(usize),
    Duplicate(usize),
    Swap(usize, usize),
    Replace(usize, usize),
    Insert(usize, usize),
    /// Replace a lexeme by one of the same class (name, number, operator), which keeps
    /// the input syntactically valid more often and so reaches the lowering and checks.
    Similar(usize, usize),
}

fn class(text: &str) -> u8 {
    match text.chars().next() {
        Some(c) if c.is_ascii_digit() => 1,
        Some(c) if c.is_alphabetic() || c == '_' => 2,
        Some('+' | '-' | '*' | '/' | '%') if text.len() == 1 => 3,
        _ => 0,
    }
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        1 => any::<usize>().prop_map(Mutation::Delete),
        1 => any::<usize>().prop_map(Mutation::Duplicate),
        1 => (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::Swap(a, b)),
        1 => (any::<usize>(), 0..VOCAB.len()).prop_map(|(a, v)| Mutation::Replace(a, v)),
        1 => (any::<usize>(), 0..VOCAB.len()).prop_map(|(a, v)| Mutation::Insert(a, v)),
        3 => (any::<usize>(), any::<usize>()).prop_map(|(a, v)| Mutation::Similar(a, v)),
    ]
}

/// Applies a mutation to a lexeme that is not a bracket (so most mutants still lex: an
/// unbalanced input never reaches a macro), or inserts a balanced vocabulary entry.
fn apply(lex: &mut Vec<(String, bool)>, m: &Mutation) {
    let word = |v: usize| (VOCAB[v].to_string(), false);
    let plain: Vec<usize> =
        (0..lex.len()).filter(|&i| !matches!(lex[i].0.as_str(), "(" | ")" | "[" | "]" | "{" | "}" | "")).collect();
    let pick = |i: usize| plain[i % plain.len()];
    match *m {
        Mutation::Insert(i, v) => lex.insert(i % (lex.len() + 1), word(v)),
        _ if plain.is_empty() => {}
        Mutation::Delete(i) => {
            lex.remove(pick(i));
        }
        Mutation::Duplicate(i) => {
            let t = lex[pick(i)].clone();
            lex.insert(pick(i), t);
        }
        Mutation::Swap(a, b) => lex.swap(pick(a), pick(b)),
        Mutation::Replace(i, v) => lex[pick(i)] = word(v),
        Mutation::Similar(i, v) => {
            let at = pick(i);
            let same: Vec<&str> = VOCAB.iter().copied().filter(|w| class(w) == class(&lex[at].0)).collect();
            if !same.is_empty() {
                lex[at] = (same[v % same.len()].to_string(), false);
            }
        }
    }
}

/// Runs the front-end (and, when the IR is small, the whole pipeline) on one input.
fn exercise(fe: &Frontend, tokens: usize) {
    // Output linear in the input: at most a few locations (IR nodes) per token.
    assert!(fe.taskflow.sources.len() <= 4 * tokens + 8, "{} locations for {tokens} tokens", fe.taskflow.sources.len());
    // Huge grids are refused by the structural checks before expansion; keep the
    // accepted ones small enough to run quickly here.
    let per_rank = fe.taskflow.families.iter().try_fold(0u64, |acc, f| acc.checked_add(f.instances()?));
    let small = per_rank.is_some_and(|n| n * u64::from(fe.taskflow.profile.ranks) <= 1 << 14);
    if small || !fe.errors.is_empty() {
        if let Ok(c) = fe.compile(&UnitCost) {
            assert!(c.expanded.nodes() as u64 <= MAX_INSTANCES);
        }
    } else {
        let _ = hpmoe_core::resolve::check_structure(&fe.taskflow);
    }
}

fn seed_lexemes() -> Vec<(String, bool)> {
    let mut lex = Vec::new();
    lexemes(SEED.parse().unwrap(), &mut lex);
    lex
}

#[test]
fn the_seed_compiles() {
    let found = syntax::parse_file(SEED).unwrap();
    assert!(found[0].errors.is_empty(), "{:?}", found[0].errors);
    found[0].compile(&UnitCost).unwrap();
    // And survives the trip through lexemes, which the mutations start from.
    let again = syntax::parse_file(&render(&seed_lexemes())).unwrap();
    assert!(again[0].taskflow.same_structure(&found[0].taskflow));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    #[test]
    fn mutated_taskflows_give_errors_not_panics(mutations in prop::collection::vec(mutation(), 1..4)) {
        let mut lex = seed_lexemes();
        for m in &mutations {
            apply(&mut lex, m);
        }
        let text = render(&lex);
        // Unbalanced brackets do not lex: rustc never hands those to a macro.
        let Ok(tokens) = text.parse::<TokenStream>() else { return Ok(()) };
        let count = lex.len();
        // The build-script entry point.
        if let Ok(found) = syntax::parse_file(&text) {
            for fe in &found {
                exercise(fe, count);
            }
        }
        // The macro's entry point, with the attribute split off as rustc does.
        let mut iter = tokens.into_iter().peekable();
        let mut args = TokenStream::new();
        if matches!(iter.peek(), Some(TokenTree::Punct(p)) if p.as_char() == '#') {
            iter.next();
            if let Some(TokenTree::Group(g)) = iter.next() {
                let mut inner = g.stream().into_iter();
                inner.next(); // `taskflow`
                if let Some(TokenTree::Group(a)) = inner.next() {
                    args = a.stream();
                }
            }
        }
        let item: TokenStream = iter.collect();
        if let Ok(fe) = syntax::parse(args, item) {
            exercise(&fe, count);
        }
    }

    #[test]
    fn random_token_streams_give_errors_not_panics(words in prop::collection::vec(0..VOCAB.len(), 0..80)) {
        let text = format!("fn t() {{ {} }}", words.iter().map(|&w| VOCAB[w]).collect::<Vec<_>>().join(" "));
        let Ok(item) = text.parse::<TokenStream>() else { return Ok(()) };
        let args: TokenStream = "profile = small(1), ranks = 2".parse().unwrap();
        if let Ok(fe) = syntax::parse(args, item) {
            exercise(&fe, words.len() + 6);
        }
        let attr_text = words.iter().map(|&w| VOCAB[w]).collect::<Vec<_>>().join(" ");
        if let Ok(args) = attr_text.parse::<TokenStream>() {
            let item: TokenStream = "fn t() { const X: Tensor<F32> = output([4]); }".parse().unwrap();
            if let Ok(fe) = syntax::parse(args, item) {
                exercise(&fe, words.len() + 16);
            }
        }
    }
}

#[test]
fn pathological_inputs_are_refused_before_parsing() {
    let deep = format!("fn t() {{ const A: u64 = {}1{}; }}", "(".repeat(5000), ")".repeat(5000));
    let err = syntax::parse(TokenStream::new(), deep.parse().unwrap()).unwrap_err();
    assert!(err.to_string().contains("nested more than"), "{err}");
    let long = format!("fn t() {{ const A: u64 = {}; }}", vec!["1"; 100_000].join(" + "));
    let err = syntax::parse(TokenStream::new(), long.parse().unwrap()).unwrap_err();
    assert!(err.to_string().contains("more than 256 tokens"), "{err}");
    let unary = format!("fn t() {{ const A: i64 = {}1; }}", "- ".repeat(100_000));
    assert!(syntax::parse(TokenStream::new(), unary.parse().unwrap()).is_err());
    assert!(syntax::parse_file(&deep).is_err());
    // Many small items are fine: the bounds are on shape, not size.
    let tiles: String = (0..2000).map(|i| format!("#[tile(aiv)] fn t{i}() {{ zero(X); }}\n")).collect();
    let many = format!("fn t() {{ const X: Tensor<F32> = output([4]); {tiles} }}");
    let fe = syntax::parse("profile = small(1), ranks = 1".parse().unwrap(), many.parse().unwrap()).unwrap();
    assert_eq!(fe.taskflow.families.len(), 2000);
    assert!(input_bounds::check_tokens(&many.parse().unwrap()).is_ok());
}

#[test]
fn huge_extents_are_refused_before_expansion() {
    let src = r#"
#[taskflow(profile = small(1), ranks = 1024)]
fn t() {
    const N: u64 = 1 << 31;
    const X: Tensor<F32> = output([N, N, N, N]);
    #[tile(aiv, grid(a in 0..N, b in 0..N, c in 0..N, d in 0..N))]
    fn f(a: Idx, b: Idx, c: Idx, d: Idx) {
        zero(X.at(a).at(b).at(c).at(d));
    }
}
"#;
    let fe = syntax::parse_file(src).unwrap().remove(0);
    let errs: Vec<String> = fe.compile(&UnitCost).unwrap_err().into_iter().map(|e| e.to_string()).collect();
    assert!(errs.iter().any(|e| e.contains("MAX_FAMILY_INSTANCES")), "{errs:#?}");
    assert!(errs.iter().any(|e| e.contains("MAX_INSTANCES")), "{errs:#?}");
}
