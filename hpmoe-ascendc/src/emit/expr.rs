//! Index expressions as C++ integer expressions (`int64_t` arithmetic).

use hpmoe_core::model::{Affine, Reduce, Var};
use std::fmt::Write;

/// Renders `e` with `names[i]` for grid index `i` and `rank` for RANK; a modulus becomes
/// `hpmoe::Mod(.., m)`, a part `x / d` `hpmoe::Div(x, d)` (both Euclidean, like the model's).
pub fn cpp(e: &Affine, names: &[String]) -> String {
    if e.parts.is_empty() {
        let sum = linear(e.constant, &e.terms, names);
        return match e.modulo {
            Some(m) => format!("hpmoe::Mod({sum}, {m})"),
            None => sum,
        };
    }
    // Terms, then parts, then the constant: `4 * e + 16 * hpmoe::Mod(m + rank, 8) + 3`.
    let mut sum = if e.terms.is_empty() { String::new() } else { linear(0, &e.terms, names) };
    for (p, k) in &e.parts {
        let f = match p.op {
            Reduce::Rem(m) => format!("hpmoe::Mod({}, {m})", cpp(&p.inner, names)),
            Reduce::Div(d) => format!("hpmoe::Div({}, {d})", cpp(&p.inner, names)),
        };
        let (neg, abs) = (*k < 0, k.unsigned_abs());
        let term = if abs == 1 { f } else { format!("{abs} * {f}") };
        sum = match (sum.is_empty(), neg) {
            (true, false) => term,
            (true, true) => format!("-{term}"),
            (false, false) => format!("{sum} + {term}"),
            (false, true) => format!("{sum} - {term}"),
        };
    }
    if e.constant > 0 {
        sum = format!("{sum} + {}", e.constant);
    } else if e.constant < 0 {
        sum = format!("{sum} - {}", e.constant.unsigned_abs());
    }
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

/// The variables `e` mentions, inside its parts too.
pub fn vars(e: &Affine) -> impl Iterator<Item = Var> {
    e.vars().into_iter()
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
        let rotated = (Affine::rank() + Affine::index(1)).modulo(8) * 16 + Affine::index(0) * 4;
        assert_eq!(cpp(&rotated, &names), "4 * e + 16 * hpmoe::Mod(m + rank, 8)");
        let group = (Affine::rank().quotient(4) + 1).modulo(2) * -64;
        assert_eq!(cpp(&group, &names), "-64 * hpmoe::Mod(hpmoe::Div(rank, 4) + 1, 2)");
    }
}
