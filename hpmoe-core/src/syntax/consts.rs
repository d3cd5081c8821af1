//! Compile-time integer constants: the taskflow body's integer `const`s and `RANKS`,
//! evaluated as rustc would evaluate them, except that nothing wraps or truncates: every
//! intermediate result is checked against its type, and an overflow is an error at the
//! operation that overflowed.
//!
//! Supported: integer literals (with or without suffix), the body's integer consts (in any
//! order), `RANKS`, `<int type>::MAX` / `::MIN`, parentheses, unary `-`, binary
//! `+ - * / % << >> & | ^` and `as` casts between integer types (a cast must not change
//! the value). `usize` and `isize` are taken as 64-bit (the host the macro runs on).

use super::spans::written;
use proc_macro2::Span;
use quote::ToTokens;
use std::collections::HashMap;
use syn::{BinOp, Expr, Ident, Lit, Type, UnOp};

/// Deepest expression nesting the evaluator follows.
pub const MAX_EXPR_DEPTH: usize = 64;

/// An integer type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntTy {
    U8,
    U16,
    U32,
    U64,
    Usize,
    I8,
    I16,
    I32,
    I64,
    Isize,
}

impl IntTy {
    const ALL: [(IntTy, &'static str); 10] = [
        (IntTy::U8, "u8"),
        (IntTy::U16, "u16"),
        (IntTy::U32, "u32"),
        (IntTy::U64, "u64"),
        (IntTy::Usize, "usize"),
        (IntTy::I8, "i8"),
        (IntTy::I16, "i16"),
        (IntTy::I32, "i32"),
        (IntTy::I64, "i64"),
        (IntTy::Isize, "isize"),
    ];

    /// The integer type a type names, if it is one.
    pub fn from_type(ty: &Type) -> Option<IntTy> {
        match ty {
            Type::Path(p) if p.qself.is_none() => Self::from_name(&p.path.get_ident()?.to_string()),
            Type::Group(g) => Self::from_type(&g.elem),
            Type::Paren(p) => Self::from_type(&p.elem),
            _ => None,
        }
    }

    pub fn from_name(name: &str) -> Option<IntTy> {
        Self::ALL.iter().find(|(_, n)| *n == name).map(|(t, _)| *t)
    }

    pub fn name(self) -> &'static str {
        Self::ALL.iter().find(|(t, _)| *t == self).map_or("?", |(_, n)| n)
    }

    fn bits(self) -> u32 {
        match self {
            IntTy::U8 | IntTy::I8 => 8,
            IntTy::U16 | IntTy::I16 => 16,
            IntTy::U32 | IntTy::I32 => 32,
            _ => 64,
        }
    }

    fn signed(self) -> bool {
        matches!(self, IntTy::I8 | IntTy::I16 | IntTy::I32 | IntTy::I64 | IntTy::Isize)
    }

    pub fn min(self) -> i128 {
        if self.signed() { -(1i128 << (self.bits() - 1)) } else { 0 }
    }

    pub fn max(self) -> i128 {
        if self.signed() { (1i128 << (self.bits() - 1)) - 1 } else { (1i128 << self.bits()) - 1 }
    }

    pub fn contains(self, v: i128) -> bool {
        (self.min()..=self.max()).contains(&v)
    }
}

/// The evaluation failed; the error is already recorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Failed;

#[derive(Clone, Debug)]
enum State {
    Pending,
    Evaluating,
    Done(Result<i128, Failed>),
}

#[derive(Clone, Debug)]
struct ConstDef {
    ident: Ident,
    ty: IntTy,
    expr: Option<Expr>,
    state: State,
}

/// The integer constants of one taskflow, evaluated on demand.
#[derive(Debug, Default)]
pub struct Consts {
    defs: Vec<ConstDef>,
    by_name: HashMap<String, usize>,
    errors: Vec<syn::Error>,
    depth: usize,
}

impl Consts {
    /// A table holding `RANKS`.
    pub fn new(ranks: u64, ranks_span: Span) -> Self {
        let mut c = Consts::default();
        c.push(Ident::new("RANKS", ranks_span), IntTy::U64, None, State::Done(Ok(i128::from(ranks))));
        c
    }

    fn push(&mut self, ident: Ident, ty: IntTy, expr: Option<Expr>, state: State) {
        self.by_name.insert(ident.to_string(), self.defs.len());
        self.defs.push(ConstDef { ident, ty, expr, state });
    }

    /// Declares `const ident: ty = expr;` (evaluated when first needed).
    pub fn declare(&mut self, ident: Ident, ty: IntTy, expr: Expr) {
        self.push(ident, ty, Some(expr), State::Pending);
    }

    /// Declares a name whose definition already failed (a `let` in the body): uses of it
    /// evaluate to [`Failed`] without another error.
    pub fn declare_failed(&mut self, ident: Ident) {
        self.push(ident, IntTy::U64, None, State::Done(Err(Failed)));
    }

    /// The declared constants whose value could not be evaluated (after [`Self::evaluate_all`]),
    /// names whose definition failed left out.
    pub fn failed(&self) -> impl Iterator<Item = &Ident> {
        self.defs.iter().filter(|d| d.expr.is_some() && matches!(d.state, State::Done(Err(_)))).map(|d| &d.ident)
    }

    /// Whether `name` is a constant of the table.
    pub fn contains(&self, name: &str) -> bool {
        self.by_name.contains_key(name)
    }

    /// Names of all constants, for suggestions.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.by_name.keys().map(String::as_str)
    }

    /// Evaluates every declared constant, so that errors in unused ones are reported too.
    pub fn evaluate_all(&mut self) {
        for i in 0..self.defs.len() {
            let _ = self.value_of(i);
        }
    }

    /// The errors found so far (each reported once).
    pub fn take_errors(&mut self) -> Vec<syn::Error> {
        std::mem::take(&mut self.errors)
    }

    fn error(&mut self, node: &impl ToTokens, msg: impl std::fmt::Display) -> Failed {
        self.errors.push(super::spans::SpanRange::of(node).error(msg));
        Failed
    }

    fn value_of(&mut self, i: usize) -> Result<i128, Failed> {
        match self.defs[i].state {
            State::Done(v) => return v,
            State::Evaluating => {
                let ident = self.defs[i].ident.clone();
                let e = self.error(&ident, format!("const `{ident}` depends on its own value"));
                self.defs[i].state = State::Done(Err(e));
                return Err(e);
            }
            State::Pending => {}
        }
        self.defs[i].state = State::Evaluating;
        let (ty, expr) = (self.defs[i].ty, self.defs[i].expr.clone());
        let v = match expr {
            Some(e) => self.eval(&e, ty),
            None => Err(Failed),
        };
        // A cycle reported while evaluating keeps its own (failed) state.
        if !matches!(self.defs[i].state, State::Done(_)) {
            self.defs[i].state = State::Done(v);
        }
        match self.defs[i].state {
            State::Done(v) => v,
            _ => Err(Failed),
        }
    }

    /// Evaluates `expr` as a value of type `ty`.
    pub fn eval(&mut self, expr: &Expr, ty: IntTy) -> Result<i128, Failed> {
        if self.depth >= MAX_EXPR_DEPTH {
            return Err(self.error(expr, format!("expression nested more than {MAX_EXPR_DEPTH} levels deep")));
        }
        self.depth += 1;
        let v = self.eval_inner(expr, ty);
        self.depth -= 1;
        v
    }

    /// Evaluates `expr` as a `u64`, the type of shapes, extents and lengths.
    pub fn eval_u64(&mut self, expr: &Expr) -> Result<u64, Failed> {
        self.eval(expr, IntTy::U64).map(|v| v as u64)
    }

    fn eval_inner(&mut self, expr: &Expr, ty: IntTy) -> Result<i128, Failed> {
        match expr {
            Expr::Lit(l) => match &l.lit {
                Lit::Int(i) => {
                    let v: u128 = i.base10_parse().map_err(|e| self.error(i, e))?;
                    let lit_ty = IntTy::from_name(i.suffix()).unwrap_or(ty);
                    match i128::try_from(v) {
                        Ok(v) if lit_ty.contains(v) => Ok(v),
                        _ => Err(self.error(i, format!("literal `{i}` does not fit in `{}`", lit_ty.name()))),
                    }
                }
                other => Err(self.error(other, "expected an integer")),
            },
            Expr::Path(p) if p.qself.is_none() => {
                if let Some(ident) = p.path.get_ident() {
                    return self.named(ident);
                }
                let segs: Vec<String> = p.path.segments.iter().map(|s| s.ident.to_string()).collect();
                match (segs.len(), IntTy::from_name(segs.first().map_or("", String::as_str))) {
                    (2, Some(t)) if segs[1] == "MAX" => Ok(t.max()),
                    (2, Some(t)) if segs[1] == "MIN" => Ok(t.min()),
                    _ => Err(self.error(expr, not_constant(&written(expr)))),
                }
            }
            Expr::Paren(p) => self.eval(&p.expr, ty),
            Expr::Group(g) => self.eval(&g.expr, ty),
            Expr::Unary(u) if matches!(u.op, UnOp::Neg(_)) => {
                let v = self.eval(&u.expr, ty)?;
                self.checked(expr, ty, Some(-v), || format!("-({v})"))
            }
            Expr::Cast(c) => {
                let Some(target) = IntTy::from_type(&c.ty) else {
                    return Err(self.error(&c.ty, "the macro evaluates casts to integer types only"));
                };
                let from = self.infer(&c.expr).unwrap_or(IntTy::I32);
                let v = self.eval(&c.expr, from)?;
                if target.contains(v) {
                    Ok(v)
                } else {
                    Err(self.error(
                        expr,
                        format!(
                            "`{}` would change the value {v}: it does not fit in `{}`; the macro refuses truncating casts",
                            written(expr),
                            target.name()
                        ),
                    ))
                }
            }
            Expr::Binary(b) => self.binary(expr, b, ty),
            Expr::MethodCall(m) if m.method == "div_ceil" && m.args.len() == 1 && m.turbofish.is_none() => {
                self.div_ceil(expr, m, ty)
            }
            _ => Err(self.error(
                expr,
                format!(
                    "the macro cannot evaluate `{}`: compile-time values are integer literals, integer consts of \
                     the taskflow, `RANKS`, arithmetic (+ - * / % << >> & | ^), `a.div_ceil(b)` and `as` casts",
                    written(expr)
                ),
            )),
        }
    }

    fn named(&mut self, ident: &Ident) -> Result<i128, Failed> {
        match self.by_name.get(&ident.to_string()) {
            Some(&i) => self.value_of(i),
            None => {
                let name = ident.to_string();
                let msg = format!("{}{}", not_constant(&name), super::spans::did_you_mean(&name, self.names()));
                Err(self.error(ident, msg))
            }
        }
    }

    fn binary(&mut self, expr: &Expr, b: &syn::ExprBinary, ty: IntTy) -> Result<i128, Failed> {
        let shift = matches!(b.op, BinOp::Shl(_) | BinOp::Shr(_));
        let l = self.eval(&b.left, ty);
        let rty = if shift { self.infer(&b.right).unwrap_or(IntTy::I32) } else { ty };
        let r = self.eval(&b.right, rty);
        let (l, r) = (l?, r?);
        let op = b.op.to_token_stream().to_string();
        let text = || format!("{l} {op} {r}");
        let v = match b.op {
            BinOp::Add(_) => l.checked_add(r),
            BinOp::Sub(_) => l.checked_sub(r),
            BinOp::Mul(_) => l.checked_mul(r),
            BinOp::Div(_) | BinOp::Rem(_) if r == 0 => {
                return Err(self.error(expr, format!("`{}` divides by zero", written(expr))));
            }
            BinOp::Div(_) => l.checked_div(r),
            BinOp::Rem(_) => l.checked_rem(r),
            BinOp::BitAnd(_) => Some(l & r),
            BinOp::BitOr(_) => Some(l | r),
            BinOp::BitXor(_) => Some(l ^ r),
            BinOp::Shl(_) | BinOp::Shr(_) if !(0..i128::from(ty.bits())).contains(&r) => {
                return Err(self.error(
                    expr,
                    format!(
                        "`{}` shifts a `{}` by {r} bits; the shift must be in 0..{}",
                        written(expr),
                        ty.name(),
                        ty.bits()
                    ),
                ));
            }
            BinOp::Shl(_) => l.checked_mul(1i128 << r),
            BinOp::Shr(_) => Some(l >> r),
            _ => {
                return Err(
                    self.error(expr, format!("the macro evaluates + - * / % << >> & | ^ in constants, not `{op}`"))
                );
            }
        };
        self.checked(expr, ty, v, text)
    }

    /// `a.div_ceil(b)`, the quotient rounded up, as Rust's const `div_ceil` of unsigned
    /// integers (the form clippy asks for in place of `(a + b - 1) / b`): the receiver's type
    /// must be known to rustc (a typed const or a suffixed literal) and unsigned, and `b` not 0.
    fn div_ceil(&mut self, expr: &Expr, m: &syn::ExprMethodCall, ty: IntTy) -> Result<i128, Failed> {
        let Some(recv_ty) = self.infer(&m.receiver) else {
            return Err(self.error(
                &m.receiver,
                format!(
                    "rustc cannot call `div_ceil` on `{}`, whose integer type is not written: give the literal a \
                     suffix (`{}u64`)",
                    written(&m.receiver),
                    written(&m.receiver)
                ),
            ));
        };
        if recv_ty.signed() {
            return Err(self.error(
                expr,
                format!(
                    "`div_ceil` is a const method of unsigned integers; `{}` is a `{}`",
                    written(&m.receiver),
                    recv_ty.name()
                ),
            ));
        }
        let a = self.eval(&m.receiver, recv_ty);
        let b = self.eval(&m.args[0], recv_ty);
        let (a, b) = (a?, b?);
        if b == 0 {
            return Err(self.error(expr, format!("`{}` divides by zero", written(expr))));
        }
        let q = a / b + i128::from(a % b != 0);
        self.checked(expr, ty, Some(q), || format!("{a}.div_ceil({b})"))
    }

    fn checked(&mut self, expr: &Expr, ty: IntTy, v: Option<i128>, text: impl Fn() -> String) -> Result<i128, Failed> {
        match v {
            Some(v) if ty.contains(v) => Ok(v),
            v => {
                let shown = v.map_or_else(|| "a value beyond 128 bits".to_string(), |v| v.to_string());
                Err(self.error(
                    expr,
                    format!(
                        "`{}` overflows `{}`: {} is {shown}, outside {}..={}",
                        written(expr),
                        ty.name(),
                        text(),
                        ty.min(),
                        ty.max()
                    ),
                ))
            }
        }
    }

    /// The type rustc would give `expr` from its leaves (`None`: an unsuffixed literal).
    fn infer(&self, expr: &Expr) -> Option<IntTy> {
        match expr {
            Expr::Lit(l) => match &l.lit {
                Lit::Int(i) => IntTy::from_name(i.suffix()),
                _ => None,
            },
            Expr::Path(p) => {
                let ident = p.path.get_ident()?;
                self.by_name.get(&ident.to_string()).map(|&i| self.defs[i].ty)
            }
            Expr::Paren(p) => self.infer(&p.expr),
            Expr::Group(g) => self.infer(&g.expr),
            Expr::Unary(u) => self.infer(&u.expr),
            Expr::Cast(c) => IntTy::from_type(&c.ty),
            Expr::Binary(b) if matches!(b.op, BinOp::Shl(_) | BinOp::Shr(_)) => self.infer(&b.left),
            Expr::Binary(b) => self.infer(&b.left).or_else(|| self.infer(&b.right)),
            Expr::MethodCall(m) if m.method == "div_ceil" => self.infer(&m.receiver),
            _ => None,
        }
    }
}

fn not_constant(name: &str) -> String {
    format!(
        "`{name}` is not a compile-time constant of this taskflow: shapes, grid extents and slice lengths are \
         integer literals, integer consts declared in the taskflow body, and `RANKS`"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn consts(src: &str) -> Consts {
        let f: syn::File = syn::parse_str(src).unwrap();
        let mut c = Consts::new(8, Span::call_site());
        for item in f.items {
            if let syn::Item::Const(k) = item {
                c.declare(k.ident, IntTy::from_type(&k.ty).unwrap(), *k.expr);
            }
        }
        c
    }

    fn value(c: &mut Consts, name: &str) -> Result<i128, Vec<String>> {
        let i = c.by_name[name];
        c.value_of(i).map_err(|_| c.take_errors().iter().map(|e| e.to_string()).collect())
    }

    #[test]
    fn evaluates_in_any_order_with_rust_semantics() {
        let mut c = consts(
            "const R: u64 = T * 8 / E; const T: u64 = 4_096; const E: u64 = 256 / RANKS; \
             const S: u64 = R / RANKS; const M: u64 = (1u64 << 40) - 1 + u64::MAX % 2; \
             const N: i64 = -(3 as i64) * 2; const X: u32 = 0x10 | 3 ^ 1; const W: u64 = R as u64 >> 3;",
        );
        assert_eq!(value(&mut c, "R"), Ok(1024));
        assert_eq!(value(&mut c, "S"), Ok(128));
        assert_eq!(value(&mut c, "M"), Ok((1 << 40) - 1 + 1));
        assert_eq!(value(&mut c, "N"), Ok(-6));
        assert_eq!(value(&mut c, "X"), Ok(0x10 | 2));
        assert_eq!(value(&mut c, "W"), Ok(128));
        c.evaluate_all();
        assert!(c.take_errors().is_empty());
    }

    #[test]
    fn div_ceil_rounds_up_on_unsigned_types_as_rust_does() {
        let mut c = consts(
            "const G: u64 = RANKS.div_ceil(16); const H: u64 = (RANKS + 9).div_ceil(8) * 2; \
             const L: u32 = 17u32.div_ceil(4); const Z: u64 = 0u64.div_ceil(3);",
        );
        assert_eq!(value(&mut c, "G"), Ok(1));
        assert_eq!(value(&mut c, "H"), Ok(6));
        assert_eq!(value(&mut c, "L"), Ok(5));
        assert_eq!(value(&mut c, "Z"), Ok(0));
        for (src, expected) in [
            ("const A: u64 = RANKS.div_ceil(0);", "divides by zero"),
            ("const A: i64 = (RANKS as i64).div_ceil(2);", "unsigned integers; `(RANKS as i64)` is a `i64`"),
            ("const A: u64 = 17.div_ceil(4);", "give the literal a suffix (`17u64`)"),
            ("const A: u8 = (RANKS as u8).div_ceil(1) * 40;", "overflows `u8`"),
        ] {
            let mut c = consts(src);
            let errs = value(&mut c, "A").expect_err(src);
            assert!(errs.iter().any(|e| e.contains(expected)), "{src}: {errs:?}");
        }
    }

    #[test]
    fn overflow_is_an_error_at_the_operation() {
        let mut c = consts("const A: u32 = 65536 * 65536; const B: u64 = 1 - 2; const C: u8 = 300;");
        assert_eq!(
            value(&mut c, "A"),
            Err(vec!["`65536 * 65536` overflows `u32`: 65536 * 65536 is 4294967296, outside 0..=4294967295".into()])
        );
        assert_eq!(
            value(&mut c, "B"),
            Err(vec!["`1 - 2` overflows `u64`: 1 - 2 is -1, outside 0..=18446744073709551615".into()])
        );
        assert_eq!(value(&mut c, "C"), Err(vec!["literal `300` does not fit in `u8`".into()]));
    }

    #[test]
    fn intermediate_overflow_counts_even_if_the_result_would_fit() {
        let mut c = consts("const A: u64 = u64::MAX + 1 - 1;");
        let errs = value(&mut c, "A").unwrap_err();
        assert!(errs[0].starts_with("`u64::MAX + 1` overflows `u64`"), "{errs:?}");
    }

    #[test]
    fn cycles_unknown_names_casts_and_shifts_are_errors() {
        let mut c = consts(
            "const A: u64 = B + 1; const B: u64 = A; const C: u64 = RANKZ; const D: u8 = 256u32 as u8; \
             const F: u64 = 1 << 64; const G: u64 = 1 / (RANKS - 8);",
        );
        c.evaluate_all();
        let errs: Vec<String> = c.take_errors().iter().map(|e| e.to_string()).collect();
        assert_eq!(errs.len(), 5, "{errs:#?}");
        assert_eq!(errs[0], "const `A` depends on its own value");
        assert!(errs[1].starts_with("`RANKZ` is not a compile-time constant"), "{}", errs[1]);
        assert!(errs[1].ends_with("help: did you mean `RANKS`?"), "{}", errs[1]);
        assert!(errs[2].starts_with("`256u32 as u8` would change the value 256"), "{}", errs[2]);
        assert_eq!(errs[3], "`1 << 64` shifts a `u64` by 64 bits; the shift must be in 0..64");
        assert_eq!(errs[4], "`1 / (RANKS - 8)` divides by zero");
    }

    #[test]
    fn deep_nesting_is_refused_not_followed() {
        let deep = format!("const A: u64 = {}1{};", "(".repeat(80), ")".repeat(80));
        let mut c = consts(&deep);
        let errs = value(&mut c, "A").unwrap_err();
        assert_eq!(errs.len(), 1);
        assert!(errs[0].contains("nested more than 64 levels"));
    }

    #[test]
    fn a_failed_const_is_reported_once() {
        let mut c = consts("const A: u8 = 255 + 1; const B: u8 = A; const C: u8 = A + B;");
        c.evaluate_all();
        assert_eq!(c.take_errors().len(), 1);
    }
}
