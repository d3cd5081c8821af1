//! Per-rank tensor storage, all ranks in one process.
//!
//! Every rank owns a copy of every tensor. Elements are atomics of their width (`AtomicU8`,
//! `AtomicU16`, `AtomicU32`) accessed with `Relaxed` ordering: a tile on one thread may
//! write rows that a tile on another thread reads later, and a put writes straight into the
//! destination rank's copy of a symmetric tensor. Which accesses may overlap is decided by
//! the schedule, not by locks: the counters' `Release`/`Acquire` pairs (see
//! [`super::counters`]) order a producer's writes before its consumers' reads. A schedule
//! that forgets an ordering therefore produces wrong numbers — which the bitwise checks
//! catch — but never undefined behaviour.
//!
//! Inputs are copied in from [`Inputs`]; every other tensor starts filled with
//! [`poison`], so reading something nobody wrote is visible.

use super::setup::MemoryError;
use super::tensor::{HostTensor, element_count, poison};
use crate::rng::SplitMix;
use hpmoe_core::expand::Extent;
use hpmoe_core::model::{DType, Taskflow, TensorDecl, TensorKind};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU8, AtomicU16, AtomicU32, Ordering::Relaxed};

/// Element cells of one tensor copy, as atomics of the element's width.
#[derive(Debug)]
enum Cells {
    W8(Vec<AtomicU8>),
    W16(Vec<AtomicU16>),
    W32(Vec<AtomicU32>),
}

impl Cells {
    fn new(dtype: DType, len: usize, bits: u32) -> Self {
        match dtype.size_bytes() {
            1 => Cells::W8((0..len).map(|_| AtomicU8::new(bits as u8)).collect()),
            2 => Cells::W16((0..len).map(|_| AtomicU16::new(bits as u16)).collect()),
            _ => Cells::W32((0..len).map(|_| AtomicU32::new(bits)).collect()),
        }
    }

    fn load(&self, i: usize) -> u32 {
        match self {
            Cells::W8(c) => u32::from(c[i].load(Relaxed)),
            Cells::W16(c) => u32::from(c[i].load(Relaxed)),
            Cells::W32(c) => c[i].load(Relaxed),
        }
    }

    fn store(&self, i: usize, bits: u32) {
        match self {
            Cells::W8(c) => c[i].store(bits as u8, Relaxed),
            Cells::W16(c) => c[i].store(bits as u16, Relaxed),
            Cells::W32(c) => c[i].store(bits, Relaxed),
        }
    }
}

/// One rank's copy of one tensor.
#[derive(Debug)]
pub(crate) struct TensorStore {
    dtype: DType,
    shape: Vec<usize>,
    cells: Cells,
}

impl TensorStore {
    fn new(dtype: DType, shape: &[u64], len: usize, bits: u32) -> Self {
        TensorStore { dtype, shape: shape.iter().map(|&d| d as usize).collect(), cells: Cells::new(dtype, len, bits) }
    }

    pub(crate) fn dtype(&self) -> DType {
        self.dtype
    }

    /// Calls `f(offset, len)` for each contiguous run of the box, in row-major order. The
    /// box must lie inside the tensor (regions are bounds-checked when evaluated).
    fn for_each_run(&self, ext: &Extent, mut f: impl FnMut(usize, usize)) {
        let dims = self.shape.len();
        let Some(last) = dims.checked_sub(1) else { return };
        let run = ext.len[last] as usize;
        let mut point = [0usize; hpmoe_core::limits::MAX_TENSOR_DIMS];
        let outer: usize = (0..last).map(|k| ext.len[k] as usize).product();
        for _ in 0..outer {
            // point[last] stays 0: the run covers the last dimension.
            let mut offset = 0usize;
            for (k, (&extent, &p)) in self.shape.iter().zip(&point).enumerate() {
                offset = offset * extent + ext.start[k] as usize + p;
            }
            f(offset, run);
            for k in (0..last).rev() {
                point[k] += 1;
                if point[k] < ext.len[k] as usize {
                    break;
                }
                point[k] = 0;
            }
        }
    }

    /// Bits of the box's elements, row-major.
    pub(crate) fn load_box(&self, ext: &Extent) -> Vec<u32> {
        let mut out = Vec::with_capacity(ext.volume() as usize);
        self.for_each_run(ext, |offset, len| out.extend((offset..offset + len).map(|i| self.cells.load(i))));
        out
    }

    /// Stores `bits` (row-major, one per element of the box) into the box.
    pub(crate) fn store_box(&self, ext: &Extent, bits: &[u32]) {
        let mut next = bits.iter();
        self.for_each_run(ext, |offset, len| {
            for (i, &b) in (offset..offset + len).zip(&mut next) {
                self.cells.store(i, b);
            }
        });
    }

    fn snapshot(&self, shape: &[u64]) -> HostTensor {
        let len = self.shape.iter().product();
        HostTensor::from_bits(self.dtype, shape, (0..len).map(|i| self.cells.load(i)).collect())
    }
}

/// Data for the input tensors of a run: one tensor for every rank, or one per rank.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Inputs {
    every_rank: BTreeMap<String, HostTensor>,
    per_rank: BTreeMap<(String, u32), HostTensor>,
}

impl Inputs {
    /// No inputs yet: add them with [`Inputs::set`] (one tensor for every rank) or
    /// [`Inputs::set_rank`] (one rank's), or draw them all with [`Inputs::random`].
    pub fn new() -> Self {
        Self::default()
    }

    /// Gives input `name` the same data on every rank (unless a rank has its own).
    pub fn set(&mut self, name: &str, tensor: HostTensor) -> &mut Self {
        self.every_rank.insert(name.to_string(), tensor);
        self
    }

    /// Gives input `name` its data on one rank.
    pub fn set_rank(&mut self, name: &str, rank: u32, tensor: HostTensor) -> &mut Self {
        self.per_rank.insert((name.to_string(), rank), tensor);
        self
    }

    /// The data of input `name` on `rank`: the rank's own, else the one for every rank.
    pub fn get(&self, name: &str, rank: u32) -> Option<&HostTensor> {
        self.per_rank.get(&(name.to_string(), rank)).or_else(|| self.every_rank.get(name))
    }

    /// Deterministic pseudo-random data for every input tensor of `tf` on every rank
    /// (different on each rank): floats uniform in `[-1, 1)` (then rounded to the type),
    /// `i8` in `-127..=127`, `i32` in `-1000..=1000`.
    pub fn random(tf: &Taskflow, seed: u64) -> Inputs {
        let mut inputs = Inputs::new();
        for (t, decl) in tf.tensors.iter().enumerate().filter(|(_, d)| d.kind == TensorKind::Input) {
            for rank in 0..tf.profile.ranks {
                let mut rng = SplitMix::new(seed ^ ((t as u64) << 32) ^ u64::from(rank).wrapping_mul(0x9E37_79B9));
                let tensor = HostTensor::from_fn(decl.dtype, &decl.shape, |_| match decl.dtype {
                    DType::I8 => (rng.next_u64() % 255) as f32 - 127.0,
                    DType::I32 => (rng.next_u64() % 2001) as f32 - 1000.0,
                    _ => rng.uniform(),
                });
                inputs.set_rank(&decl.name, rank, tensor);
            }
        }
        inputs
    }
}

/// Every tensor of every rank.
#[derive(Debug)]
pub(crate) struct Memory {
    /// `[rank][tensor]`, tensors in declaration order.
    ranks: Vec<Vec<TensorStore>>,
}

impl Memory {
    /// Allocates every tensor on every rank, copies the inputs in and poisons the rest.
    /// Fails if an input is missing or mis-shaped, or if the whole would take more than
    /// `max_bytes`.
    pub(crate) fn new(
        tensors: &[TensorDecl],
        ranks: u32,
        inputs: &Inputs,
        max_bytes: u64,
    ) -> Result<Self, MemoryError> {
        let mut bytes = 0u64;
        for decl in tensors {
            let b = decl.bytes().and_then(|b| b.checked_mul(u64::from(ranks)));
            bytes = b.and_then(|b| bytes.checked_add(b)).unwrap_or(u64::MAX);
        }
        if bytes > max_bytes {
            return Err(MemoryError::OverLimit { bytes, limit: max_bytes });
        }
        let mut out = Vec::with_capacity(ranks as usize);
        for rank in 0..ranks {
            let mut stores = Vec::with_capacity(tensors.len());
            for decl in tensors {
                let len = element_count(&decl.shape)
                    .ok_or_else(|| MemoryError::TensorTooLarge { tensor: decl.name.clone() })?;
                let store = if decl.kind == TensorKind::Input {
                    let data = inputs
                        .get(&decl.name, rank)
                        .ok_or_else(|| MemoryError::MissingInput { input: decl.name.clone(), rank })?;
                    if data.dtype() != decl.dtype || data.shape() != decl.shape.as_slice() {
                        return Err(MemoryError::InputShape {
                            input: decl.name.clone(),
                            rank,
                            given: (data.dtype(), data.shape().to_vec()),
                            declared: (decl.dtype, decl.shape.to_vec()),
                        });
                    }
                    let store = TensorStore::new(decl.dtype, &decl.shape, len, 0);
                    for (i, &b) in data.bits().iter().enumerate() {
                        store.cells.store(i, b);
                    }
                    store
                } else {
                    TensorStore::new(decl.dtype, &decl.shape, len, poison(decl.dtype))
                };
                stores.push(store);
            }
            out.push(stores);
        }
        Ok(Memory { ranks: out })
    }

    /// Rank `rank`'s copy of tensor `tensor`.
    pub(crate) fn store(&self, rank: u32, tensor: usize) -> &TensorStore {
        &self.ranks[rank as usize][tensor]
    }

    /// Copies every tensor of every rank out.
    pub(crate) fn snapshot(&self, tensors: &[TensorDecl]) -> Snapshot {
        Snapshot {
            names: tensors.iter().map(|d| d.name.clone()).collect(),
            ranks: self
                .ranks
                .iter()
                .map(|stores| stores.iter().zip(tensors).map(|(s, d)| s.snapshot(&d.shape)).collect())
                .collect(),
        }
    }
}

/// The contents of every tensor on every rank at the end of a run. Equality is bitwise.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snapshot {
    names: Vec<String>,
    /// `[rank][tensor]`.
    ranks: Vec<Vec<HostTensor>>,
}

impl Snapshot {
    /// Tensor `name` on `rank`.
    pub fn get(&self, rank: u32, name: &str) -> Option<&HostTensor> {
        let t = self.names.iter().position(|n| n == name)?;
        self.ranks.get(rank as usize).map(|r| &r[t])
    }

    /// Tensor names, in declaration order.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Ranks the snapshot holds (the taskflow's `profile.ranks`).
    pub fn ranks(&self) -> u32 {
        self.ranks.len() as u32
    }

    /// The first tensor (rank-major, declaration order) whose bits differ, described; `None`
    /// when the snapshots are bitwise equal.
    pub fn first_difference(&self, other: &Snapshot) -> Option<String> {
        if self.names != other.names || self.ranks.len() != other.ranks.len() {
            return Some(format!(
                "different tensors: {:?} on {} ranks vs {:?} on {} ranks",
                self.names,
                self.ranks.len(),
                other.names,
                other.ranks.len()
            ));
        }
        for (rank, (a, b)) in self.ranks.iter().zip(&other.ranks).enumerate() {
            for ((name, x), y) in self.names.iter().zip(a).zip(b) {
                if let Some(d) = x.first_difference(y) {
                    return Some(format!("tensor `{name}` on rank {rank}: {d}"));
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hpmoe_core::limits::MAX_TENSOR_DIMS;

    fn extent(start: &[u32], len: &[u32]) -> Extent {
        let mut e = Extent { start: [0; MAX_TENSOR_DIMS], len: [0; MAX_TENSOR_DIMS], dims: start.len() as u8 };
        e.start[..start.len()].copy_from_slice(start);
        e.len[..len.len()].copy_from_slice(len);
        e
    }

    #[test]
    fn boxes_load_and_store_row_major() {
        let store = TensorStore::new(DType::I32, &[2, 3, 4], 24, 0);
        let all = extent(&[0, 0, 0], &[2, 3, 4]);
        store.store_box(&all, &(0..24).collect::<Vec<u32>>());
        // [1, 1..3, 2..4] → elements 12 + 4..12 at columns 2, 3.
        assert_eq!(store.load_box(&extent(&[1, 1, 2], &[1, 2, 2])), vec![18, 19, 22, 23]);
        store.store_box(&extent(&[0, 2, 0], &[2, 1, 1]), &[100, 200]);
        assert_eq!(store.load_box(&all)[8], 100);
        assert_eq!(store.load_box(&all)[20], 200);
        assert_eq!(store.snapshot(&[2, 3, 4]).bits()[8], 100);
    }

    #[test]
    fn inputs_prefer_the_rank_s_own_data() {
        let mut inputs = Inputs::new();
        let a = HostTensor::filled(DType::F32, &[1], 1.0);
        let b = HostTensor::filled(DType::F32, &[1], 2.0);
        inputs.set("x", a.clone()).set_rank("x", 1, b.clone());
        assert_eq!(inputs.get("x", 0), Some(&a));
        assert_eq!(inputs.get("x", 1), Some(&b));
        assert_eq!(inputs.get("y", 0), None);
    }
}
