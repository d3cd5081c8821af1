//! Host copies of tensors and the element encoding the executor uses.
//!
//! Every element is kept as its bit pattern in a `u32` (zero-extended for 8- and 16-bit
//! types), so equality of two [`HostTensor`]s is *bitwise* equality: `-0.0 != +0.0` and two
//! NaNs are equal exactly when their bits are.
//!
//! Arithmetic happens in `f32`. Converting an `f32` into an element type:
//! - `bf16`, `f16`: round to nearest, ties to even (the `half` crate);
//! - `f32`: unchanged;
//! - `i8`, `i32`: round half to even, then saturate; NaN becomes 0.
//!
//! Reading any element type as `f32` is exact except for `i32` values beyond ±2²⁴.

use half::{bf16, f16};
use hpmoe_core::model::DType;
use smallvec::SmallVec;
use std::fmt;

/// Bits of `value` converted to `dtype` (see the module docs for the rounding).
pub fn encode(dtype: DType, value: f32) -> u32 {
    match dtype {
        DType::Bf16 => u32::from(bf16::from_f32(value).to_bits()),
        DType::F16 => u32::from(f16::from_f32(value).to_bits()),
        DType::F32 => value.to_bits(),
        DType::I8 => u32::from((value.round_ties_even() as i8) as u8),
        DType::I32 => (value.round_ties_even() as i32) as u32,
    }
}

/// The value of an element of `dtype` with bit pattern `bits`, as `f32`.
pub fn decode(dtype: DType, bits: u32) -> f32 {
    match dtype {
        DType::Bf16 => bf16::from_bits(bits as u16).to_f32(),
        DType::F16 => f16::from_bits(bits as u16).to_f32(),
        DType::F32 => f32::from_bits(bits),
        DType::I8 => f32::from(bits as u8 as i8),
        DType::I32 => bits as i32 as f32,
    }
}

/// `value` rounded to `dtype` and read back: what storing it and loading it again gives.
pub fn round_to(dtype: DType, value: f32) -> f32 {
    decode(dtype, encode(dtype, value))
}

/// Whether `dtype` is a floating-point type.
pub fn is_float(dtype: DType) -> bool {
    matches!(dtype, DType::Bf16 | DType::F16 | DType::F32)
}

/// The pattern every non-input tensor holds before the run: a quiet NaN with a payload for
/// floating-point types, the most negative value for integers (which `quantize` never
/// produces). Reading an element nobody wrote therefore shows up in the results.
pub fn poison(dtype: DType) -> u32 {
    match dtype {
        DType::Bf16 => 0x7FA5,
        DType::F16 => 0x7EA5,
        DType::F32 => 0x7FA5_A5A5,
        DType::I8 => 0x80,
        DType::I32 => 0x8000_0000,
    }
}

/// Number of elements of a shape, `None` on overflow of `usize`.
pub fn element_count(shape: &[u64]) -> Option<usize> {
    shape.iter().try_fold(1usize, |acc, &d| acc.checked_mul(usize::try_from(d).ok()?))
}

/// A tensor in host memory: element type, shape and the bits of every element in row-major
/// order. Used for inputs, for results, and by reference implementations.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct HostTensor {
    dtype: DType,
    shape: SmallVec<[u64; 4]>,
    bits: Vec<u32>,
}

impl HostTensor {
    /// A tensor from raw bit patterns (one per element, zero-extended to `u32`).
    ///
    /// # Panics
    /// If `bits.len()` is not the number of elements of `shape`.
    #[track_caller]
    pub fn from_bits(dtype: DType, shape: &[u64], bits: Vec<u32>) -> Self {
        let n = element_count(shape);
        assert_eq!(n, Some(bits.len()), "shape {shape:?} needs {n:?} elements, got {}", bits.len());
        HostTensor { dtype, shape: shape.iter().copied().collect(), bits }
    }

    /// A tensor whose elements are `values` converted to `dtype`.
    ///
    /// # Panics
    /// If `values.len()` is not the number of elements of `shape`.
    #[track_caller]
    pub fn from_f32(dtype: DType, shape: &[u64], values: &[f32]) -> Self {
        Self::from_bits(dtype, shape, values.iter().map(|&v| encode(dtype, v)).collect())
    }

    /// A tensor whose element `i` (row-major) is `f(i)` converted to `dtype`.
    ///
    /// # Panics
    /// If the shape's element count overflows `usize`.
    pub fn from_fn(dtype: DType, shape: &[u64], mut f: impl FnMut(usize) -> f32) -> Self {
        let n = element_count(shape).expect("tensor size fits in memory");
        Self::from_bits(dtype, shape, (0..n).map(|i| encode(dtype, f(i))).collect())
    }

    /// Every element equal to `value` converted to `dtype`.
    pub fn filled(dtype: DType, shape: &[u64], value: f32) -> Self {
        Self::from_fn(dtype, shape, |_| value)
    }

    /// Element type: how each stored value rounds (the data itself is kept as raw bits of it).
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// Extent per dimension, outermost first (row-major).
    pub fn shape(&self) -> &[u64] {
        &self.shape
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.bits.len()
    }

    /// Whether the tensor has no elements (some dimension is 0).
    pub fn is_empty(&self) -> bool {
        self.bits.is_empty()
    }

    /// Bit patterns of the elements, row-major.
    pub fn bits(&self) -> &[u32] {
        &self.bits
    }

    /// Element `i` (row-major) as `f32`.
    pub fn get(&self, i: usize) -> f32 {
        decode(self.dtype, self.bits[i])
    }

    /// All elements as `f32`.
    pub fn to_f32(&self) -> Vec<f32> {
        self.bits.iter().map(|&b| decode(self.dtype, b)).collect()
    }

    /// The first element whose bits differ from `other`'s: `(index, self's bits, other's
    /// bits)`, or a description of a dtype or shape mismatch. `None` when bitwise equal.
    pub fn first_difference(&self, other: &HostTensor) -> Option<String> {
        if self.dtype != other.dtype || self.shape != other.shape {
            return Some(format!(
                "{} {:?} vs {} {:?}",
                self.dtype.name(),
                self.shape.as_slice(),
                other.dtype.name(),
                other.shape.as_slice()
            ));
        }
        let i = self.bits.iter().zip(&other.bits).position(|(a, b)| a != b)?;
        Some(format!("element {i}: {:#x} ({}) vs {:#x} ({})", self.bits[i], self.get(i), other.bits[i], other.get(i)))
    }
}

impl fmt::Debug for HostTensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const SHOWN: usize = 8;
        write!(f, "HostTensor({} {:?} [", self.dtype.name(), self.shape.as_slice())?;
        for i in 0..self.len().min(SHOWN) {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{}", self.get(i))?;
        }
        if self.len() > SHOWN {
            write!(f, ", … {} more", self.len() - SHOWN)?;
        }
        f.write_str("])")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_and_rounds_per_dtype() {
        // 1 + 2^-8 is halfway between two bf16 values: ties to even rounds down to 1.
        assert_eq!(round_to(DType::Bf16, 1.0 + 1.0 / 256.0), 1.0);
        assert_eq!(round_to(DType::Bf16, 1.0 + 3.0 / 256.0), 1.0 + 4.0 / 256.0);
        assert_eq!(encode(DType::Bf16, 1.0), 0x3F80);
        assert_eq!(round_to(DType::I8, 2.5), 2.0);
        assert_eq!(round_to(DType::I8, -3.5), -4.0);
        assert_eq!(round_to(DType::I8, 300.0), 127.0);
        assert_eq!(round_to(DType::I8, f32::NAN), 0.0);
        assert_eq!(round_to(DType::I32, -7.5), -8.0);
        assert_eq!(encode(DType::F32, -0.0), 0x8000_0000);
        for d in [DType::Bf16, DType::F16, DType::F32] {
            assert!(decode(d, poison(d)).is_nan());
        }
        assert_eq!(decode(DType::I8, poison(DType::I8)), -128.0);
    }

    #[test]
    fn equality_is_bitwise() {
        let a = HostTensor::from_f32(DType::Bf16, &[2], &[0.0, 1.0]);
        let b = HostTensor::from_f32(DType::Bf16, &[2], &[-0.0, 1.0]);
        assert_ne!(a, b);
        assert!(a.first_difference(&b).unwrap().starts_with("element 0"));
        let nan = HostTensor::from_bits(DType::Bf16, &[1], vec![poison(DType::Bf16)]);
        assert_eq!(nan, nan.clone());
        assert_eq!(a.first_difference(&a.clone()), None);
        assert!(a.first_difference(&HostTensor::filled(DType::F32, &[2], 0.0)).is_some());
    }
}
