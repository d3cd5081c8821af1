//! The backward of the MoE-FFN layer ([`MoeShape::backward_taskflow`]), computed with plain
//! loops over ranks, experts, received rows and columns from the routing layouts of
//! [`crate::moe`] (balanced, or natural with capacity padding; BF16 or INT8 dispatch) — no
//! tiles, regions or schedule.
//!
//! # Routings and dispatch precisions
//!
//! Under natural routing the rows are those the routing sent: on the rank owning local expert
//! `e`, row `j < count` of source `src`'s slot of `C` rows (`count` = what `src` sent, from
//! `send_counts`), its send slot `(rank·E + e)·C + j` on `src`, carrying the choice whose
//! `slot_of` names that slot (the reference inverts `slot_of` itself). Rows past a count are
//! padding: the forward computes zeros on the padding rows of a sent block and never writes the
//! blocks past the count ([`moe_saved`] leaves those rows at the executor's NaN poison, so a
//! layer reading them fails the comparison). A dropped choice gets `dw = +0` and adds nothing
//! to its token's `dx`. The weight gradients sum each group of `R / G` source ranks' received
//! rows ([`MoeShape::wgrad_source_groups`] `= G`) in one FP32 accumulation from `+0`, sources
//! ascending and each source's `count` rows ascending, write the first group's sum and add the
//! others' one after another in the layer's chain order ([`MoeShape::wgrad_group`]): the order
//! of the layer's chain, a `matmul_tn_slots` then `matmul_tn_slots_accumulate` links (which read
//! no row past a count).
//!
//! Under INT8 dispatch the rows GMM1 multiplied — and so `dW13`'s `X` — are the dequantised
//! ones ([`int8_round_trip`] of the sent rows), saved as `xin` instead of `recv`.
//!
//! # What the forward saves, what is recomputed
//!
//! The forward keeps four tensors for the backward ([`saved_names`]), each as it stores them
//! (BF16):
//! - `recv` `[E, R·S, H]` on the rank owning the experts (`xin` under INT8 dispatch): the
//!   dispatched rows `X` each expert multiplied (GMM1's input, for `dW13 = Xᵀ·dH`);
//! - `h` `[E, R·S, 2I]`: GMM1's output, the gate/up pre-activations `[g | u]` per column block
//!   (for SwiGLU's derivative);
//! - `act` `[E, R·S, I]`: SwiGLU's output `A` (GMM2's input, for `dW2 = Aᵀ·dY`);
//! - `back` `[R·E·S, H]` on the source rank: the expert outputs `Y` in send-slot order (for the
//!   routing weights' gradient).
//!
//! `σ(g)` is recomputed from `g` by the SwiGLU backward; nothing else is recomputed.
//!
//! # The arithmetic (FP32 in the layer's order: bitwise)
//!
//! With `dOut` the gradient of the layer's output `out` (BF16 `[T, H]` per rank) and `w[t, c]`
//! the routing weights, on the rank owning local expert `e`, for received row `r` (from source
//! `r / S`, its send slot `j = (rank·E + e)·S + r % S`, token `t = j / k`, choice `c = j % k`):
//! 1. `dY[r] = bf16(w[t, c] · dOut[t])` on the source rank, put to the expert's rank;
//! 2. `dA[r, q] = bf16(Σ_j dY[r, j] · W2[e][q, j])`, `j` ascending from `+0`;
//! 3. per `[g | u]` pair of `h[r]` and `a = dA[r, q]`, with `σ = 1 / (1 + e^(−g))`:
//!    `du = bf16((a · g) · σ)`, `dg = bf16(((a · u) · σ) · (1 + g · (1 − σ)))`, written where
//!    `g` and `u` sit (`dH` has `h`'s layout);
//! 4. `dXᵣ[r, p] = bf16(Σ_col dH[r, col] · W13[e][p, col])`, `col` ascending over `h`'s layout;
//! 5. `dW2[e][q, j] = Σ_m (Σ_{r ∈ group m} A[r, q] · dY[r, j])` and
//!    `dW13[e][p, col] = Σ_m (Σ_{r ∈ group m} X[r, p] · dH[r, col])` in FP32, over groups of
//!    `W` = [`MoeShape::wgrad_rows`] received rows: each group's sum over its rows ascending
//!    from `+0`, added to the running FP32 total (from `+0`) group after group, in the order
//!    of the layer's accumulation chain: group [`MoeShape::wgrad_group`]`(rank, m)` at step
//!    `m = 0, 1, …` (groups of whole sources' rows in the order they arrive, others `m`);
//! 6. back on the source rank, `dX[t] = bf16(Σ_c dXᵣ[slot t·k + c])`, `c` ascending from `+0`;
//! 7. `dw[t, c] = Σ_h dOut[t, h] · back[t·k + c, h]` in FP32, `h` ascending from `+0`.
//!
//! Every value is rounded where the layer stores it (BF16 for activation gradients, FP32 for
//! weight and routing-weight gradients), so the executor's gradients equal these bitwise.
//! [`LayerValues`] evaluates the forward in f64 without any rounding, for finite differences.

use super::memory::Inputs;
use super::moe_reference::{expert_forward, int8_round_trip, moe_inputs};
use super::reference_error::{ReferenceError, SlotProblem};
use super::tensor::{HostTensor, poison, round_to};
use crate::moe::{DispatchPrecision, MoeShape, Routing, ShapeError, ShapeRule};
use crate::rng::SplitMix;
use hpmoe_core::model::DType;

mod layer_values;
pub use layer_values::LayerValues;

/// The tensors the forward saves for the backward under BF16 dispatch, by their names in both
/// taskflows ([`saved_names`] for any shape).
pub const SAVED: [&str; 4] = ["recv", "h", "act", "back"];

/// The names of the tensors `shape`'s forward saves for its backward: [`SAVED`], with the
/// dequantised `xin` instead of `recv` under INT8 dispatch.
pub fn saved_names(shape: &MoeShape) -> [&'static str; 4] {
    [shape.gmm1_input_name(), "h", "act", "back"]
}

/// The gradients of one rank, as the backward layer outputs them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MoeGradients {
    /// `dx` BF16 `[T, H]`: the gradient of each token row (the sum over its `k` routed copies).
    pub dx: HostTensor,
    /// `dw13` F32 `[E, H, 2I]`: the gradient of this rank's experts' fused gate/up weights.
    pub dw13: HostTensor,
    /// `dw2` F32 `[E, I, H]`: the gradient of this rank's experts' down weights.
    pub dw2: HostTensor,
    /// `d_weights` F32 `[T, k]`: the gradient of the routing weights `topk_weights`.
    pub d_weights: HostTensor,
}

impl MoeGradients {
    /// The gradient called `name` in the backward taskflow (`dx`, `dw13`, `dw2`, `d_weights`).
    pub fn get(&self, name: &str) -> Option<&HostTensor> {
        match name {
            "dx" => Some(&self.dx),
            "dw13" => Some(&self.dw13),
            "dw2" => Some(&self.dw2),
            "d_weights" => Some(&self.d_weights),
            _ => None,
        }
    }

    /// The names of the gradients, in the backward taskflow's declaration order.
    pub const NAMES: [&'static str; 4] = ["dx", "dw13", "dw2", "d_weights"];
}

/// The layer's sizes, checked once.
struct Dims {
    r: usize,
    e: usize,
    /// Rows per (source rank, expert) slot: `S` balanced, the capacity `C` natural.
    c: usize,
    /// Rows per weight-gradient group under balanced routing ([`MoeShape::wgrad_rows`]).
    w: usize,
    /// Source ranks per weight-gradient group under natural routing (`ranks /`
    /// [`MoeShape::wgrad_source_groups`]).
    q: usize,
    /// Per rank, the group summed at each step of the weight gradients' chain
    /// ([`MoeShape::wgrad_group`]).
    order: Vec<Vec<usize>>,
    /// Rows per block.
    b: usize,
    t: usize,
    k: usize,
    h: usize,
    i: usize,
    n1: usize,
    natural: bool,
    int8: bool,
}

impl Dims {
    fn of(shape: &MoeShape) -> Result<Dims, ReferenceError> {
        shape.validate()?;
        let natural = matches!(shape.routing, Routing::Natural { .. });
        let rows = shape.rows_per_expert();
        if !natural && (shape.wgrad_rows == 0 || !rows.is_multiple_of(shape.wgrad_rows)) {
            return Err(ReferenceError::WgradRows { wgrad_rows: shape.wgrad_rows, rows_per_expert: rows });
        }
        let groups = shape.wgrad_groups();
        if natural && (shape.wgrad_source_groups == 0 || !u64::from(shape.ranks).is_multiple_of(groups)) {
            let broken = vec![ShapeRule::WgradSourceGroups];
            return Err(ReferenceError::Shape(ShapeError { shape: Box::new(shape.clone()), broken }));
        }
        let u = |v: u64| usize::try_from(v).map_err(|_| ReferenceError::SizeOverflow(v));
        let order = (0..shape.ranks)
            .map(|rank| (0..groups).map(|step| u(shape.wgrad_group(rank, step))).collect::<Result<Vec<_>, _>>())
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Dims {
            order,
            r: shape.ranks as usize,
            e: u(shape.local_experts())?,
            c: u(shape.slot_rows())?,
            w: u(shape.wgrad_rows)?,
            q: u(u64::from(shape.ranks) / groups.max(1))?,
            b: u(shape.row_block)?,
            t: u(shape.tokens_per_rank)?,
            k: u(shape.top_k)?,
            h: u(shape.hidden)?,
            i: u(shape.intermediate)?,
            n1: u(shape.gmm1_cols)?,
            natural,
            int8: shape.dispatch == DispatchPrecision::Int8,
        })
    }

    /// [`Dims::of`] a balanced, BF16-dispatched shape (what [`LayerValues`] evaluates).
    fn balanced_bf16(shape: &MoeShape) -> Result<Dims, ReferenceError> {
        let d = Dims::of(shape)?;
        if d.natural || d.int8 {
            return Err(ReferenceError::Unsupported("LayerValues evaluates balanced routing with BF16 dispatch only"));
        }
        Ok(d)
    }

    /// Rows each local expert has room for (`R·C`).
    fn rows(&self) -> usize {
        self.r * self.c
    }

    /// Send slots per rank (`R·E·C`).
    fn slots(&self) -> usize {
        self.r * self.e * self.c
    }
}

/// Where every rank's choices went: per rank, the send slot of each choice (`None` if dropped),
/// the choice each slot carries (`None` for padding), and the rows it sent each global expert.
struct Placement {
    slot_of: Vec<Vec<Option<usize>>>,
    choice_of: Vec<Vec<Option<usize>>>,
    sent: Vec<Vec<usize>>,
}

impl Placement {
    /// Balanced: choice `j` in slot `j`, every slot full. Natural: from the inputs' `slot_of`
    /// and `send_counts`, each slot checked to lie below its expert's count and used once.
    fn of(d: &Dims, inputs: &Inputs) -> Result<Placement, ReferenceError> {
        let experts = d.r * d.e;
        if !d.natural {
            let identity: Vec<Option<usize>> = (0..d.slots()).map(Some).collect();
            return Ok(Placement {
                slot_of: vec![identity.clone(); d.r],
                choice_of: vec![identity; d.r],
                sent: vec![vec![d.c; experts]; d.r],
            });
        }
        let mut p = Placement { slot_of: Vec::new(), choice_of: Vec::new(), sent: Vec::new() };
        for rank in 0..d.r {
            let counts = ints(inputs, "send_counts", rank, experts)?;
            let sent: Vec<usize> = counts
                .iter()
                .map(|&n| usize::try_from(n).ok().filter(|&n| n <= d.c))
                .collect::<Option<_>>()
                .ok_or(ReferenceError::SendCount { rank, count: None, capacity: d.c as u64 })?;
            let mut choice_of = vec![None; d.slots()];
            let mut slot_of = Vec::with_capacity(d.t * d.k);
            for (choice, &s) in ints(inputs, "slot_of", rank, d.t * d.k)?.iter().enumerate() {
                let Ok(slot) = usize::try_from(s) else {
                    slot_of.push(None);
                    continue;
                };
                let bad = slot >= d.slots() || slot % d.c >= sent[slot / d.c] || choice_of[slot].is_some();
                if bad {
                    return Err(ReferenceError::Slot {
                        rank,
                        choice,
                        in_input: true,
                        problem: SlotProblem::NotFree(slot),
                    });
                }
                choice_of[slot] = Some(choice);
                slot_of.push(Some(slot));
            }
            p.slot_of.push(slot_of);
            p.choice_of.push(choice_of);
            p.sent.push(sent);
        }
        Ok(p)
    }

    /// The rows local expert `e` of `rank` received, as (row in its `[R·C]` rows, source rank,
    /// send slot on the source), sources ascending, rows ascending.
    fn received(&self, d: &Dims, rank: usize, e: usize) -> Vec<(usize, usize, usize)> {
        let expert = rank * d.e + e;
        (0..d.r)
            .flat_map(|src| (0..self.sent[src][expert]).map(move |j| (src * d.c + j, src, expert * d.c + j)))
            .collect()
    }

    /// The weight gradients' groups of local expert `e` of `rank`, in summation order (the
    /// chain's, [`MoeShape::wgrad_group`]): groups of `W` rows (balanced); groups of `q` source
    /// ranks, each of its sources' received rows, sources ascending and rows ascending (natural:
    /// one `matmul_tn_slots_accumulate` sum per group).
    fn groups(&self, d: &Dims, rank: usize, e: usize) -> Vec<Vec<usize>> {
        let received = self.received(d, rank, e);
        d.order[rank]
            .iter()
            .map(|&g| match d.natural {
                false => (g * d.w..(g + 1) * d.w).collect(),
                true => {
                    let sources = g * d.q..(g + 1) * d.q;
                    received.iter().filter(|(_, src, _)| sources.contains(src)).map(|&(row, ..)| row).collect()
                }
            })
            .collect()
    }
}

/// Input `name` of `rank`, its element count checked.
fn input<'a>(inputs: &'a Inputs, name: &str, rank: usize, len: usize) -> Result<&'a HostTensor, ReferenceError> {
    let tensor =
        inputs.get(name, rank as u32).ok_or_else(|| ReferenceError::MissingInput { name: name.into(), rank })?;
    if tensor.len() != len {
        return Err(ReferenceError::InputLength { name: name.into(), rank, elements: tensor.len(), needed: len });
    }
    Ok(tensor)
}

/// Input `name` of `rank` as `f32`, its element count checked.
fn values(inputs: &Inputs, name: &str, rank: usize, len: usize) -> Result<Vec<f32>, ReferenceError> {
    let tensor = input(inputs, name, rank, len)?;
    Ok(tensor.to_f32())
}

/// Input `name` of `rank` as `i32` (read as bits), its element count checked.
fn ints(inputs: &Inputs, name: &str, rank: usize, len: usize) -> Result<Vec<i32>, ReferenceError> {
    let tensor = input(inputs, name, rank, len)?;
    Ok(tensor.bits().iter().map(|&b| b as i32).collect())
}

/// The saved activations of every rank (named [`saved_names`], in that order, BF16), computed
/// from the forward's inputs (`xs`, `w13`, `w2`, and under natural routing `send_counts`,
/// `slot_of`) with the forward reference's arithmetic ([`expert_forward`]): what the forward
/// layer leaves in those tensors. Under natural routing the rows the forward never writes (the
/// blocks past a count) hold the executor's poison (a NaN); the padding rows of a sent block are
/// the zero rows `xs` carries there, and what the experts make of them.
///
/// # Errors
/// If the shape is invalid, or an input is missing or misshapen.
pub fn moe_saved(shape: &MoeShape, inputs: &Inputs) -> Result<Vec<[HostTensor; 4]>, ReferenceError> {
    let d = Dims::of(shape)?;
    let place = Placement::of(&d, inputs)?;
    let (h, i) = (d.h, d.i);
    let nan = f32::NAN; // stored as the executor's poison by `saved_tensor`
    let mut xs = Vec::new();
    let mut back = Vec::new();
    for rank in 0..d.r {
        xs.push(values(inputs, "xs", rank, d.slots() * h)?);
        back.push(vec![nan; d.slots() * h]);
    }
    let mut per_rank = Vec::new();
    for rank in 0..d.r {
        let w13 = values(inputs, "w13", rank, d.e * h * 2 * i)?;
        let w2 = values(inputs, "w2", rank, d.e * i * h)?;
        let rows = d.e * d.rows();
        let (mut recv, mut gate_up, mut act) = (vec![nan; rows * h], vec![nan; rows * 2 * i], vec![nan; rows * i]);
        for e in 0..d.e {
            let expert = rank * d.e + e;
            for src in 0..d.r {
                // Whole blocks: the padding rows of a sent block are computed too.
                let sent = place.sent[src][expert].div_ceil(d.b) * d.b;
                for j in 0..sent {
                    let (row, slot) = (e * d.rows() + src * d.c + j, expert * d.c + j);
                    let sent_row = &xs[src][slot * h..(slot + 1) * h];
                    let x = if d.int8 { int8_round_trip(sent_row) } else { sent_row.to_vec() };
                    let w13 = &w13[e * h * 2 * i..(e + 1) * h * 2 * i];
                    let out = expert_forward(&x, w13, &w2[e * i * h..(e + 1) * i * h], i, d.n1);
                    recv[row * h..(row + 1) * h].copy_from_slice(&x);
                    gate_up[row * 2 * i..(row + 1) * 2 * i].copy_from_slice(&out.gate_up);
                    act[row * i..(row + 1) * i].copy_from_slice(&out.act);
                    back[src][slot * h..(slot + 1) * h].copy_from_slice(&out.y);
                }
            }
        }
        let (e, n, h, i) = (d.e as u64, d.rows() as u64, h as u64, i as u64);
        per_rank.push([
            saved_tensor(&[e, n, h], &recv),
            saved_tensor(&[e, n, 2 * i], &gate_up),
            saved_tensor(&[e, n, i], &act),
        ]);
    }
    Ok(per_rank
        .into_iter()
        .zip(back)
        .map(|([recv, gate_up, act], back)| {
            let shape = [d.slots() as u64, d.h as u64];
            [recv, gate_up, act, saved_tensor(&shape, &back)]
        })
        .collect())
}

/// A BF16 tensor of `values`, each NaN (a row the forward never writes) stored as the
/// executor's poison pattern, so the tensor equals what the layer leaves bitwise.
fn saved_tensor(shape: &[u64], values: &[f32]) -> HostTensor {
    let bits = values
        .iter()
        .map(|&v| if v.is_nan() { poison(DType::Bf16) } else { super::tensor::encode(DType::Bf16, v) })
        .collect();
    HostTensor::from_bits(DType::Bf16, shape, bits)
}

/// The inputs of the backward taskflow on every rank: the forward's ([`moe_inputs`], `seed`),
/// the activations the forward saves ([`moe_saved`]), an output gradient `dout` (BF16
/// `[T, H]`, uniform in `[-1, 1)`, deterministic in `seed`, different on every rank) and, under
/// natural routing, `recv_counts` (`[R, E]`: what each source sent each local expert, as the
/// forward's announce leaves it) and `choice_of` (`[R·E·C]`: the choice `t·k + c` each send
/// slot carries, `-1` for padding: the inverse of `slot_of`, as the routing step makes it).
///
/// # Errors
/// If the shape is invalid.
pub fn moe_backward_inputs(shape: &MoeShape, seed: u64) -> Result<Inputs, ReferenceError> {
    let mut inputs = moe_inputs(shape, seed);
    let names = saved_names(shape);
    for (rank, saved) in moe_saved(shape, &inputs)?.into_iter().enumerate() {
        for (name, tensor) in names.into_iter().zip(saved) {
            inputs.set_rank(name, rank as u32, tensor);
        }
    }
    let d = Dims::of(shape)?;
    if d.natural {
        let place = Placement::of(&d, &inputs)?;
        let i32s = |v: Vec<i32>, shape: &[u64]| {
            HostTensor::from_bits(DType::I32, shape, v.into_iter().map(|c| c as u32).collect())
        };
        for rank in 0..d.r {
            let counts: Vec<i32> = (0..d.r)
                .flat_map(|src| (0..d.e).map(move |e| (src, e)))
                .map(|(src, e)| place.sent[src][rank * d.e + e] as i32)
                .collect();
            inputs.set_rank("recv_counts", rank as u32, i32s(counts, &[d.r as u64, d.e as u64]));
            let choices = place.choice_of[rank].iter().map(|c| c.map_or(-1, |c| c as i32)).collect();
            inputs.set_rank("choice_of", rank as u32, i32s(choices, &[d.slots() as u64]));
        }
    }
    for rank in 0..shape.ranks {
        let mut rng = SplitMix::new(seed ^ 0xD0D0_BACC ^ u64::from(rank).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let dout = HostTensor::from_fn(DType::Bf16, &[shape.tokens_per_rank, shape.hidden], |_| rng.uniform());
        inputs.set_rank("dout", rank, dout);
    }
    Ok(inputs)
}

/// The gradients on every rank (see the module docs for the arithmetic), from the backward
/// taskflow's inputs (`w13`, `w2`, `topk_weights`, the saved tensors ([`saved_names`]),
/// `dout`, and under natural routing `send_counts` and `slot_of`; the reference finds which
/// choice each slot carries from `slot_of` itself, not from the layer's `choice_of`).
///
/// # Errors
/// If the shape is invalid, or an input is missing or misshapen.
pub fn moe_backward_reference(shape: &MoeShape, inputs: &Inputs) -> Result<Vec<MoeGradients>, ReferenceError> {
    let d = Dims::of(shape)?;
    let place = Placement::of(&d, inputs)?;
    let (h, i, k, t) = (d.h, d.i, d.k, d.t);
    let bf = |v: f32| round_to(DType::Bf16, v);
    let mut dout = Vec::new();
    let mut weights = Vec::new();
    for rank in 0..d.r {
        dout.push(values(inputs, "dout", rank, t * h)?);
        weights.push(values(inputs, "topk_weights", rank, t * k)?);
    }
    let x_name = shape.gmm1_input_name();
    // The activation gradient of every send slot, on its source rank (step 4's rows).
    let mut dxs = vec![vec![0.0f32; d.slots() * h]; d.r];
    let mut weight_grads = Vec::new();
    for rank in 0..d.r {
        let w13 = values(inputs, "w13", rank, d.e * h * 2 * i)?;
        let w2 = values(inputs, "w2", rank, d.e * i * h)?;
        let recv = values(inputs, x_name, rank, d.e * d.rows() * h)?;
        let gate_up = values(inputs, "h", rank, d.e * d.rows() * 2 * i)?;
        let act = values(inputs, "act", rank, d.e * d.rows() * i)?;
        let mut dw13 = vec![0.0f32; d.e * h * 2 * i];
        let mut dw2 = vec![0.0f32; d.e * i * h];
        for e in 0..d.e {
            let w13 = &w13[e * h * 2 * i..(e + 1) * h * 2 * i];
            let w2 = &w2[e * i * h..(e + 1) * i * h];
            // Row `row` of local expert `e` in a saved `[E, R·C, width]` tensor.
            let row_of = |width: usize, row: usize| (e * d.rows() + row) * width..(e * d.rows() + row + 1) * width;
            let mut dy = vec![Vec::new(); d.rows()];
            let mut dh = vec![Vec::new(); d.rows()];
            for (row, src, slot) in place.received(&d, rank, e) {
                let choice = place.choice_of[src][slot].ok_or(ReferenceError::SlotGap { rank: src, slot })?;
                // 1. The output gradient scaled by the routing weight, on the source rank.
                let w = weights[src][choice];
                let dy_row: Vec<f32> =
                    dout[src][(choice / k) * h..(choice / k + 1) * h].iter().map(|&g| bf(w * g)).collect();
                // 2. dA = dY · W2ᵀ.
                let da: Vec<f32> = (0..i)
                    .map(|q| {
                        let mut acc = 0.0f32;
                        for j in 0..h {
                            acc += dy_row[j] * w2[q * h + j];
                        }
                        bf(acc)
                    })
                    .collect();
                // 3. SwiGLU's derivative, σ(g) recomputed.
                let gu = &gate_up[row_of(2 * i, row)];
                let mut dh_row = vec![0.0f32; 2 * i];
                for block in 0..2 * i / d.n1 {
                    for q in 0..d.n1 / 2 {
                        let (gi, ui) = (block * d.n1 + q, block * d.n1 + d.n1 / 2 + q);
                        let (dg, du) = swiglu_grad(gu[gi], gu[ui], da[block * d.n1 / 2 + q]);
                        dh_row[gi] = bf(dg);
                        dh_row[ui] = bf(du);
                    }
                }
                // 4. dXᵣ = dH · W13ᵀ, back to the source rank's slot.
                for p in 0..h {
                    let mut acc = 0.0f32;
                    for col in 0..2 * i {
                        acc += dh_row[col] * w13[p * 2 * i + col];
                    }
                    dxs[src][slot * h + p] = bf(acc);
                }
                dy[row] = dy_row;
                dh[row] = dh_row;
            }
            // 5. Weight gradients: per group of rows, then group after group, the first group's
            // sum written (the layer's `matmul_tn` / `matmul_tn_slots`) and the others' added.
            // (A sum from +0 is never -0, so writing it gives the bits adding it to +0 would.)
            let x = &recv[e * d.rows() * h..(e + 1) * d.rows() * h];
            let a = &act[e * d.rows() * i..(e + 1) * d.rows() * i];
            for (step, rows) in place.groups(&d, rank, e).into_iter().enumerate() {
                let put = |dw: &mut f32, s: f32| if step == 0 { *dw = s } else { *dw += s };
                for q in 0..i {
                    for j in 0..h {
                        let mut s = 0.0f32;
                        for &r in &rows {
                            s += a[r * i + q] * dy[r][j];
                        }
                        put(&mut dw2[(e * i + q) * h + j], s);
                    }
                }
                for p in 0..h {
                    for col in 0..2 * i {
                        let mut s = 0.0f32;
                        for &r in &rows {
                            s += x[r * h + p] * dh[r][col];
                        }
                        put(&mut dw13[(e * h + p) * 2 * i + col], s);
                    }
                }
            }
        }
        weight_grads.push((dw13, dw2));
    }
    let mut grads = Vec::new();
    for (rank, (dw13, dw2)) in weight_grads.into_iter().enumerate() {
        let back = values(inputs, "back", rank, d.slots() * h)?;
        let slot_of = &place.slot_of[rank];
        // 6. Each token's k rows summed in choice order (a dropped choice adds nothing).
        let mut dx = vec![0.0f32; t * h];
        for token in 0..t {
            for p in 0..h {
                let mut acc = 0.0f32;
                for c in 0..k {
                    if let Some(slot) = slot_of[token * k + c] {
                        acc += dxs[rank][slot * h + p];
                    }
                }
                dx[token * h + p] = acc;
            }
        }
        // 7. The routing weights' gradient: dOut[t] · Y[slot of (t, c)], +0 for a dropped choice.
        let d_weights: Vec<f32> = (0..t * k)
            .map(|choice| {
                let mut acc = 0.0f32;
                if let Some(slot) = slot_of[choice] {
                    for p in 0..h {
                        acc += dout[rank][(choice / k) * h + p] * back[slot * h + p];
                    }
                }
                acc
            })
            .collect();
        let (t, h, e, i, k) = (t as u64, h as u64, d.e as u64, i as u64, k as u64);
        grads.push(MoeGradients {
            dx: HostTensor::from_f32(DType::Bf16, &[t, h], &dx),
            dw13: HostTensor::from_f32(DType::F32, &[e, h, 2 * i], &dw13),
            dw2: HostTensor::from_f32(DType::F32, &[e, i, h], &dw2),
            d_weights: HostTensor::from_f32(DType::F32, &[t, k], &d_weights),
        });
    }
    Ok(grads)
}

/// SwiGLU's derivative at gate `g`, up `u` for the output gradient `a`, in FP32 (step 3 of
/// the module docs): `(dg, du)`.
fn swiglu_grad(g: f32, u: f32, a: f32) -> (f32, f32) {
    let sigma = 1.0 / (1.0 + (-g).exp());
    let du = a * g * sigma;
    let dg = a * u * sigma * (1.0 + g * (1.0 - sigma));
    (dg, du)
}
