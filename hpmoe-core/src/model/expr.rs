//! Index expressions: `c + Σ kᵢ·varᵢ + Σ kⱼ·(eⱼ % mⱼ or eⱼ / dⱼ)`, optionally reduced modulo a
//! constant as a whole.
//!
//! Region bounds, `after` index mappings and put destinations are written in terms of the
//! tile's grid indices and the executing rank (`RANK`, the taskflow is SPMD). Most are affine;
//! a *part* — a sub-expression reduced modulo a constant (`(RANK + k) % R`) or divided by one,
//! rounded down (`RANK / 8`) — may be scaled and added like a variable, so a rotated slice
//! start reads as written: rows `((RANK + k) % R) · S ..` are those of source rank
//! `(RANK + k) % R`. Evaluation is checked: an overflow is reported, never wrapped.

use serde::{Deserialize, Serialize};
use smallvec::SmallVec;
use std::fmt;
use std::ops::{Add, Mul, Sub};

/// A variable an expression may mention.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Var {
    /// The i-th grid index of the tile family the expression belongs to.
    Index(u8),
    /// The rank executing the tile.
    Rank,
}

/// `constant + Σ coeff·var + Σ coeff·part`, then `rem_euclid(modulo)` if a modulus is set.
///
/// Built with `+`, `-`, `*` by a constant, [`Affine::modulo`] and [`Affine::quotient`]; reducing
/// an expression and then computing with it makes the reduced expression a [`Part`], so
/// `(Affine::rank() + k).modulo(r) * s + b` is `s·((RANK + k) % r) + b`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Affine {
    /// The constant term `c`.
    pub constant: i64,
    /// At most one term per variable, sorted by variable, no zero coefficients.
    pub terms: SmallVec<[(Var, i64); 2]>,
    /// Reduced sub-expressions with their coefficients: at most one term per part, sorted, no
    /// zero coefficients. Empty for an affine expression (and then not serialised).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<(Part, i64)>,
    /// If set, the sum is reduced `rem_euclid` this modulus (`> 0`), so the value is in `0..m`.
    pub modulo: Option<u64>,
}

/// A sub-expression of an [`Affine`], reduced by a positive constant.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Part {
    /// The expression reduced (itself possibly holding parts).
    pub inner: Affine,
    /// How it is reduced.
    pub op: Reduce,
}

/// How a [`Part`] reduces its expression (both Euclidean: the remainder is in `0..m`, the
/// quotient rounds towards minus infinity).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Reduce {
    /// `inner % m` (`rem_euclid`).
    Rem(u64),
    /// `inner / d` (`div_euclid`).
    Div(u64),
}

impl Reduce {
    /// Applies the reduction to `x`; a zero or oversized divisor (only from a hand-built or
    /// deserialised expression) is an overflow.
    pub fn apply(self, x: i64) -> Result<i64, Overflow> {
        match self {
            Reduce::Rem(0) | Reduce::Div(0) => Err(Overflow),
            Reduce::Rem(m) => Ok(x.rem_euclid(i64::try_from(m).map_err(|_| Overflow)?)),
            Reduce::Div(d) => Ok(x.div_euclid(i64::try_from(d).map_err(|_| Overflow)?)),
        }
    }

    /// The operator as written: `%` or `/`.
    pub fn symbol(self) -> &'static str {
        match self {
            Reduce::Rem(_) => "%",
            Reduce::Div(_) => "/",
        }
    }

    /// The constant the expression is reduced by.
    pub fn by(self) -> u64 {
        match self {
            Reduce::Rem(m) | Reduce::Div(m) => m,
        }
    }
}

/// Evaluation failed: the expression overflows `i64` (or reduces modulo 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Overflow;

impl Affine {
    /// The constant `c`.
    pub fn constant(c: i64) -> Self {
        Affine { constant: c, terms: SmallVec::new(), parts: Vec::new(), modulo: None }
    }

    /// The variable `v` with coefficient 1.
    pub fn var(v: Var) -> Self {
        Affine { constant: 0, terms: smallvec::smallvec![(v, 1)], parts: Vec::new(), modulo: None }
    }

    /// The i-th grid index.
    pub fn index(i: u8) -> Self {
        Affine::var(Var::Index(i))
    }

    /// The executing rank.
    pub fn rank() -> Self {
        Affine::var(Var::Rank)
    }

    /// `self mod m` (Euclidean, so the result is in `0..m`). Panics on `m == 0`.
    pub fn modulo(self, m: u64) -> Self {
        assert!(m > 0, "modulus must be positive");
        let mut out = self.unreduced();
        out.modulo = Some(m);
        out
    }

    /// `self / d`, rounded down (Euclidean: `-1 / 4` is `-1`). Panics on `d == 0`.
    pub fn quotient(self, d: u64) -> Self {
        assert!(d > 0, "divisor must be positive");
        Affine::part(Part { inner: self, op: Reduce::Div(d) })
    }

    /// The part `p` with coefficient 1.
    pub fn part(p: Part) -> Self {
        Affine { constant: 0, terms: SmallVec::new(), parts: vec![(p, 1)], modulo: None }
    }

    /// The same value with no modulus of the whole: a reduced expression becomes a part, so
    /// that arithmetic on it is arithmetic on its value.
    pub fn unreduced(mut self) -> Self {
        match self.modulo.take() {
            Some(m) => Affine::part(Part { inner: self, op: Reduce::Rem(m) }),
            None => self,
        }
    }

    /// Whether no variable appears (the value is the same for every instance and rank; a modulus,
    /// if any, applies to the constant alone).
    pub fn is_constant(&self) -> bool {
        self.terms.is_empty() && self.parts.iter().all(|(p, _)| p.inner.is_constant())
    }

    /// Whether the expression is affine: no part (a modulus of the whole is allowed).
    pub fn is_affine(&self) -> bool {
        self.parts.is_empty()
    }

    /// Every variable mentioned, in its terms or inside its parts, sorted, each once.
    pub fn vars(&self) -> Vec<Var> {
        let mut out: Vec<Var> = self.terms.iter().map(|t| t.0).collect();
        for (p, _) in &self.parts {
            out.extend(p.inner.vars());
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Largest grid index mentioned, if any (for arity checks).
    pub fn max_index(&self) -> Option<u8> {
        self.vars()
            .into_iter()
            .filter_map(|v| match v {
                Var::Index(i) => Some(i),
                Var::Rank => None,
            })
            .max()
    }

    /// Whether the expression depends on the executing rank.
    pub fn mentions_rank(&self) -> bool {
        self.vars().contains(&Var::Rank)
    }

    /// Evaluates with the given grid coordinates and rank. Indices past `coords` read as 0
    /// (the arity check reports them before evaluation matters).
    pub fn eval(&self, coords: &[u64], rank: u64) -> Result<i64, Overflow> {
        let mut acc = self.constant;
        for &(v, k) in &self.terms {
            let x = match v {
                Var::Index(i) => coords.get(i as usize).copied().unwrap_or(0),
                Var::Rank => rank,
            };
            let x = i64::try_from(x).map_err(|_| Overflow)?;
            acc = acc.checked_add(k.checked_mul(x).ok_or(Overflow)?).ok_or(Overflow)?;
        }
        for (p, k) in &self.parts {
            let x = p.op.apply(p.inner.eval(coords, rank)?)?;
            acc = acc.checked_add(k.checked_mul(x).ok_or(Overflow)?).ok_or(Overflow)?;
        }
        Ok(match self.modulo {
            // A zero modulus cannot come from the builder (it asserts); a deserialised or
            // hand-built expression gets an error, not a panic.
            Some(0) => return Err(Overflow),
            Some(m) => acc.rem_euclid(i64::try_from(m).map_err(|_| Overflow)?),
            None => acc,
        })
    }

    fn combine(self, other: Affine, sign: i64) -> Self {
        let (mut out, other) = (self.unreduced(), other.unreduced());
        out.constant = out.constant.saturating_add(other.constant.saturating_mul(sign));
        for &(v, k) in &other.terms {
            let k = k.saturating_mul(sign);
            match out.terms.binary_search_by_key(&v, |t| t.0) {
                Ok(pos) => {
                    out.terms[pos].1 = out.terms[pos].1.saturating_add(k);
                    if out.terms[pos].1 == 0 {
                        out.terms.remove(pos);
                    }
                }
                Err(pos) => out.terms.insert(pos, (v, k)),
            }
        }
        for (p, k) in other.parts {
            let k = k.saturating_mul(sign);
            match out.parts.binary_search_by(|t| t.0.cmp(&p)) {
                Ok(pos) => {
                    out.parts[pos].1 = out.parts[pos].1.saturating_add(k);
                    if out.parts[pos].1 == 0 {
                        out.parts.remove(pos);
                    }
                }
                Err(pos) => out.parts.insert(pos, (p, k)),
            }
        }
        out.canonical()
    }

    /// A lone part `1·(e % m)` is written as `e` with a modulus of the whole, its form when
    /// built directly, so that equal expressions compare equal.
    fn canonical(mut self) -> Self {
        if self.constant == 0
            && self.terms.is_empty()
            && self.modulo.is_none()
            && self.parts.len() == 1
            && let (Part { inner, op: Reduce::Rem(m) }, 1) = &self.parts[0]
            && inner.modulo.is_none()
        {
            let mut inner = inner.clone();
            inner.modulo = Some(*m);
            return inner;
        }
        self.parts.retain(|p| p.1 != 0);
        self
    }

    /// Renders with the given names for grid indices (missing names print as `i<n>`).
    pub fn display<'a>(&'a self, names: &'a [String]) -> impl fmt::Display + 'a {
        AffineDisplay { e: self, names }
    }
}

struct AffineDisplay<'a> {
    e: &'a Affine,
    names: &'a [String],
}

impl fmt::Display for AffineDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let e = self.e;
        let summands = e.terms.len() + e.parts.len() + usize::from(e.constant != 0);
        let wrap = e.modulo.is_some() && summands > 1;
        if wrap {
            f.write_str("(")?;
        }
        let mut first = true;
        let mut summand = |f: &mut fmt::Formatter<'_>, k: i64, text: &str| -> fmt::Result {
            let (neg, abs) = (k < 0, k.unsigned_abs());
            match (first, neg) {
                (true, true) => f.write_str("-")?,
                (false, true) => f.write_str(" - ")?,
                (false, false) => f.write_str(" + ")?,
                (true, false) => {}
            }
            if abs != 1 {
                write!(f, "{abs} * ")?;
            }
            first = false;
            f.write_str(text)
        };
        for &(v, k) in &e.terms {
            let name = match v {
                Var::Index(i) => self.names.get(i as usize).cloned().unwrap_or_else(|| format!("i{i}")),
                Var::Rank => "RANK".to_string(),
            };
            summand(f, k, &name)?;
        }
        for (p, k) in &e.parts {
            // `k * ((d + RANK) % 4)`: a scaled part in parentheses, its inner sum too when it has several summands.
            let inner = p.inner.display(self.names).to_string();
            let simple = p.inner.modulo.is_none()
                && p.inner.terms.len() + p.inner.parts.len() + usize::from(p.inner.constant != 0) <= 1;
            let inner = if simple { inner } else { format!("({inner})") };
            let text = format!("{inner} {} {}", p.op.symbol(), p.op.by());
            summand(f, *k, &if k.unsigned_abs() == 1 { text } else { format!("({text})") })?;
        }
        if first {
            write!(f, "{}", e.constant)?;
        } else if e.constant > 0 {
            write!(f, " + {}", e.constant)?;
        } else if e.constant < 0 {
            write!(f, " - {}", e.constant.unsigned_abs())?;
        }
        if wrap {
            f.write_str(")")?;
        }
        if let Some(m) = e.modulo {
            write!(f, " % {m}")?;
        }
        Ok(())
    }
}

impl fmt::Display for Affine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.display(&[]).fmt(f)
    }
}

impl From<i64> for Affine {
    fn from(c: i64) -> Self {
        Affine::constant(c)
    }
}

impl Add for Affine {
    type Output = Affine;
    fn add(self, rhs: Affine) -> Affine {
        self.combine(rhs, 1)
    }
}

impl Sub for Affine {
    type Output = Affine;
    fn sub(self, rhs: Affine) -> Affine {
        self.combine(rhs, -1)
    }
}

impl Add<i64> for Affine {
    type Output = Affine;
    fn add(self, rhs: i64) -> Affine {
        self.combine(Affine::constant(rhs), 1)
    }
}

impl Sub<i64> for Affine {
    type Output = Affine;
    fn sub(self, rhs: i64) -> Affine {
        self.combine(Affine::constant(rhs), -1)
    }
}

impl Mul<i64> for Affine {
    type Output = Affine;
    fn mul(self, k: i64) -> Affine {
        if k == 0 {
            return Affine::constant(0);
        }
        let mut out = self.unreduced();
        out.constant = out.constant.saturating_mul(k);
        for t in &mut out.terms {
            t.1 = t.1.saturating_mul(k);
        }
        for p in &mut out.parts {
            p.1 = p.1.saturating_mul(k);
        }
        out.canonical()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evaluates_and_displays() {
        let e = Affine::index(1) * 128 + Affine::rank() * 4 + 3;
        assert_eq!(e.eval(&[7, 2], 5), Ok(2 * 128 + 20 + 3));
        assert_eq!(e.display(&["a".into(), "m".into()]).to_string(), "128 * m + 4 * RANK + 3");
        let rot = (Affine::rank() + Affine::index(0)).modulo(4);
        assert_eq!(rot.eval(&[3], 2), Ok(1));
        assert_eq!(rot.display(&["d".into()]).to_string(), "(d + RANK) % 4");
        assert_eq!((Affine::index(0) - Affine::index(0)).terms.len(), 0);
    }

    #[test]
    fn reduced_parts_scale_and_add_like_variables() {
        let names = ["k".to_string(), "b".to_string()];
        // Rows of source rank (RANK + k) % 4, 16 rows each, then block b of 4 rows.
        let start = (Affine::rank() + Affine::index(0)).modulo(4) * 16 + Affine::index(1) * 4;
        assert_eq!(start.display(&names).to_string(), "4 * b + 16 * ((k + RANK) % 4)");
        assert_eq!(start.eval(&[3, 2], 2), Ok(16 + 8));
        assert!(!start.is_affine() && start.mentions_rank() && start.max_index() == Some(1));
        assert_eq!(start.vars(), [Var::Index(0), Var::Index(1), Var::Rank]);
        // Floor division, nested in a remainder: the group of 8 ranks after the rank's own.
        let group = (Affine::rank().quotient(8) + 1).modulo(2) * 8;
        assert_eq!(group.display(&[]).to_string(), "8 * ((RANK / 8 + 1) % 2)");
        assert_eq!([0, 7, 8, 15].map(|r| group.eval(&[], r)), [Ok(8), Ok(8), Ok(0), Ok(0)]);
        assert_eq!((Affine::index(0) - 5).quotient(4).eval(&[2], 0), Ok(-1));
        // A reduced expression keeps its form until computed with; equal values compare equal.
        let rot = (Affine::rank() + 1).modulo(4);
        assert_eq!(rot.clone() + 0, rot);
        assert_eq!(rot.clone() * 2 - rot.clone(), rot);
        assert_eq!((rot.clone() - rot.clone()), Affine::constant(0));
        assert!(rot.is_affine());
        // A part whose inner expression is constant is constant.
        assert!((Affine::constant(9).quotient(4) * 3).is_constant());
    }

    #[test]
    fn overflow_is_reported() {
        let e = Affine::index(0) * i64::MAX + 1;
        assert_eq!(e.eval(&[0], 0), Ok(1));
        assert_eq!(e.eval(&[1], 0), Err(Overflow));
        assert_eq!(e.eval(&[2], 0), Err(Overflow));
    }
}
