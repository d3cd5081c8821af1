//! Memory traffic of one tile instance, split by where the bytes are expected to come from.
//!
//! [`crate::expand::Work`] totals the bytes a tile touches; the cost model needs to know
//! which of them come from HBM and which may be served by L2, and which are a put's source
//! streamed into the link. This module derives that from the taskflow's regions:
//!
//! - **Re-reads.** If an operand region does not depend on some grid index, the instances
//!   that differ only in that index read the same bytes: the first read of each distinct
//!   region is charged where its data lives, the others are *L2-eligible*. (A GMM tile's
//!   weight block is read by every row block of its expert; its activation block by every
//!   column block.) The reuse factor is the product of the extents of the grid indices the
//!   region does not mention.
//! - **Where data lives.** Inputs and symmetric tensors (written by puts, landing from the
//!   network) are *cold*: first reads come from HBM. Scratch and output tensors are written
//!   by this rank's own tiles earlier in the kernel, so their first reads are L2-eligible.
//! - **Puts.** An op call with a remote destination is a put: its local reads are the
//!   stream that feeds the link, kept apart from the other ops' reads.
//!
//! The profile's `l2_hit_rate` then says what fraction of L2-eligible bytes hit. Regions
//! that over-approximate a run-time gather (a tile that may read any row of a tensor, but
//! reads only a few) cannot be judged from the regions; give such a family its real
//! traffic with [`super::TaskflowCost::with_traffic`].

use crate::model::{RankSel, Region, Taskflow, TensorKind, Var, WorkModel};
use serde::{Deserialize, Serialize};

/// Bytes read by one instance: cold ones (from HBM) and L2-eligible ones.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reads {
    /// Bytes whose first read comes from HBM (inputs, data landed by puts).
    pub cold_bytes: u64,
    /// Bytes that L2 may serve (re-reads, data written earlier on this rank).
    pub warm_bytes: u64,
}

impl Reads {
    /// Total bytes read.
    pub fn total(&self) -> u64 {
        self.cold_bytes.saturating_add(self.warm_bytes)
    }

    fn add(&mut self, other: Reads) {
        self.cold_bytes = self.cold_bytes.saturating_add(other.cold_bytes);
        self.warm_bytes = self.warm_bytes.saturating_add(other.warm_bytes);
    }
}

/// What one instance of a family does, for the cost model.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FamilyTraffic {
    /// Operations (2·M·N·K for a matmul, flops per element × elements for vector ops).
    pub flops: u64,
    /// Local reads of the ops that are not puts.
    pub reads: Reads,
    /// Local writes (a read-write argument is both read and written).
    pub write_bytes: u64,
    /// Local reads of puts: the source streamed into the link.
    pub put_reads: Reads,
    /// Bytes written into another rank's memory.
    pub remote_bytes: u64,
}

/// The traffic of every family of `tf`, in declaration order.
///
/// Works on an unchecked taskflow: arguments naming unknown tensors or ops are skipped
/// (the checks report them before anything is scheduled).
pub fn family_traffic(tf: &Taskflow) -> Vec<FamilyTraffic> {
    tf.families.iter().map(|f| one_family(tf, f)).collect()
}

fn one_family(tf: &Taskflow, f: &crate::model::TileFamily) -> FamilyTraffic {
    let extents: Vec<u64> = f.grid.iter().map(|d| d.extent).collect();
    let mut t = FamilyTraffic::default();
    for call in &f.body {
        let Some(spec) = tf.ops.get(&call.op) else { continue };
        if spec.work == WorkModel::Order {
            continue; // orders only: no bytes, no flops
        }
        let is_put = call.args.iter().any(Region::is_remote);
        // (elements, bytes) of each argument; None if its tensor is unknown.
        let arg_dims: Vec<Option<(Vec<u64>, u64)>> = call
            .args
            .iter()
            .map(|region| {
                let decl = tf.tensor(&region.tensor)?;
                let dims = decl.shape.iter().enumerate().map(|(k, &e)| region.dims.get(k).map_or(e, |d| d.len));
                Some((dims.collect(), decl.dtype.size_bytes()))
            })
            .collect();
        let mut sizes: Vec<Option<(u64, u64)>> = arg_dims
            .iter()
            .map(|a| {
                let (dims, size) = a.as_ref()?;
                let elems = dims.iter().fold(1u64, |acc, &e| acc.saturating_mul(e));
                Some((elems, elems.saturating_mul(*size)))
            })
            .collect();
        // A gather reads only the rows its indices pick out of the table it names.
        if let (WorkModel::Gather { .. }, Some(Some((table, size))), Some(Some((index, _)))) =
            (spec.work, arg_dims.first(), arg_dims.get(1))
        {
            let picked = crate::expand::gathered(&[(table, *size), (index, 0)]);
            sizes[0] = Some((picked.elements, picked.bytes));
        }
        t.flops = t.flops.saturating_add(op_flops(spec.work, &sizes, call, tf));
        for (i, region) in call.args.iter().enumerate() {
            let (Some((_, bytes)), Some(param), Some(decl)) = (sizes[i], spec.params.get(i), tf.tensor(&region.tensor))
            else {
                continue;
            };
            if region.is_remote() {
                t.remote_bytes = t.remote_bytes.saturating_add(bytes);
                continue;
            }
            if param.access.reads() {
                // Each instance picks its own rows of a gathered table: no re-reads to count.
                let gathered_table = i == 0 && matches!(spec.work, WorkModel::Gather { .. });
                let reuse = if gathered_table { 1 } else { reuse_factor(region, &extents) };
                let reads = split_read(bytes, reuse, decl.kind);
                if is_put { t.put_reads.add(reads) } else { t.reads.add(reads) }
            }
            if param.access.writes() {
                t.write_bytes = t.write_bytes.saturating_add(bytes);
            }
        }
    }
    t
}

/// Flops of one op call, as [`crate::expand`] counts them.
fn op_flops(work: WorkModel, sizes: &[Option<(u64, u64)>], call: &crate::model::OpCall, tf: &Taskflow) -> u64 {
    match work {
        WorkModel::Matmul | WorkModel::MatmulNt | WorkModel::MatmulTn if sizes.len() >= 3 => {
            let extents = |i: usize| {
                let region = &call.args[i];
                let decl = tf.tensor(&region.tensor)?;
                Some(
                    decl.shape
                        .iter()
                        .enumerate()
                        .map(|(k, &e)| region.dims.get(k).map_or(e, |s| s.len))
                        .collect::<Vec<u64>>(),
                )
            };
            let (Some(a), Some(c)) = (extents(0), extents(2)) else { return 0 };
            work.matmul_dims(&a, &c).map_or(0, |d| 2u64.saturating_mul(d.m).saturating_mul(d.n).saturating_mul(d.k))
        }
        WorkModel::Matmul | WorkModel::MatmulNt | WorkModel::MatmulTn | WorkModel::Copy | WorkModel::Order => 0,
        WorkModel::Gather { flops_per_element } => {
            sizes.first().copied().flatten().map_or(0, |s| s.0).saturating_mul(u64::from(flops_per_element))
        }
        WorkModel::Vector { flops_per_element } => {
            let most = sizes.iter().flatten().map(|s| s.0).max().unwrap_or(0);
            most.saturating_mul(u64::from(flops_per_element))
        }
    }
}

/// How many instances read each distinct copy of `region`: the product of the extents of
/// the grid indices the region's bounds (and rank) do not mention.
pub fn reuse_factor(region: &Region, extents: &[u64]) -> u64 {
    let mut mentioned = vec![false; extents.len()];
    let mut mark = |a: &crate::model::Affine| {
        for v in a.vars() {
            if let Var::Index(i) = v
                && let Some(m) = mentioned.get_mut(i as usize)
            {
                *m = true;
            }
        }
    };
    for d in &region.dims {
        mark(&d.start);
    }
    if let RankSel::Remote(a) = &region.rank {
        mark(a);
    }
    extents.iter().zip(&mentioned).filter(|(_, m)| !**m).map(|(&e, _)| e.max(1)).fold(1u64, u64::saturating_mul)
}

/// Splits the bytes one instance reads into cold and L2-eligible parts.
fn split_read(bytes: u64, reuse: u64, kind: TensorKind) -> Reads {
    let first = bytes.div_ceil(reuse.max(1));
    let rereads = bytes - first;
    match kind {
        TensorKind::Input | TensorKind::Symmetric => Reads { cold_bytes: first, warm_bytes: rereads },
        TensorKind::Scratch | TensorKind::Output => Reads { cold_bytes: 0, warm_bytes: bytes },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Affine, CoreKind, DType, MachineProfile};

    #[test]
    fn matmul_operands_are_reused_across_the_indices_they_do_not_mention() {
        let mut tf = Taskflow::new("mm", MachineProfile::small(1, 1));
        let a = tf.input("a", DType::Bf16, &[64, 32]);
        let w = tf.input("w", DType::Bf16, &[32, 48]);
        let h = tf.scratch("h", DType::Bf16, &[64, 48]);
        let o = tf.output("o", DType::F32, &[64, 48]);
        tf.tile("mm", CoreKind::Aic, |t| {
            let m = t.grid("m", 4);
            let n = t.grid("n", 3);
            let c = h.slice(m.clone() * 16, 16).slice(n.clone() * 16, 16);
            t.op("matmul", [a.slice(m * 16, 16), w.whole().all(32).slice(n * 16, 16), c]);
        });
        tf.tile("cast", CoreKind::Aiv, |t| {
            let m = t.grid("m", 4);
            t.op("cast", [h.slice(m.clone() * 16, 16), o.slice(m * 16, 16)]);
        });
        let traffic = family_traffic(&tf);
        // a block: 16×32×2 = 1024 B, read by the 3 column blocks: 342 cold, 682 warm.
        // w block: 32×16×2 = 1024 B, read by the 4 row blocks: 256 cold, 768 warm.
        // h block written: 16×16×2 = 512 B.
        assert_eq!(
            traffic[0],
            FamilyTraffic {
                flops: 2 * 16 * 16 * 32,
                reads: Reads { cold_bytes: 342 + 256, warm_bytes: 682 + 768 },
                write_bytes: 512,
                ..FamilyTraffic::default()
            }
        );
        // Scratch written on this rank: every byte L2-eligible. Writes: 16×48×4.
        assert_eq!(traffic[1].reads, Reads { cold_bytes: 0, warm_bytes: 1536 });
        assert_eq!(traffic[1].write_bytes, 16 * 48 * 4);
        assert_eq!(traffic[1].flops, 16 * 48);
    }

    #[test]
    fn a_gather_reads_only_the_rows_its_indices_pick() {
        let mut tf = Taskflow::new("g", MachineProfile::small(1, 1));
        let table = tf.input("table", DType::Bf16, &[64, 32]);
        let index = tf.input("index", DType::I32, &[8, 2]);
        let weight = tf.input("weight", DType::F32, &[8, 2]);
        let out = tf.output("out", DType::Bf16, &[8, 32]);
        tf.tile("sum", CoreKind::Aiv, |t| {
            let i = t.grid("i", 2);
            let rows = |r: &crate::model::TensorRef| r.slice(i.clone() * 4, 4);
            t.op("zero", [rows(&out)]);
            t.op("gather_weighted_accumulate", [table.whole(), rows(&index), rows(&weight), rows(&out)]);
        });
        let traffic = family_traffic(&tf)[0];
        // 4 tokens x 2 choices = 8 rows of 32 bf16 (512 B), each tile its own: all cold.
        // index 32 B + weight 32 B cold; out 256 B read (warm) and written twice (zero, sum).
        assert_eq!(traffic.reads, Reads { cold_bytes: 512 + 32 + 32, warm_bytes: 256 });
        assert_eq!(traffic.write_bytes, 2 * 256);
        assert_eq!(traffic.flops, 2 * 8 * 32);
        let e = crate::analyse(&tf).unwrap();
        assert_eq!(e.family_work[0].flops, 2 * 8 * 32);
        assert_eq!(e.family_work[0].bytes, 256 + 512 + 32 + 32 + 256);
    }

    #[test]
    fn reuse_counts_the_rank_of_a_remote_region() {
        let region = Region::whole("x").slice(Affine::index(1), 1).on(Affine::index(0));
        assert_eq!(reuse_factor(&region, &[4, 5, 6]), 6);
        assert_eq!(reuse_factor(&Region::whole("x"), &[4, 5]), 20);
        assert_eq!(reuse_factor(&Region::whole("x"), &[]), 1);
    }

    #[test]
    fn unknown_names_are_skipped() {
        let mut tf = Taskflow::new("bad", MachineProfile::small(1, 1));
        tf.tile("t", CoreKind::Aiv, |t| {
            t.op("nope", [Region::whole("x")]);
            t.op("copy", [Region::whole("x"), Region::whole("y")]);
        });
        assert_eq!(family_traffic(&tf), vec![FamilyTraffic::default()]);
    }
}
