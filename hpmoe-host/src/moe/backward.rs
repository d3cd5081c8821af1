//! The backward of the MoE-FFN layer, alone or after its forward as one training step.
//!
//! Given the output gradient `dout` (BF16 `[T, H]` per rank) and what the forward saved —
//! `recv` (the dispatched rows `X`), `h` (GMM1's `[g | u]`), `act` (SwiGLU's output `A`) and
//! `back` (the expert outputs `Y` in send-slot order) — the backward computes, on balanced
//! routing (the layout of [`crate::moe`], `S` rows per source, `B` per block, `M = R·S/B`
//! blocks per expert; natural routing and INT8 dispatch below):
//!
//! | family | core | grid | what |
//! |---|---|---|---|
//! | `scale_dout` | AIV | token block | `dback[t·k + c] = w[t, c] · dout[t]` (`scale_rows_repeat`) |
//! | `combine_bwd` | AIV | `(dst, e, b)` | put `dback`'s rows to `dy` on the rank owning their expert: the reverse of the combine |
//! | `weights_grad` | AIV | token block | `d_weights[t, c] = dout[t] · back[t·k + c]` (`row_dot_topk`) |
//! | `gmm2_dgrad` | AIC | `(e, m, n)` | `dA = dY · W2ᵀ` (`matmul_nt`), columns of SwiGLU's blocks |
//! | `gmm2_wgrad` | AIC | `(e, p, n)` | `dW2 = Aᵀ · dY` over the first `W` rows (`matmul_tn`) |
//! | `gmm2_wgrad_acc` | AIC | `(e, m, p, n)` | `dW2 += Aᵀ · dY` over rows `(m + 1)·W ..` (`matmul_tn_accumulate`), chained over `m` |
//! | `swiglu_bwd` | AIV | `(e, m, n)` | `dH` from `h` and `dA`, `σ(g)` recomputed (`swiglu_backward`) |
//! | `gmm1_dgrad` | AIC | `(e, m, n)` | `dXᵣ = dH · W13ᵀ` (`matmul_nt`) |
//! | `gmm1_wgrad` | AIC | `(e, p, n)` | `dW13 = Xᵀ · dH` over the first `W` rows (`matmul_tn`) |
//! | `gmm1_wgrad_acc` | AIC | `(e, m, p, n)` | `dW13 += Xᵀ · dH` over rows `(m + 1)·W ..` (`matmul_tn_accumulate`), chained over `m` |
//! | `dispatch_bwd` | AIV | `(src, e, b)` | put `dXᵣ`'s rows back to their send slot on the source rank (`dxs`) |
//! | `sum_bwd` | AIV | token block | `dx[t] = Σ_c dxs[t·k + c]`, `c` ascending (`sum_topk`) |
//!
//! Every tile waits only for the rows it reads: a data-gradient GMM tile for the one block of
//! `dy` (or the SwiGLU tiles of its block), a weight-gradient tile for the `W` =
//! [`MoeShape::wgrad_rows`] rows it sums. A weight gradient is a sum over an expert's `R·S/W`
//! row groups: the first group's product is written (no zeroing pass), each later group's
//! added by `*_acc`, whose instance `(e, m, p, n)` runs after `(e, m − 1, p, n)`
//! (`after(gmm2_wgrad_acc(e, m - 1, p, n))`; the first waits for the write, a family declared
//! before it), so every run sums the groups in one order and the gradients are bitwise
//! reproducible (ordered accumulation). The order is [`MoeShape::wgrad_group`]'s: when a group
//! is `q` whole source ranks' rows, the order the rows arrive in — the group below the rank's
//! own first, its own last, a rotated slice start `(RANK / q + G − 1 − m) % G · W` (an index
//! with a quotient and a remainder as parts, [`hpmoe_core::model::Part`]) — otherwise row
//! order. (`*_acc` exists only when an expert has more than one group.)
//! [`crate::exec::moe_backward_reference`] computes the same gradients with plain loops, in
//! the same order.
//!
//! How many rows a weight-gradient tile sums is a trade: with `W = B` (the tiny shapes) the
//! first blocks to land feed weight-gradient tiles while later blocks are still in flight,
//! but every block reads and writes the expert's whole F32 gradient column block again
//! (`R·S/B` times); with `W = R·S` ([`MoeShape::with_whole_expert_wgrad`], the DeepSeek-V3
//! shapes) each gradient is written once and an expert's weight-gradient tiles wait for all
//! its rows, interleaving with other experts' data-gradient tiles on the AICs instead. In
//! between, [`MoeShape::with_wgrad_groups`] (two groups: the first can start once half the
//! sources' rows are in, for one more F32 read and write of each gradient).
//!
//! # Natural routing
//!
//! Under [`Routing::Natural`] a token's rows sit wherever the routing put them and a slot's
//! rows past its run-time count were never sent. The families keep their names; what changes:
//! `scale_dout` runs per send block `(dst, e, b)`, guarded by `send_counts` like the forward's
//! dispatch, and fills each slot row from the choice it carries (`gather_scale_rows_repeat` by
//! the input `choice_of` `[R·E·C]`, the inverse of `slot_of`; padding rows get zeros);
//! `combine_bwd`, `gmm2_dgrad`, `swiglu_bwd`, `gmm1_dgrad` and `dispatch_bwd` are guarded per
//! block by the counts, on the forward's `(e, src, b)` blocks; `weights_grad` and `sum_bwd`
//! gather by `slot_of` (`gather_row_dot_topk`, `gather_sum_topk`; with [`MoeShape::with_relay`],
//! `sum_bwd` after `relay_bwd`, a `fence` on `dxs` that waits for every `dispatch_bwd` put landing
//! on its rank, as the forward's `relay` does for the weighted sums); the weight gradients are
//! summed by a chain of tiles per expert and column block: `gmm*_wgrad` (grid `(e, n)`)
//! writes the sum over the slots of the first group's source ranks to their counts in
//! `recv_counts` (`matmul_tn_slots`), once those rows are in, and `gmm*_wgrad_acc` (grid `(e,
//! m, n)`, with more than one group) adds group `m + 1`'s (`matmul_tn_slots_accumulate`) after
//! link `m − 1`; [`MoeShape::wgrad_source_groups`] groups in arrival order, see
//! `add_natural_weight_gradient`, [`MoeShape::wgrad_rows`] unused. The backward
//! alone takes `send_counts`, `slot_of` and `recv_counts` (the forward's announced counts) as
//! inputs besides the saved tensors.
//!
//! # INT8 dispatch
//!
//! GMM1 multiplied the dequantised rows `xin`, so `dW13 = Xᵀ·dH` reads those: the backward
//! alone takes `xin` ([`MoeShape::gmm1_input_name`]) as its saved input instead of `recv`, the
//! training step reads the forward's own.
//!
//! [`Pass::TrainingStep`] declares the forward and then the backward in one taskflow: the
//! backward reads the forward's own `recv`, `h`, `act` and `back`, so each backward tile waits
//! for the forward tiles that wrote its rows, and one schedule covers both. `dout` stays an
//! input, but in a model it is computed from `out` (by the layers after this one), so the
//! step's backward starts on a rank only once that rank's forward output is complete:
//! `scale_dout` and `weights_grad` (the output gradient's two readers) run
//! `after(weighted_sum(*))`. What overlaps is the forward's tail on some ranks and cores with the
//! backward's head on others, under one schedule.

use super::{MoeShape, Routing, ShapeError, ShapeRule};
use hpmoe_core::model::{Affine, CoreKind, DType, IndexSel, Taskflow, TensorRef, TileBuilder};
use wgrad::{WeightGradient, wgrad_row_block};

mod wgrad;

/// Which computation of the layer a taskflow holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Pass {
    /// The forward layer ([`MoeShape::taskflow`]).
    Forward,
    /// The backward alone: the forward's saved activations and `dout` are inputs.
    Backward,
    /// The forward, then the backward reading the activations the forward wrote.
    TrainingStep,
}

impl Pass {
    /// Every pass, forward first.
    pub const ALL: [Pass; 3] = [Pass::Forward, Pass::Backward, Pass::TrainingStep];

    /// Its name in taskflow names and reports (`forward`, `backward`, `training_step`).
    pub fn name(self) -> &'static str {
        match self {
            Pass::Forward => "forward",
            Pass::Backward => "backward",
            Pass::TrainingStep => "training_step",
        }
    }
}

/// The forward's tensors the backward reads.
pub(super) struct LayerTensors {
    pub w13: TensorRef,
    pub w2: TensorRef,
    pub weights: TensorRef,
    /// The rows GMM1 multiplied: `recv` under BF16 dispatch, the dequantised `xin` under INT8.
    pub recv: TensorRef,
    pub h: TensorRef,
    pub act: TensorRef,
    pub back: TensorRef,
    /// Natural routing's run-time layout.
    pub natural: Option<NaturalTensors>,
}

/// The run-time routing of a naturally routed layer: `send_counts` `[R·E]` and `slot_of`
/// `[T, k]` (inputs of the forward) and `recv_counts` `[R, E]` (announced by the forward).
pub(super) struct NaturalTensors {
    pub send_counts: TensorRef,
    pub slot_of: TensorRef,
    pub recv_counts: TensorRef,
}

impl MoeShape {
    /// The taskflow of `pass`.
    ///
    /// # Errors
    /// If the shape is invalid, or (backward and training step) under balanced routing its
    /// `wgrad_rows` does not divide the rows per expert or its row block is not a multiple of
    /// `top_k`, under natural routing its `wgrad_source_groups` does not divide the ranks.
    pub fn pass_taskflow(&self, pass: Pass) -> Result<Taskflow, ShapeError> {
        match pass {
            Pass::Forward => self.taskflow(),
            Pass::Backward => self.backward_taskflow(),
            Pass::TrainingStep => self.training_step_taskflow(),
        }
    }

    /// The backward layer alone (module docs): inputs `w13`, `w2`, `topk_weights`, the saved
    /// `recv`, `h`, `act`, `back` (shaped as the forward's) and `dout`; outputs `dx` (BF16
    /// `[T, H]`), `dw13` (F32 `[E, H, 2I]`), `dw2` (F32 `[E, I, H]`), `d_weights` (F32 `[T, k]`).
    ///
    /// # Errors
    /// As [`MoeShape::pass_taskflow`].
    pub fn backward_taskflow(&self) -> Result<Taskflow, ShapeError> {
        self.validate_backward()?;
        let mut tf = self.empty_taskflow("moe_ffn_backward");
        let (r, e, c, t, k) =
            (u64::from(self.ranks), self.local_experts(), self.slot_rows(), self.tokens_per_rank, self.top_k);
        let (h, i, bf) = (self.hidden, self.intermediate, DType::Bf16);
        let natural = matches!(self.routing, Routing::Natural { .. });
        let (w13, w2) = (tf.input("w13", bf, &[e, h, 2 * i]), tf.input("w2", bf, &[e, i, h]));
        let weights = tf.input("topk_weights", DType::F32, &[t, k]);
        let routing = natural.then(|| NaturalTensors {
            send_counts: tf.input("send_counts", DType::I32, &[r * e]),
            slot_of: tf.input("slot_of", DType::I32, &[t, k]),
            recv_counts: tf.input("recv_counts", DType::I32, &[r, e]),
        });
        let saved = LayerTensors {
            w13,
            w2,
            weights,
            recv: tf.input(self.gmm1_input_name(), bf, &[e, r * c, h]),
            h: tf.input("h", bf, &[e, r * c, 2 * i]),
            act: tf.input("act", bf, &[e, r * c, i]),
            back: tf.input("back", bf, &[r * e * c, h]),
            natural: routing,
        };
        self.add_backward(&mut tf, &saved, false);
        Ok(tf)
    }

    /// The forward and the backward as one taskflow (module docs): the forward's inputs and
    /// `out`, then the backward's `dout` and gradients, the saved activations flowing from one
    /// to the other inside the taskflow.
    ///
    /// # Errors
    /// As [`MoeShape::pass_taskflow`].
    pub fn training_step_taskflow(&self) -> Result<Taskflow, ShapeError> {
        self.validate_backward()?;
        let mut tf = self.empty_taskflow("moe_ffn_training_step");
        let saved = self.add_forward(&mut tf);
        self.add_backward(&mut tf, &saved, true);
        Ok(tf)
    }

    /// Tile instances per rank of the backward's families.
    pub fn backward_instances_per_rank(&self) -> u64 {
        let (r, e, b) = (u64::from(self.ranks), self.local_experts(), self.row_block);
        let blocks = r * e * (self.slot_rows() / b); // row blocks sent, and received, per rank
        let (cols1, cols2) = (2 * self.intermediate / self.gmm1_cols, self.hidden / self.gmm2_cols);
        let token_blocks = self.tokens_per_rank / self.sum_rows;
        let (h, i) = (self.hidden, self.intermediate);
        let (blocks1, blocks2) = (h / wgrad_row_block(h), i / wgrad_row_block(i));
        let (scale_dout, wgrad, relay) = match self.routing {
            // Per token block; weight-gradient tiles per row group of each expert, gradient row
            // block and column block.
            Routing::Balanced => (
                token_blocks,
                e * (r * self.slot_rows() / self.wgrad_rows.max(1)) * (blocks1 * cols1 + blocks2 * cols2),
                0,
            ),
            // Per send block; a summing tile per expert, column block and group of sources (the
            // first writing, the others adding); the relay before the sums.
            Routing::Natural { .. } => (blocks, self.wgrad_groups() * e * (cols1 + cols2), u64::from(self.relay)),
        };
        token_blocks * 2 + scale_dout + relay // weights_grad, sum_bwd, scale_dout, relay_bwd
            + blocks * 2 // combine_bwd, dispatch_bwd
            + blocks * cols1 * 2 // gmm2_dgrad, swiglu_bwd
            + blocks * cols2 // gmm1_dgrad
            + wgrad // gmm1_wgrad, gmm2_wgrad
    }

    /// What the backward needs beyond [`MoeShape::validate`].
    fn validate_backward(&self) -> Result<(), ShapeError> {
        self.validate()?;
        if self.routing != Routing::Balanced {
            // Natural routing: scale_dout per send block; weight gradients over whole sources.
            let groups = self.wgrad_source_groups;
            return if groups > 0 && u64::from(self.ranks).is_multiple_of(groups) {
                Ok(())
            } else {
                Err(self.breaks(vec![ShapeRule::WgradSourceGroups]))
            };
        }
        let rows = self.rows_per_expert();
        let mut broken = Vec::new();
        if self.wgrad_rows == 0
            || !self.wgrad_rows.is_multiple_of(self.row_block)
            || !rows.is_multiple_of(self.wgrad_rows)
        {
            broken.push(ShapeRule::WgradRows { rows_per_expert: rows });
        }
        if !self.row_block.is_multiple_of(self.top_k) {
            // A combine-backward block of slots must start at a token: its rows are whole tokens' choices.
            broken.push(ShapeRule::RowBlockTopK);
        }
        if broken.is_empty() { Ok(()) } else { Err(self.breaks(broken)) }
    }

    /// The name of the saved rows GMM1 multiplied: `recv` (BF16 dispatch) or the dequantised
    /// `xin` (INT8 dispatch, where `recv` holds INT8 rows).
    pub fn gmm1_input_name(&self) -> &'static str {
        match self.dispatch {
            super::DispatchPrecision::Bf16 => "recv",
            super::DispatchPrecision::Int8 => "xin",
        }
    }

    /// Declares the backward's tensors and tiles in `tf`, reading the forward's `saved`; with
    /// `after_forward`, the output gradient is used only once the rank's forward output is
    /// complete (`scale_dout` and `weights_grad` after every `weighted_sum`).
    fn add_backward(&self, tf: &mut Taskflow, saved: &LayerTensors, after_forward: bool) {
        let (r, e, c, t, k) =
            (u64::from(self.ranks), self.local_experts(), self.slot_rows(), self.tokens_per_rank, self.top_k);
        let (h, i, b, n1, n2, rows) =
            (self.hidden, self.intermediate, self.row_block, self.gmm1_cols, self.gmm2_cols, self.sum_rows);
        let (bf, f32) = (DType::Bf16, DType::F32);
        let LayerTensors { w13, w2, weights, recv, h: hbuf, act, back, natural } = saved;
        let slots = r * e * c;
        let dout = tf.input("dout", bf, &[t, h]);
        // Natural routing: which choice `t·k + c` each send slot row carries (`-1`: padding), the
        // inverse of `slot_of`, as the routing step produces it.
        let choice_of = natural.as_ref().map(|_| tf.input("choice_of", DType::I32, &[slots]));
        let dback = tf.scratch("dback", bf, &[slots, h]);
        let dy = tf.symmetric("dy", bf, &[e, r * c, h]);
        let da = tf.scratch("da", bf, &[e, r * c, i]);
        let dh = tf.scratch("dh", bf, &[e, r * c, 2 * i]);
        let dxr = tf.scratch("dxr", bf, &[e, r * c, h]);
        let dxs = tf.symmetric("dxs", bf, &[slots, h]);
        let dx = tf.output("dx", bf, &[t, h]);
        let dw13 = tf.output("dw13", f32, &[e, h, 2 * i]);
        let dw2 = tf.output("dw2", f32, &[e, i, h]);
        let d_weights = tf.output("d_weights", f32, &[t, k]);
        let rank = Affine::rank;
        // Block `b` of the send slot of (dst, e) (the rows the forward's dispatch sent), guarded
        // by its run-time count under natural routing: (dst, e, first slot row).
        let send_block = |tb: &mut TileBuilder<'_>| {
            let (dst, ex, blk) = (tb.grid("dst", r), tb.grid("e", e), tb.grid("b", c / b));
            let expert = dst.clone() * e as i64 + ex.clone();
            if let Some(n) = natural {
                tb.run_if_above(n.send_counts.at(expert.clone()), blk.clone() * b as i64);
            }
            (dst, ex, blk.clone(), expert * c as i64 + blk * b as i64)
        };

        // A tile reading the output gradient (`scale_dout`, `weights_grad`): in a training step
        // the gradient exists only once the rank's forward output does.
        let reads_dout = |tb: &mut TileBuilder<'_>| {
            if after_forward {
                tb.after("weighted_sum", [IndexSel::All]);
            }
        };

        match (natural, &choice_of) {
            // Each block of a send slot gathers its rows from the tokens they carry.
            (Some(_), Some(choice_of)) => tf.tile("scale_dout", CoreKind::Aiv, |tb| {
                let (_, _, _, slot) = send_block(tb);
                reads_dout(tb);
                tb.op(
                    "gather_scale_rows_repeat",
                    [dout.whole(), choice_of.slice(slot.clone(), b), weights.whole(), dback.slice(slot, b)],
                );
            }),
            // Token block `tb` owns send slots `tb·rows·k ..` (choice c of token t is slot t·k + c).
            _ => tf.tile("scale_dout", CoreKind::Aiv, |tb| {
                let blk = tb.grid("t", t / rows);
                reads_dout(tb);
                let tokens = blk.clone() * rows as i64;
                tb.op(
                    "scale_rows_repeat",
                    [
                        dout.slice(tokens.clone(), rows),
                        weights.slice(tokens, rows),
                        dback.slice(blk * (rows * k) as i64, rows * k),
                    ],
                );
            }),
        }
        tf.tile("combine_bwd", CoreKind::Aiv, |tb| {
            let (dst, ex, blk, slot) = send_block(tb);
            let dst_row = rank() * c as i64 + blk * b as i64;
            tb.put(dback.slice(slot, b), dy.on(dst).at(ex).slice(dst_row, b));
        });
        tf.tile("weights_grad", CoreKind::Aiv, |tb| {
            let blk = tb.grid("t", t / rows);
            reads_dout(tb);
            let tokens = blk.clone() * rows as i64;
            match natural {
                // Each choice's expert output is wherever the routing put it (`slot_of`).
                Some(n) => tb.op(
                    "gather_row_dot_topk",
                    [
                        back.whole(),
                        n.slot_of.slice(tokens.clone(), rows),
                        dout.slice(tokens.clone(), rows),
                        d_weights.slice(tokens, rows),
                    ],
                ),
                None => tb.op(
                    "row_dot_topk",
                    [
                        dout.slice(tokens.clone(), rows),
                        back.slice(blk * (rows * k) as i64, rows * k),
                        d_weights.slice(tokens, rows),
                    ],
                ),
            }
        });
        // A block of an expert's received rows: block `m` under balanced routing, block `b` of
        // source `src`'s slot (guarded by its run-time count) under natural routing.
        let block = |tb: &mut TileBuilder<'_>| {
            let ex = tb.grid("e", e);
            let row = match natural {
                None => tb.grid("m", r * c / b) * b as i64,
                Some(n) => {
                    let (src, blk) = (tb.grid("src", r), tb.grid("b", c / b));
                    tb.run_if_above(n.recv_counts.at(src.clone()).at(ex.clone()), blk.clone() * b as i64);
                    src * c as i64 + blk * b as i64
                }
            };
            (ex, row)
        };
        let (half, cols1, cols2) = (n1 / 2, 2 * i / n1, h / n2);
        tf.tile("gmm2_dgrad", CoreKind::Aic, |tb| {
            let (ex, row) = block(tb);
            let n = tb.grid("n", cols1);
            let out = da.at(ex.clone()).slice(row.clone(), b).slice(n.clone() * half as i64, half);
            tb.op("matmul_nt", [dy.at(ex.clone()).slice(row, b), w2.at(ex).slice(n * half as i64, half), out]);
        });
        let wg = WeightGradient { x: act, g: &dy, grad: &dw2, rows: i, width: h, cols: n2 };
        self.add_weight_gradient(tf, "gmm2_wgrad", wg, natural.as_ref());
        tf.tile("swiglu_bwd", CoreKind::Aiv, |tb| {
            let (ex, row) = block(tb);
            let n = tb.grid("n", cols1);
            let pairs =
                |tensor: &TensorRef| tensor.at(ex.clone()).slice(row.clone(), b).slice(n.clone() * n1 as i64, n1);
            let grad = da.at(ex.clone()).slice(row.clone(), b).slice(n.clone() * half as i64, half);
            tb.op("swiglu_backward", [pairs(hbuf), grad, pairs(&dh)]);
        });
        tf.tile("gmm1_dgrad", CoreKind::Aic, |tb| {
            let (ex, row) = block(tb);
            let n = tb.grid("n", cols2);
            let out = dxr.at(ex.clone()).slice(row.clone(), b).slice(n.clone() * n2 as i64, n2);
            tb.op("matmul_nt", [dh.at(ex.clone()).slice(row, b), w13.at(ex).slice(n * n2 as i64, n2), out]);
        });
        let wg = WeightGradient { x: recv, g: &dh, grad: &dw13, rows: h, width: 2 * i, cols: n1 };
        self.add_weight_gradient(tf, "gmm1_wgrad", wg, natural.as_ref());
        tf.tile("dispatch_bwd", CoreKind::Aiv, |tb| {
            let (src, ex, blk) = (tb.grid("src", r), tb.grid("e", e), tb.grid("b", c / b));
            if let Some(n) = natural {
                tb.run_if_above(n.recv_counts.at(src.clone()).at(ex.clone()), blk.clone() * b as i64);
            }
            let row = src.clone() * c as i64 + blk.clone() * b as i64;
            let slot = (rank() * e as i64 + ex.clone()) * c as i64 + blk * b as i64;
            tb.put(dxr.at(ex).slice(row, b), dxs.on(src).slice(slot, b));
        });
        // Natural routing: each sum gathers from anywhere in `dxs`, so it waits for every put
        // landing on its rank; with a relay, one tile per rank (a fence on `dxs`) waits for them
        // all instead.
        if natural.is_some() && self.relay {
            tf.tile("relay_bwd", CoreKind::Aiv, |tb| {
                tb.op("fence", [dxs.whole()]);
            });
        }
        tf.tile("sum_bwd", CoreKind::Aiv, |tb| {
            let blk = tb.grid("t", t / rows);
            let tokens = blk.clone() * rows as i64;
            match natural {
                // A token's rows are wherever the routing put its choices; dropped ones add nothing.
                Some(n) => tb.op(
                    "gather_sum_topk",
                    [dxs.whole(), n.slot_of.slice(tokens.clone(), rows), dx.slice(tokens, rows)],
                ),
                None => tb.op("sum_topk", [dxs.slice(blk * (rows * k) as i64, rows * k), dx.slice(tokens, rows)]),
            }
        });
    }
}

#[cfg(test)]
mod tests;
