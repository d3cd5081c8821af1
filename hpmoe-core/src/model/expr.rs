//! Affine index expressions: `c + Σ kᵢ·varᵢ`, optionally reduced modulo a constant.
//!
//! Region bounds, `after` index mappings and put destinations are written in terms of the
//! tile's grid indices and the executing rank (`RANK`, the taskflow is SPMD). Evaluation is
//! checked: an overflow is reported, never wrapped.

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

/// `constant + Σ coeff·var`, then `rem_euclid(modulo)` if a modulus is set.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Affine {
    /// The constant term `c`.
    pub constant: i64,
    /// At most one term per variable, sorted by variable, no zero coefficients.
    pub terms: SmallVec<[(Var, i64); 2]>,
    /// If set, the sum is reduced `rem_euclid` this modulus (`> 0`), so the value is in `0..m`.
    pub modulo: Option<u64>,
}

/// Evaluation failed: the expression overflows `i64` (or reduces modulo 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Overflow;

impl Affine {
    /// The constant `c`.
    pub fn constant(c: i64) -> Self {
        Affine { constant: c, terms: SmallVec::new(), modulo: None }
    }

    /// The variable `v` with coefficient 1.
    pub fn var(v: Var) -> Self {
        Affine { constant: 0, terms: smallvec::smallvec![(v, 1)], modulo: None }
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
    pub fn modulo(mut self, m: u64) -> Self {
        assert!(m > 0, "modulus must be positive");
        self.modulo = Some(m);
        self
    }

    /// Whether no variable appears (the value is the same for every instance and rank; a modulus,
    /// if any, applies to the constant alone).
    pub fn is_constant(&self) -> bool {
        self.terms.is_empty()
    }

    /// Largest grid index mentioned, if any (for arity checks).
    pub fn max_index(&self) -> Option<u8> {
        self.terms
            .iter()
            .filter_map(|(v, _)| match v {
                Var::Index(i) => Some(*i),
                Var::Rank => None,
            })
            .max()
    }

    /// Whether the expression depends on the executing rank.
    pub fn mentions_rank(&self) -> bool {
        self.terms.iter().any(|(v, _)| *v == Var::Rank)
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
        Ok(match self.modulo {
            // A zero modulus cannot come from the builder (it asserts); a deserialised or
            // hand-built expression gets an error, not a panic.
            Some(0) => return Err(Overflow),
            Some(m) => acc.rem_euclid(i64::try_from(m).map_err(|_| Overflow)?),
            None => acc,
        })
    }

    fn combine(mut self, other: &Affine, sign: i64) -> Self {
        assert!(
            self.modulo.is_none() && other.modulo.is_none(),
            "arithmetic on a reduced (mod) expression: apply `modulo` last"
        );
        self.constant = self.constant.saturating_add(other.constant.saturating_mul(sign));
        for &(v, k) in &other.terms {
            let k = k.saturating_mul(sign);
            match self.terms.binary_search_by_key(&v, |t| t.0) {
                Ok(pos) => {
                    self.terms[pos].1 = self.terms[pos].1.saturating_add(k);
                    if self.terms[pos].1 == 0 {
                        self.terms.remove(pos);
                    }
                }
                Err(pos) => self.terms.insert(pos, (v, k)),
            }
        }
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
        let mut first = true;
        let wrap = self.e.modulo.is_some() && (self.e.terms.len() + usize::from(self.e.constant != 0)) > 1;
        if wrap {
            f.write_str("(")?;
        }
        for &(v, k) in &self.e.terms {
            let name = match v {
                Var::Index(i) => self.names.get(i as usize).cloned().unwrap_or_else(|| format!("i{i}")),
                Var::Rank => "RANK".to_string(),
            };
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
            f.write_str(&name)?;
            first = false;
        }
        if first {
            write!(f, "{}", self.e.constant)?;
        } else if self.e.constant > 0 {
            write!(f, " + {}", self.e.constant)?;
        } else if self.e.constant < 0 {
            write!(f, " - {}", self.e.constant.unsigned_abs())?;
        }
        if wrap {
            f.write_str(")")?;
        }
        if let Some(m) = self.e.modulo {
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
        self.combine(&rhs, 1)
    }
}

impl Sub for Affine {
    type Output = Affine;
    fn sub(self, rhs: Affine) -> Affine {
        self.combine(&rhs, -1)
    }
}

impl Add<i64> for Affine {
    type Output = Affine;
    fn add(self, rhs: i64) -> Affine {
        self.combine(&Affine::constant(rhs), 1)
    }
}

impl Sub<i64> for Affine {
    type Output = Affine;
    fn sub(self, rhs: i64) -> Affine {
        self.combine(&Affine::constant(rhs), -1)
    }
}

impl Mul<i64> for Affine {
    type Output = Affine;
    fn mul(mut self, k: i64) -> Affine {
        assert!(self.modulo.is_none(), "arithmetic on a reduced (mod) expression: apply `modulo` last");
        if k == 0 {
            return Affine::constant(0);
        }
        self.constant = self.constant.saturating_mul(k);
        for t in &mut self.terms {
            t.1 = t.1.saturating_mul(k);
        }
        self
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
    fn overflow_is_reported() {
        let e = Affine::index(0) * i64::MAX + 1;
        assert_eq!(e.eval(&[0], 0), Ok(1));
        assert_eq!(e.eval(&[1], 0), Err(Overflow));
        assert_eq!(e.eval(&[2], 0), Err(Overflow));
    }
}
