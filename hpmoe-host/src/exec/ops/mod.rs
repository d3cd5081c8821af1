//! Reference implementations of ops, and the registry that maps op names to them.
//!
//! The model's [`OpRegistry`](hpmoe_core::model::OpRegistry) holds signatures only. The executor
//! looks every op a taskflow calls up *by name* in an [`OpImpls`] registry; a user who adds
//! an op to the taskflow adds its reference body here, without touching hpmoe. An op with
//! no implementation is an error before the run starts, and so is an argument shape the
//! implementation's [`RefOp::check`] rejects.
//!
//! An op body sees each region argument as an [`Arg`]: its element type, the shape of the
//! box (every dimension of the tensor, sliced or not), and loads and stores of the whole box
//! in row-major order. Matrix-shaped ops read a box as `rows × cols`, where `cols` is the
//! last extent and `rows` the product of the others ([`ArgDesc::rows`]).

mod builtin;
mod error;
mod user;

pub use builtin::{sigmoid, silu, swiglu_grad};
pub use error::{IndexAt, Item, OpError, OutOfRange, Per, ShapeMismatch, UserOpProblem};

use super::memory::TensorStore;
use super::tensor::{decode, encode};
use hpmoe_core::expand::Extent;
use hpmoe_core::model::{Access, DType};
use smallvec::SmallVec;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

/// What an op body knows about one argument before the run: the same for every instance
/// of the tile family.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArgDesc {
    /// Parameter name in the op's signature.
    pub param: String,
    /// Whether the op reads, writes, or reads and writes this argument.
    pub access: Access,
    /// Element type of the argument's tensor (the reference body reads and writes `f32` values
    /// rounded to it).
    pub dtype: DType,
    /// Extent of the box in every dimension of the tensor.
    pub shape: SmallVec<[u32; 4]>,
}

impl ArgDesc {
    /// Elements in the box.
    pub fn elements(&self) -> usize {
        self.shape.iter().map(|&d| d as usize).product()
    }

    /// Last extent: the length of a row.
    pub fn cols(&self) -> usize {
        self.shape.last().map_or(1, |&d| d as usize)
    }

    /// Product of all extents but the last.
    pub fn rows(&self) -> usize {
        self.elements() / self.cols().max(1)
    }

    /// `name: dtype [a, b]` for messages.
    pub fn describe(&self) -> String {
        format!("`{}` {} {:?}", self.param, self.dtype.name(), self.shape.as_slice())
    }
}

/// One argument of one op call of one tile instance: a box in one rank's copy of a tensor.
#[derive(Clone, Copy)]
pub struct Arg<'a> {
    desc: &'a ArgDesc,
    store: &'a TensorStore,
    extent: Extent,
    rank: u32,
}

impl<'a> Arg<'a> {
    pub(crate) fn new(desc: &'a ArgDesc, store: &'a TensorStore, extent: Extent, rank: u32) -> Self {
        debug_assert_eq!(store.dtype(), desc.dtype);
        Arg { desc, store, extent, rank }
    }

    /// What is known of this argument for every instance: parameter name, access, type, box shape.
    pub fn desc(&self) -> &'a ArgDesc {
        self.desc
    }

    /// Element type of the argument's tensor.
    pub fn dtype(&self) -> DType {
        self.desc.dtype
    }

    /// Where the box starts in the tensor, per dimension.
    pub fn origin(&self) -> &[u32] {
        &self.extent.start[..self.extent.dims as usize]
    }

    /// The rank whose copy of the tensor the box is in.
    pub fn rank(&self) -> u32 {
        self.rank
    }

    /// The box's elements as `f32`, row-major.
    pub fn load(&self) -> Vec<f32> {
        self.store.load_box(&self.extent).into_iter().map(|b| decode(self.desc.dtype, b)).collect()
    }

    /// The elements of the box's `i`-th slice along its first dimension (every other
    /// dimension whole) as `f32`, row-major: row `i` of a gather table. `None` if `i` is
    /// past the box (or the tensor has no dimension).
    pub fn load_outer(&self, i: usize) -> Option<Vec<f32>> {
        let first = *self.desc.shape.first()? as usize;
        if i >= first {
            return None;
        }
        let mut ext = self.extent;
        ext.start[0] += i as u32; // < start + len, which fits the tensor
        ext.len[0] = 1;
        Some(self.store.load_box(&ext).into_iter().map(|b| decode(self.desc.dtype, b)).collect())
    }

    /// The box's elements as bit patterns, row-major (for exact copies).
    pub fn load_bits(&self) -> Vec<u32> {
        self.store.load_box(&self.extent)
    }

    /// Stores `values` (row-major, one per element) converted to the argument's type.
    ///
    /// # Errors
    /// [`OpError::ReadOnly`] if the op's signature only reads the argument,
    /// [`OpError::StoreLength`] if `values` is not one per element of the box.
    pub fn store(&self, values: &[f32]) -> Result<(), OpError> {
        let bits: Vec<u32> = values.iter().map(|&v| encode(self.desc.dtype, v)).collect();
        self.store_bits(&bits)
    }

    /// Stores bit patterns (row-major, one per element) into the box.
    ///
    /// # Errors
    /// As [`Arg::store`].
    pub fn store_bits(&self, bits: &[u32]) -> Result<(), OpError> {
        if !self.desc.access.writes() {
            return Err(OpError::ReadOnly { arg: self.desc.clone() });
        }
        if bits.len() != self.desc.elements() {
            return Err(OpError::StoreLength { arg: self.desc.clone(), stored: bits.len() });
        }
        self.store.store_box(&self.extent, bits);
        Ok(())
    }
}

impl fmt::Debug for Arg<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Arg({} at {} on rank {})", self.desc.describe(), self.extent, self.rank)
    }
}

/// The reference body of an op, run on the host.
///
/// Bodies must be deterministic — the same argument values give the same bits — so a
/// schedule's results do not depend on timing: fix every summation order.
pub trait RefOp: Send + Sync {
    /// Checks the arguments' types and box shapes; called once per op call of every tile
    /// family before the run. The error says what is wrong ([`OpError::other`] wraps a body's
    /// own error type).
    fn check(&self, args: &[ArgDesc]) -> Result<(), OpError>;

    /// Runs the op on one tile instance's arguments (in signature order).
    fn run(&self, args: &[Arg<'_>]) -> Result<(), OpError>;
}

/// Op names → reference bodies.
#[derive(Clone)]
pub struct OpImpls {
    ops: BTreeMap<String, Arc<dyn RefOp>>,
}

impl Default for OpImpls {
    fn default() -> Self {
        Self::builtin()
    }
}

impl fmt::Debug for OpImpls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.ops.keys()).finish()
    }
}

impl OpImpls {
    /// No implementations.
    pub fn empty() -> Self {
        OpImpls { ops: BTreeMap::new() }
    }

    /// Reference bodies of every built-in op of [`OpRegistry::builtin`](hpmoe_core::model::OpRegistry::builtin)
    /// (semantics documented at each implementation, in `builtin`).
    pub fn builtin() -> Self {
        let mut r = Self::empty();
        builtin::register_all(&mut r);
        r
    }

    /// Adds the body of op `name`.
    ///
    /// # Errors
    /// [`OpError::AlreadyRegistered`] if `name` already has one.
    pub fn register(&mut self, name: &str, op: impl RefOp + 'static) -> Result<(), OpError> {
        if self.ops.contains_key(name) {
            return Err(OpError::AlreadyRegistered { op: name.to_string() });
        }
        self.ops.insert(name.to_string(), Arc::new(op));
        Ok(())
    }

    /// Sets the body of op `name`, replacing any it had.
    pub fn replace(&mut self, name: &str, op: impl RefOp + 'static) {
        self.replace_arc(name, Arc::new(op));
    }

    fn replace_arc(&mut self, name: &str, op: Arc<dyn RefOp>) {
        self.ops.insert(name.to_string(), op);
    }

    /// The body registered for op `name`, if any.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn RefOp>> {
        self.ops.get(name)
    }

    /// Names of the ops with a body, in sorted order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.ops.keys().map(String::as_str)
    }
}
