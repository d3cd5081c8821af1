//! Tensors in global memory: kernel inputs and outputs, scratch, and symmetric tensors that
//! other ranks may write into with one-sided puts. Shapes are compile-time constants.

use super::Loc;
use serde::{Deserialize, Serialize};
use smallvec::SmallVec;

/// Element type of a tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DType {
    /// bfloat16: 8 exponent bits, 7 mantissa bits.
    Bf16,
    /// IEEE half precision.
    F16,
    /// IEEE single precision.
    F32,
    /// Signed 8-bit integer (quantised activations).
    I8,
    /// Signed 32-bit integer (counts, indices).
    I32,
}

impl DType {
    /// Bytes per element.
    pub fn size_bytes(self) -> u64 {
        match self {
            DType::I8 => 1,
            DType::Bf16 | DType::F16 => 2,
            DType::F32 | DType::I32 => 4,
        }
    }

    /// Lower-case name (`bf16`): the DSL's `Bf16` and the messages' spelling.
    pub fn name(self) -> &'static str {
        match self {
            DType::Bf16 => "bf16",
            DType::F16 => "f16",
            DType::F32 => "f32",
            DType::I8 => "i8",
            DType::I32 => "i32",
        }
    }
}

/// Where a tensor comes from and who may write it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TensorKind {
    /// Read-only kernel argument.
    Input,
    /// Kernel result; must be written before it is read.
    Output,
    /// Temporary global memory; must be written before it is read.
    Scratch,
    /// Lives at the same address on every rank; the only kind a `put` may target.
    Symmetric,
}

impl TensorKind {
    /// Lower-case name (`input`), as the DSL's constructor and messages spell it.
    pub fn name(self) -> &'static str {
        match self {
            TensorKind::Input => "input",
            TensorKind::Output => "output",
            TensorKind::Scratch => "scratch",
            TensorKind::Symmetric => "symmetric",
        }
    }

    /// Whether every element read must first be written by a tile of the taskflow.
    pub fn needs_writer(self) -> bool {
        !matches!(self, TensorKind::Input)
    }
}

/// A tensor declaration. Every rank holds its own copy.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TensorDecl {
    /// The tensor's name, unique among the taskflow's tensors.
    pub name: String,
    /// Where it lives and who may write it.
    pub kind: TensorKind,
    /// Element type.
    pub dtype: DType,
    /// Extent per dimension, outermost first (row-major; at most
    /// [`crate::limits::MAX_TENSOR_DIMS`]).
    pub shape: SmallVec<[u64; 4]>,
    /// Where it was declared.
    pub loc: Loc,
}

impl TensorDecl {
    /// Number of elements, or `None` if it does not fit in `u64`.
    pub fn elements(&self) -> Option<u64> {
        self.shape.iter().try_fold(1u64, |acc, &d| acc.checked_mul(d))
    }

    /// Bytes per rank, or `None` on overflow.
    pub fn bytes(&self) -> Option<u64> {
        self.elements()?.checked_mul(self.dtype.size_bytes())
    }
}
