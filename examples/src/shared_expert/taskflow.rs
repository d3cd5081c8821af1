//! The variant's taskflow: the routed layer's, with its weighted sum replaced by the shared
//! expert's families and the fused final sum (see the [module docs](super)).

use super::{SharedMoe, op};
use crate::ExampleError;
use hpmoe_core::model::{CoreKind, DType, Taskflow, TensorRef};

/// The family of [`hpmoe_host::moe::MoeShape::taskflow`] this variant replaces.
const ROUTED_SUM: &str = "weighted_sum";

/// The families the shared expert adds, in declaration order (the final sum last).
pub const SHARED_FAMILIES: [&str; 3] = ["shared_gmm1", "shared_swiglu", "shared_gmm2"];

/// The family that joins the routed and shared paths.
pub const FINAL_SUM: &str = "weighted_sum_shared";

/// A tensor the routed layer declared.
fn declared(tf: &Taskflow, name: &str) -> Result<TensorRef, ExampleError> {
    match tf.tensor(name) {
        Some(t) => Ok(TensorRef { name: t.name.clone() }),
        None => Err(ExampleError::MissingPart { part: "tensor", name: name.into() }),
    }
}

impl SharedMoe {
    /// The taskflow, named `moe_ffn_shared`.
    pub fn taskflow(&self) -> Result<Taskflow, ExampleError> {
        self.validate()?;
        let mut tf = self.routed.taskflow().map_err(ExampleError::Shape)?;
        tf.name = "moe_ffn_shared".into();
        match tf.families.pop() {
            Some(f) if f.name == ROUTED_SUM => {}
            other => {
                let found = other.map(|f| f.name);
                return Err(ExampleError::UnexpectedLastFamily { expected: ROUTED_SUM, found });
            }
        }
        tf.ops.register(op::spec()).map_err(ExampleError::DuplicateOp)?;

        let (t, h, k) = (self.routed.tokens_per_rank, self.routed.hidden, self.routed.top_k);
        let sum_rows = self.routed.sum_rows;
        let (i, b, n1, n2) =
            (self.shared.intermediate, self.shared.row_block, self.shared.gmm1_cols, self.shared.gmm2_cols);
        let (back, weights, out) = (declared(&tf, "back")?, declared(&tf, "topk_weights")?, declared(&tf, "out")?);
        let bf = DType::Bf16;
        let x = tf.input("x", bf, &[t, h]);
        let w13 = tf.input("shared_w13", bf, &[h, 2 * i]);
        let w2 = tf.input("shared_w2", bf, &[i, h]);
        let hbuf = tf.scratch("shared_h", bf, &[t, 2 * i]);
        let act = tf.scratch("shared_act", bf, &[t, i]);
        let ybuf = tf.scratch("shared_y", bf, &[t, h]);

        tf.tile(SHARED_FAMILIES[0], CoreKind::Aic, |tb| {
            let m = tb.grid("m", t / b);
            let n = tb.grid("n", 2 * i / n1);
            tb.op(
                "matmul",
                [
                    x.slice(m.clone() * b as i64, b),
                    w13.whole().all(h).slice(n.clone() * n1 as i64, n1),
                    hbuf.slice(m * b as i64, b).slice(n * n1 as i64, n1),
                ],
            );
        });
        tf.tile(SHARED_FAMILIES[1], CoreKind::Aiv, |tb| {
            let m = tb.grid("m", t / b);
            let n = tb.grid("n", 2 * i / n1);
            tb.op(
                "swiglu",
                [
                    hbuf.slice(m.clone() * b as i64, b).slice(n.clone() * n1 as i64, n1),
                    act.slice(m * b as i64, b).slice(n * (n1 / 2) as i64, n1 / 2),
                ],
            );
        });
        tf.tile(SHARED_FAMILIES[2], CoreKind::Aic, |tb| {
            let m = tb.grid("m", t / b);
            let n = tb.grid("n", h / n2);
            tb.op(
                "matmul",
                [
                    act.slice(m.clone() * b as i64, b),
                    w2.whole().all(i).slice(n.clone() * n2 as i64, n2),
                    ybuf.slice(m * b as i64, b).slice(n * n2 as i64, n2),
                ],
            );
        });
        tf.tile(FINAL_SUM, CoreKind::Aiv, |tb| {
            let blk = tb.grid("t", t / sum_rows);
            // Token t's top-k rows are slots t·k .. t·k + k of `back`, in choice order.
            tb.op(
                op::OP_NAME,
                [
                    back.slice(blk.clone() * (sum_rows * k) as i64, sum_rows * k),
                    weights.slice(blk.clone() * sum_rows as i64, sum_rows),
                    ybuf.slice(blk.clone() * sum_rows as i64, sum_rows),
                    out.slice(blk * sum_rows as i64, sum_rows),
                ],
            );
        });
        Ok(tf)
    }
}
