//! Affine index expressions as C++ integer expressions (`int64_t` arithmetic).

use hpmoe_core::model::{Affine, Var};
use std::fmt::Write;

/// Renders `e` with `names[i]` for grid index `i` and `rank` for RANK; a modulus becomes
/// `hpmoe::Mod(.., m)` (Euclidean, like the model's).
pub fn cpp(e: &Affine, names: &[String]) -> String {
    let sum = linear(e.constant, &e.terms, names);
    match e.modulo {
        Some(m) => format!("hpmoe::Mod({sum}, {m})"),
        None => sum,
    }
}

/// `c + Σ k·var` with the terms in order, then the constant: `128 * m + 4 * rank + 3`.
pub fn linear(constant: i64, terms: &[(Var, i64)], names: &[String]) -> String {
    let mut out = String::new();
    for &(v, k) in terms {
        if k == 0 {
            continue;
        }
        let name = match v {
            Var::Index(i) => names.get(i as usize).cloned().unwrap_or_else(|| format!("g[{i}]")),
            Var::Rank => "rank".to_string(),
        };
        let (neg, abs) = (k < 0, k.unsigned_abs());
        match (out.is_empty(), neg) {
            (true, true) => out.push('-'),
            (false, true) => out.push_str(" - "),
            (false, false) => out.push_str(" + "),
            (true, false) => {}
        }
        if abs != 1 {
            let _ = write!(out, "{abs} * ");
        }
        out.push_str(&name);
    }
    if out.is_empty() {
        let _ = write!(out, "{constant}");
    } else if constant > 0 {
        let _ = write!(out, " + {constant}");
    } else if constant < 0 {
        let _ = write!(out, " - {}", constant.unsigned_abs());
    }
    out
}

/// The variables `e` mentions.
pub fn vars(e: &Affine) -> impl Iterator<Item = Var> + '_ {
    e.terms.iter().filter(|t| t.1 != 0).map(|t| t.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_terms_constants_and_moduli() {
        let names = ["e".to_string(), "m".to_string()];
        let e = Affine::index(1) * 128 + Affine::rank() * 4 + 3;
        assert_eq!(cpp(&e, &names), "128 * m + 4 * rank + 3");
        assert_eq!(cpp(&(Affine::index(0) - Affine::index(1) * 2 - 5), &names), "e - 2 * m - 5");
        assert_eq!(cpp(&Affine::constant(-7), &names), "-7");
        assert_eq!(cpp(&(Affine::rank() + Affine::index(0)).modulo(8), &names), "hpmoe::Mod(e + rank, 8)");
        assert_eq!(cpp(&(Affine::index(0) * -1), &names), "-e");
    }
}
