//! Checked arithmetic on [`Affine`] index expressions, shared by the index lowering
//! (`index`) and the loop bounds of `lower`: an overflow is `None`, never a saturation.

use crate::model::Affine;

/// `a + sign * b`, `None` on overflow. Neither may be reduced modulo.
pub fn add(a: &Affine, b: &Affine, sign: i64) -> Option<Affine> {
    let mut out = a.clone();
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
    Some(out)
}

/// `k * a`, `None` on overflow. `a` may not be reduced modulo.
pub fn scale(a: &Affine, k: i64) -> Option<Affine> {
    if k == 0 {
        return Some(Affine::constant(0));
    }
    let mut out = a.clone();
    out.constant = out.constant.checked_mul(k)?;
    for t in &mut out.terms {
        t.1 = t.1.checked_mul(k)?;
    }
    Some(out)
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
    }
}
