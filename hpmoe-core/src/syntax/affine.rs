//! Checked arithmetic on [`Affine`] index expressions, shared by the index lowering
//! (`index`) and the loop bounds of `lower`: an overflow is `None`, never a saturation.

use crate::model::Affine;

/// `a + sign * b`, `None` on overflow. A reduced operand (`x % m`) takes part as its value.
pub fn add(a: &Affine, b: &Affine, sign: i64) -> Option<Affine> {
    let (mut out, b) = (a.clone().unreduced(), b.clone().unreduced());
    out.constant = out.constant.checked_add(b.constant.checked_mul(sign)?)?;
    for &(v, k) in &b.terms {
        let k = k.checked_mul(sign)?;
        match out.terms.binary_search_by_key(&v, |t| t.0) {
            Ok(pos) => {
                out.terms[pos].1 = out.terms[pos].1.checked_add(k)?;
                if out.terms[pos].1 == 0 {
                    out.terms.remove(pos);
                }
            }
            Err(pos) => out.terms.insert(pos, (v, k)),
        }
    }
    for (p, k) in b.parts {
        let k = k.checked_mul(sign)?;
        match out.parts.binary_search_by(|t| t.0.cmp(&p)) {
            Ok(pos) => {
                out.parts[pos].1 = out.parts[pos].1.checked_add(k)?;
                if out.parts[pos].1 == 0 {
                    out.parts.remove(pos);
                }
            }
            Err(pos) => out.parts.insert(pos, (p, k)),
        }
    }
    // The model's canonical form (a lone `x % m` as a modulus of the whole).
    Some(out + 0)
}

/// `k * a`, `None` on overflow. A reduced `a` (`x % m`) is scaled as its value.
pub fn scale(a: &Affine, k: i64) -> Option<Affine> {
    if k == 0 {
        return Some(Affine::constant(0));
    }
    let mut out = a.clone().unreduced();
    out.constant = out.constant.checked_mul(k)?;
    for t in &mut out.terms {
        t.1 = t.1.checked_mul(k)?;
    }
    for p in &mut out.parts {
        p.1 = p.1.checked_mul(k)?;
    }
    Some(out + 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checked_affine_arithmetic() {
        let e = Affine::index(0);
        let r = Affine::rank();
        let sum = add(&scale(&e, 3).unwrap(), &r, -1).unwrap();
        assert_eq!(sum.to_string(), "3 * i0 - RANK");
        assert_eq!(add(&sum, &scale(&e, 3).unwrap(), -1).unwrap().to_string(), "-RANK");
        assert!(scale(&e, i64::MAX).and_then(|a| add(&a, &a, 1)).is_none());
        assert!(scale(&Affine::constant(i64::MIN), -1).is_none());
        // A reduced operand is a part of the result, scaled and added checked like a term.
        let rot = add(&r, &e, 1).unwrap().modulo(4);
        let start = add(&scale(&rot, 16).unwrap(), &e, 1).unwrap();
        assert_eq!(start.to_string(), "i0 + 16 * ((i0 + RANK) % 4)");
        assert_eq!(add(&start, &scale(&rot, 16).unwrap(), -1).unwrap(), e);
        assert!(scale(&rot, i64::MAX).and_then(|a| add(&a, &a, 1)).is_none());
    }
}
