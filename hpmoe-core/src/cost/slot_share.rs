//! The share of its work a tile with slot-sum ops (`matmul_tn_slots_accumulate`,
//! `matmul_tn_slots`) does in one run.
//!
//! The op sums the first `min(count, C)` rows of each of its `S` slots of `C` rows, so it reads
//! only those rows of `x` and `g`; its result (read and written once by the accumulating form,
//! written once by the writing form) and its counts do not shrink. The cost model prices it
//! statically at every slot full ([`crate::model::BuiltinOp`]'s spec: the `matmul_tn` of all of
//! `x`'s rows), the most it can do; for one run, each instance gets the share of those bytes it
//! moves: `(fixed + rows summed / (S·C) · (x + g)) / (fixed + x + g)`, with `fixed` the result's
//! read and write (its write alone for `matmul_tn_slots`) and the counts, over all its slot ops.
//! The bytes' share bounds the flops' share from above, so the instance is never priced below
//! what its reads need. (The simulator, the baseline and the bound charge overhead plus that share
//! of the rest: [`super::Activity::share`].)

use super::activity::ActivityError;
use crate::expand::{Extent, InstanceSpace, decode, eval_region};
use crate::ids::RankId;
use crate::model::{BuiltinOp, OpCall, OpSpec, Taskflow, TensorDecl, TileFamily};
use smallvec::SmallVec;

/// Per node, the share of its work the run's counts leave it; empty when the taskflow has no
/// slot sum. Counts are read through `value(rank, tensor, flat_index)`.
pub(super) fn evaluate(
    tf: &Taskflow,
    space: &InstanceSpace,
    value: &impl Fn(u32, &str, u64) -> Option<i64>,
) -> Result<Vec<f32>, ActivityError> {
    let mut share: Vec<f32> = Vec::new();
    for (fi, f) in tf.families.iter().enumerate() {
        let calls: Vec<_> = f
            .body
            .iter()
            .filter_map(|c| {
                let spec = tf.ops.get(&c.op)?;
                match spec.builtin()? {
                    BuiltinOp::MatmulTnSlotsAccumulate | BuiltinOp::MatmulTnSlots => Some((c, gradient_passes(spec))),
                    _ => None,
                }
            })
            .collect();
        if calls.is_empty() {
            continue;
        }
        if share.is_empty() {
            share = vec![1.0; space.len()];
        }
        let span = &space.families[fi];
        for rank in 0..space.ranks {
            for idx in 0..span.count {
                let at = Instance { tf, family: f, coords: decode(idx, &span.extents), rank, ranks: space.ranks };
                let (mut all, mut moved) = (0f64, 0f64);
                for &(call, grad_passes) in &calls {
                    let (call_all, call_moved) = at.slot_sum_bytes(call, grad_passes, value)?;
                    all += call_all;
                    moved += call_moved;
                }
                let node = space.node(RankId::new(rank), span.first + idx).index();
                share[node] = if all > 0.0 { (moved / all) as f32 } else { 1.0 };
            }
        }
    }
    Ok(share)
}

/// One instance of a family with slot sums, on one rank.
struct Instance<'a> {
    tf: &'a Taskflow,
    family: &'a TileFamily,
    coords: SmallVec<[u64; 4]>,
    rank: u32,
    ranks: u32,
}

impl<'a> Instance<'a> {
    /// The instance's name, for errors.
    fn name(&self) -> String {
        format!("{} on rank {}", self.family.instance_name(&self.coords), self.rank)
    }

    /// Argument `i` of `call` at this instance: its declaration, extent and bytes.
    fn arg(&self, call: &OpCall, i: usize) -> Result<(&'a TensorDecl, Extent, f64), ActivityError> {
        let region = &call.args[i];
        let decl = self.tf.tensor(&region.tensor).ok_or_else(|| ActivityError::UnknownTensor {
            tile: self.family.name.clone(),
            tensor: region.tensor.clone(),
        })?;
        let (_, ext) = eval_region(region, &decl.shape, &self.coords, self.rank, self.ranks)
            .map_err(|fault| ActivityError::Count { instance: self.name(), fault })?;
        Ok((decl, ext, ext.volume() as f64 * decl.dtype.size_bytes() as f64))
    }

    /// The bytes one slot sum moves with every slot full, and those it moves with the run's
    /// counts: `(fixed + x + g, fixed + fraction summed · (x + g))`.
    fn slot_sum_bytes(
        &self,
        call: &OpCall,
        grad_passes: f64,
        value: &impl Fn(u32, &str, u64) -> Option<i64>,
    ) -> Result<(f64, f64), ActivityError> {
        let (_, x_ext, x) = self.arg(call, 0)?;
        let (_, _, g) = self.arg(call, 1)?;
        let (_, _, grad) = self.arg(call, 2)?;
        let (counts_decl, counts_ext, counts) = self.arg(call, 3)?;
        let dims = counts_ext.dims as usize;
        let slots = counts_ext.volume();
        // Rows of `x`: every dimension but the last.
        let rows = (0..(x_ext.dims as usize).saturating_sub(1)).map(|k| u64::from(x_ext.len[k])).product::<u64>();
        let slot_rows = rows / slots.max(1);
        let mut summed = 0u64;
        for s in 0..slots {
            // Element `s` of the counts' box, row-major.
            let at = decode(s as u32, &counts_ext.len[..dims]);
            let count = value(self.rank, &counts_decl.name, counts_ext.flat_index(&counts_decl.shape, &at))
                .ok_or_else(|| ActivityError::NoValue {
                    instance: self.name(),
                    tensor: counts_decl.name.clone(),
                    extent: counts_ext,
                })?;
            summed += u64::try_from(count).unwrap_or(0).min(slot_rows);
        }
        let fraction = if rows == 0 { 1.0 } else { summed as f64 / (slots.max(1) * slot_rows).max(1) as f64 };
        let fixed = grad_passes * grad + counts;
        Ok((fixed + x + g, fixed + fraction * (x + g)))
    }
}

/// How many times a slot sum moves its gradient (argument 2), as its spec declares the access:
/// read and written by the accumulating form (two passes), written by the writing form (one),
/// as [`super::traffic`] prices the same argument.
fn gradient_passes(spec: &OpSpec) -> f64 {
    spec.params.get(2).map_or(0.0, |p| f64::from(u8::from(p.access.reads()) + u8::from(p.access.writes())))
}

#[cfg(test)]
mod tests {
    use crate::cost::Activity;
    use crate::expand::InstanceSpace;
    use crate::ids::NodeId;
    use crate::model::{CoreKind, DType, MachineProfile, Taskflow};

    /// Two slot sums (grid `e`) over 2 slots of 4 rows, `x` `[8, 16]` and `g` `[8, 32]` bf16
    /// (768 bytes), `grad` `[16, 32]` f32 (2048 bytes) read and written by the accumulating form,
    /// written by the writing form, counts 8 bytes: with counts (4, 4) the share is 1, with
    /// (2, 0) a quarter of `x` and `g`, with (9, -1) half.
    #[test]
    fn the_share_counts_the_rows_summed_and_the_gradient_in_full() {
        for (op, grad_passes) in [("matmul_tn_slots_accumulate", 2.0), ("matmul_tn_slots", 1.0)] {
            let mut tf = Taskflow::new("slots", MachineProfile::small(1, 1));
            let x = tf.input("x", DType::Bf16, &[2, 8, 16]);
            let g = tf.input("g", DType::Bf16, &[2, 8, 32]);
            let counts = tf.input("counts", DType::I32, &[2, 2]);
            let grad = tf.output("grad", DType::F32, &[2, 16, 32]);
            tf.tile("sum", CoreKind::Aic, |t| {
                let e = t.grid("e", 2);
                t.op(op, [x.at(e.clone()), g.at(e.clone()), grad.at(e.clone()), counts.slice(0, 2).slice(e, 1)]);
            });
            let space = InstanceSpace::of(&tf).unwrap();
            // counts[s, e]: expert 0 gets (4, 4), expert 1 (2, 0) or (9, -1).
            for (second, want) in [([2i64, 0], 0.25), ([9, -1], 0.5)] {
                let values = [4, second[0], 4, second[1]];
                let run = Activity::evaluate(&tf, &space, |_, _, i| values.get(i as usize).copied()).unwrap();
                assert_eq!(run.share(NodeId::from_index(0)), 1.0);
                let (fixed, rows) = (grad_passes * 2048.0 + 8.0, 768.0);
                let expected = ((fixed + want * rows) / (fixed + rows)) as f32;
                assert_eq!(run.share(NodeId::from_index(1)), expected, "{op}, counts {second:?}");
            }
        }
    }
}
