//! Ordering inside one AIC tile: an op that reads global memory an earlier op of the same tile
//! wrote.
//!
//! The Matmul API writes its result on the FIX pipe and reads its operands on MTE2, and nothing
//! orders the two on one core (the vector side's ops end with a barrier of their own, and
//! consecutive tiles of a core are ordered by the barrier before each tile's signals). So where
//! an AIC op reads a tensor an earlier op of its tile wrote, the kernel puts
//! `hpmoe::CubeWritesDone()` (`hpmoe/cube_ops.h`) between them. Overlap is judged by tensor, not
//! by region: a barrier too many costs a pipe drain, one too few a wrong answer.

use hpmoe_core::model::{Access, BuiltinOp, OpCall, OpSpec};

/// Tracks the tensors the ops of one AIC tile have written so far.
#[derive(Debug, Default)]
pub struct CubeWrites {
    written: Vec<String>,
}

impl CubeWrites {
    /// The barrier statement to put before `call`, if it reads a tensor an earlier op of the
    /// tile wrote; then records what `call` writes.
    pub fn before(&mut self, spec: &OpSpec, call: &OpCall) -> Option<String> {
        let dma_read = |access: Access| match access {
            Access::Read => true,
            Access::ReadWrite => spec.builtin().is_none_or(dma_reads_in_place),
            Access::Write => false,
        };
        let stale = spec
            .params
            .iter()
            .zip(&call.args)
            .find(|(p, r)| dma_read(p.access) && self.written.contains(&r.tensor))
            .map(|(_, r)| r.tensor.clone());
        if stale.is_some() {
            // The barrier completes every write issued so far.
            self.written.clear();
        }
        for (p, r) in spec.params.iter().zip(&call.args) {
            if p.access.writes() && !self.written.contains(&r.tensor) {
                self.written.push(r.tensor.clone());
            }
        }
        stale.map(|t| {
            format!(
                "// `{t}` was written by an earlier op of this tile: its write must complete before this read\n\
                 hpmoe::CubeWritesDone();"
            )
        })
    }
}

/// Whether built-in `op` may read its in-place argument by DMA (a user op may). Not
/// `matmul_accumulate`: its `c` is read by the FIX pipe's atomic add, in order with the FIX pipe's
/// earlier writes. `matmul_tn_accumulate` and `matmul_tn_slots_accumulate` add the same way but
/// are counted as DMA reads (a barrier too many at worst). Matched
/// exhaustively: a new built-in does not compile until it is decided here.
fn dma_reads_in_place(op: BuiltinOp) -> bool {
    match op {
        BuiltinOp::MatmulAccumulate => false,
        BuiltinOp::MatmulTnAccumulate
        | BuiltinOp::MatmulTnSlotsAccumulate
        | BuiltinOp::MatmulTnSlots
        | BuiltinOp::Matmul
        | BuiltinOp::MatmulNt
        | BuiltinOp::MatmulTn
        | BuiltinOp::Put
        | BuiltinOp::Copy
        | BuiltinOp::Swiglu
        | BuiltinOp::ScaleRows
        | BuiltinOp::Accumulate
        | BuiltinOp::WeightedAccumulate
        | BuiltinOp::GatherWeightedAccumulate
        | BuiltinOp::Quantize
        | BuiltinOp::Dequantize
        | BuiltinOp::Cast
        | BuiltinOp::Zero
        | BuiltinOp::SwigluBackward
        | BuiltinOp::ScaleRowsRepeat
        | BuiltinOp::RowDotTopk
        | BuiltinOp::SumTopk
        | BuiltinOp::GatherScaleRowsRepeat
        | BuiltinOp::GatherRowDotTopk
        | BuiltinOp::GatherSumTopk => true,
        // Reads nothing: it only orders.
        BuiltinOp::Fence => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hpmoe_core::model::{CoreKind, DType, MachineProfile, Taskflow};

    #[test]
    fn a_barrier_only_where_a_tile_reads_what_it_wrote() {
        let mut tf = Taskflow::new("t", MachineProfile::small(1, 1));
        let x = tf.input("x", DType::F32, &[16, 16]);
        let h = tf.scratch("h", DType::F32, &[16, 16]);
        let y = tf.output("y", DType::F32, &[16, 16]);
        tf.tile("mm", CoreKind::Aic, |t| {
            t.op("matmul", [x.whole(), x.whole(), h.whole()]);
            t.op("matmul_accumulate", [x.whole(), x.whole(), h.whole()]);
            t.op("matmul", [h.whole(), x.whole(), y.whole()]);
            t.op("matmul", [x.whole(), h.whole(), y.whole()]);
        });
        let mut writes = CubeWrites::default();
        let barriers: Vec<bool> = tf.families[0]
            .body
            .iter()
            .map(|call| writes.before(tf.ops.get(&call.op).unwrap(), call).is_some())
            .collect();
        // The atomic add into `h` needs none (FIX after FIX); the first read of `h` does; the
        // second read of `h` does not: the barrier completed `h`'s writes and nothing wrote it since.
        assert_eq!(barriers, [false, false, true, false]);
    }
}
