//! The MoE-FFN layer of [`MoeShape::taskflow`], computed with plain loops over ranks,
//! tokens, choices and columns — no tiles, regions or schedule — from the routing layouts
//! documented in [`crate::moe`]. The executor's result must equal it bitwise: each value is
//! rounded where the taskflow stores it (BF16 after each matmul, after SwiGLU and after the
//! weighted sum), and each sum runs in the order the ops fix (matmul over the inner
//! dimension ascending, the weighted sum over choices ascending, both in FP32 from +0).
//!
//! Both routings go through the same loop: a token's choice `c` reads the row `s` of `xs`
//! its routing put it in — `t·top_k + c` in the balanced layout, `slot_of[t, c]` under
//! natural routing, where a dropped choice (`-1`) contributes nothing — and is computed by
//! global expert `s / slot_rows` (local expert `% E` of rank `/ E`).
//!
//! Under INT8 dispatch ([`DispatchPrecision::Int8`]) the row the expert computes on is the
//! sent row after the round trip through INT8 ([`int8_round_trip`]), written out here from the
//! layout's description (per-row symmetric, FP32 scale), not with the executor's op bodies.

use super::memory::Inputs;
use super::ops::silu;
use super::reference_error::{ReferenceError, SlotProblem};
use super::tensor::{HostTensor, round_to};
use crate::moe::{DispatchPrecision, MoeShape, RoutedTokens, Routing};
use crate::rng::SplitMix;
use hpmoe_core::model::DType;

/// Deterministic data for every input of the MoE taskflow, different on every rank:
/// `w13` and `w2` uniform scaled by `1/√fan-in`, each token's top-k weights positive and
/// summing to about 1 (in FP32), and
/// - balanced routing: `xs` uniform in `[-1, 1)`, one independent row per send slot;
/// - natural routing: the routing [`MoeShape::route`]`(seed)` and the inputs
///   [`moe_inputs_routed`] makes from it (token rows uniform in `[-1, 1)`, each copied into
///   the slots of its choices, zero padding, `send_counts`, `slot_of`).
pub fn moe_inputs(shape: &MoeShape, seed: u64) -> Inputs {
    match shape.routing {
        Routing::Balanced => {
            let sent = shape.tokens_per_rank * shape.top_k;
            random_inputs(shape, seed, |_, rng| {
                vec![("xs", HostTensor::from_fn(DType::Bf16, &[sent, shape.hidden], |_| rng.uniform()))]
            })
        }
        Routing::Natural { .. } => {
            moe_inputs_routed(shape, &shape.route(seed), seed).expect("a shape's own routing fits it")
        }
    }
}

/// The inputs of a natural-routing layer under `routing` (on each rank: `xs` with every
/// token's row copied into the slot of each choice the routing kept, rows past a slot's count
/// zero; `send_counts`; `slot_of`), with the weights and top-k weights of [`moe_inputs`] and
/// token rows uniform in `[-1, 1)`, all deterministic in `seed`.
///
/// # Errors
/// If `shape` is invalid or not naturally routed, or `routing` does not fit it (ranks,
/// lengths, a count above the capacity, a slot out of range or past its expert's count).
pub fn moe_inputs_routed(shape: &MoeShape, routing: &RoutedTokens, seed: u64) -> Result<Inputs, ReferenceError> {
    shape.validate()?;
    let Routing::Natural { capacity } = shape.routing else {
        return Err(ReferenceError::Unsupported(
            "moe_inputs_routed needs a naturally routed shape (MoeShape::with_natural_routing)",
        ));
    };
    let (t, h, k, g) = (shape.tokens_per_rank, shape.hidden, shape.top_k, shape.experts);
    let ranks = shape.ranks as usize;
    if routing.slot_of.len() != ranks || routing.send_counts.len() != ranks {
        return Err(ReferenceError::RoutingRanks { routing: routing.slot_of.len(), shape: ranks });
    }
    for rank in 0..ranks {
        let (slots, counts) = (&routing.slot_of[rank], &routing.send_counts[rank]);
        if slots.len() as u64 != t * k || counts.len() as u64 != g {
            return Err(ReferenceError::RoutingLengths {
                rank,
                choices: slots.len(),
                counts: counts.len(),
                shape_choices: t * k,
                shape_counts: g,
            });
        }
        if let Some(c) = counts.iter().find(|&&c| c < 0 || c as u64 > capacity) {
            return Err(ReferenceError::SendCount { rank, count: Some(i64::from(*c)), capacity });
        }
        for (choice, &s) in slots.iter().enumerate() {
            slot_position(shape, s, counts).map_err(|problem| ReferenceError::Slot {
                rank,
                choice,
                in_input: false,
                problem,
            })?;
        }
    }
    Ok(random_inputs(shape, seed, |rank, rng| {
        let r = rank as usize;
        let x = HostTensor::from_fn(DType::Bf16, &[t, h], |_| rng.uniform());
        let hu = h as usize;
        let mut xs = vec![0u32; (g * capacity * h) as usize]; // +0.0 in bf16: zero padding
        for (choice, &s) in routing.slot_of[r].iter().enumerate() {
            if let Ok(s) = usize::try_from(s) {
                let token = choice / k as usize;
                xs[s * hu..(s + 1) * hu].copy_from_slice(&x.bits()[token * hu..(token + 1) * hu]);
            }
        }
        let i32s =
            |v: &[i32], shape: &[u64]| HostTensor::from_bits(DType::I32, shape, v.iter().map(|&c| c as u32).collect());
        vec![
            ("xs", HostTensor::from_bits(DType::Bf16, &[g * capacity, h], xs)),
            ("send_counts", i32s(&routing.send_counts[r], &[g])),
            ("slot_of", i32s(&routing.slot_of[r], &[t, k])),
        ]
    }))
}

/// Inputs with `rows(rank, rng)`'s tensors drawn first on each rank's generator, then `w13`,
/// `w2` and `topk_weights` (the order the balanced layout has always used).
fn random_inputs(
    shape: &MoeShape,
    seed: u64,
    mut rows: impl FnMut(u32, &mut SplitMix) -> Vec<(&'static str, HostTensor)>,
) -> Inputs {
    let (h, i, e, k, t) = (shape.hidden, shape.intermediate, shape.local_experts(), shape.top_k, shape.tokens_per_rank);
    let mut inputs = Inputs::new();
    for rank in 0..shape.ranks {
        let mut rng = SplitMix::new(seed ^ u64::from(rank).wrapping_mul(0xA076_1D64_78BD_642F));
        for (name, tensor) in rows(rank, &mut rng) {
            inputs.set_rank(name, rank, tensor);
        }
        let (s13, s2) = (1.0 / (h as f32).sqrt(), 1.0 / (i as f32).sqrt());
        inputs.set_rank("w13", rank, HostTensor::from_fn(DType::Bf16, &[e, h, 2 * i], |_| rng.uniform() * s13));
        inputs.set_rank("w2", rank, HostTensor::from_fn(DType::Bf16, &[e, i, h], |_| rng.uniform() * s2));
        let raw: Vec<f32> = (0..t * k).map(|_| 0.5 + 0.5 * rng.uniform()).collect();
        let weights: Vec<f32> = raw
            .chunks_exact(k as usize)
            .flat_map(|row| {
                let sum: f32 = row.iter().sum();
                row.iter().map(move |w| w / sum)
            })
            .collect();
        inputs.set_rank("topk_weights", rank, HostTensor::from_f32(DType::F32, &[t, k], &weights));
    }
    inputs
}

/// The row of `xs` a natural-routing choice occupies (`None` if dropped), checked against
/// the layout: inside `xs` and below its expert's count (a row past the count is padding,
/// which the taskflow may never have computed).
fn slot_position(shape: &MoeShape, slot: i32, counts: &[i32]) -> Result<Option<usize>, SlotProblem> {
    let Ok(s) = u64::try_from(slot) else {
        return if slot == -1 { Ok(None) } else { Err(SlotProblem::Negative(slot)) };
    };
    let c = shape.slot_rows();
    let (g, j) = (s / c, s % c);
    match counts.get(g as usize) {
        None => Err(SlotProblem::PastRows { slot: s, rows: shape.experts * c }),
        Some(&n) if j >= u64::try_from(n).unwrap_or(0) => {
            Err(SlotProblem::Padding { slot: s, row: j, expert: g, count: n })
        }
        Some(_) => Ok(Some(s as usize)),
    }
}

/// What GMM1 sees of a dispatched row `x` (BF16 values) after INT8 dispatch: the row's scale
/// `s = max_j |x[j]| / 127` in FP32, each value `q = x[j] / s` in FP32 rounded half to even and
/// clamped to `-127..=127` (all zeros, with `s = 0`, for a row of zeros; a zero `q` is `+0`, as
/// INT8 stores it), and the received value `bf16(q · s)`, the product in FP32.
pub fn int8_round_trip(x: &[f32]) -> Vec<f32> {
    let mut amax = 0.0f32;
    for &v in x {
        if v.abs() > amax {
            amax = v.abs();
        }
    }
    let scale = amax / 127.0;
    x.iter()
        .map(|&v| {
            // `+ 0.0`: an INT8 zero has no sign, so a small negative value comes back as `+0`.
            let q = if scale > 0.0 { (v / scale).round_ties_even().clamp(-127.0, 127.0) + 0.0 } else { 0.0 };
            round_to(DType::Bf16, q * scale)
        })
        .collect()
}

/// One expert's FFN on one row `x` (length H): `y = bf16(bf16(swiglu(bf16(x · w13))) · w2)`,
/// where `w13` is `[H, 2·i]` with gate and up columns laid out `[gate | up]` per block of `n1`
/// columns (GMM1's tile) and `w2` is `[i, H]`; each sum runs over the inner dimension ascending
/// from +0 in FP32. Shared by the references of every layer built on this one.
pub fn expert_ffn(x: &[f32], w13: &[f32], w2: &[f32], i: usize, n1: usize) -> Vec<f32> {
    expert_forward(x, w13, w2, i, n1).y
}

/// What [`expert_forward`] computes for one row, every value as the layer stores it (BF16).
#[derive(Clone, Debug, PartialEq)]
pub struct ExpertRow {
    /// GMM1's output `bf16(x · w13)`, `2·i` columns laid out `[gate | up]` per block of `n1`.
    pub gate_up: Vec<f32>,
    /// SwiGLU's output `bf16(silu(gate) · up)`, `i` columns.
    pub act: Vec<f32>,
    /// GMM2's output `bf16(act · w2)`, `H` columns.
    pub y: Vec<f32>,
}

/// [`expert_ffn`] keeping its intermediate values: what the backward needs saved.
pub fn expert_forward(x: &[f32], w13: &[f32], w2: &[f32], i: usize, n1: usize) -> ExpertRow {
    let h = x.len();
    let bf = |v: f32| round_to(DType::Bf16, v);
    let gate_up: Vec<f32> = (0..2 * i)
        .map(|col| {
            let mut acc = 0.0f32;
            for p in 0..h {
                acc += x[p] * w13[p * 2 * i + col];
            }
            bf(acc)
        })
        .collect();
    let mut act = vec![0.0f32; i];
    for block in 0..2 * i / n1 {
        for q in 0..n1 / 2 {
            let gate = gate_up[block * n1 + q];
            let up = gate_up[block * n1 + n1 / 2 + q];
            act[block * n1 / 2 + q] = bf(silu(gate) * up);
        }
    }
    let y = (0..h)
        .map(|col| {
            let mut acc = 0.0f32;
            for q in 0..i {
                acc += act[q] * w2[q * h + col];
            }
            bf(acc)
        })
        .collect();
    ExpertRow { gate_up, act, y }
}

/// The layer's output `out` on every rank (BF16 `[tokens_per_rank, hidden]`), computed from
/// `inputs` (as [`moe_inputs`] makes them, or any data of the same shapes): under natural
/// routing each choice reads the row `slot_of` names and a dropped one (`-1`) adds nothing.
///
/// # Errors
/// If the shape is invalid, an input is missing, or (natural routing) a slot is out of range
/// or past its expert's send count.
pub fn moe_reference(shape: &MoeShape, inputs: &Inputs) -> Result<Vec<HostTensor>, ReferenceError> {
    shape.validate()?;
    let tensor = |name: &str, rank: u32| {
        inputs
            .get(name, rank)
            .ok_or_else(|| ReferenceError::MissingInput { name: name.to_string(), rank: rank as usize })
    };
    let get = |name: &str, rank: u32| tensor(name, rank).map(HostTensor::to_f32);
    let ints = |name: &str, rank: u32| -> Result<Vec<i32>, ReferenceError> {
        Ok(tensor(name, rank)?.bits().iter().map(|&b| b as i32).collect())
    };
    let (h, i, k, t) =
        (shape.hidden as usize, shape.intermediate as usize, shape.top_k as usize, shape.tokens_per_rank as usize);
    let (e, slot_rows) = (shape.local_experts() as usize, shape.slot_rows() as usize);
    let mut w13 = Vec::new();
    let mut w2 = Vec::new();
    for rank in 0..shape.ranks {
        w13.push(get("w13", rank)?);
        w2.push(get("w2", rank)?);
    }
    let mut outs = Vec::new();
    for rank in 0..shape.ranks {
        let xs = get("xs", rank)?;
        let weights = get("topk_weights", rank)?;
        // The row of `xs` (and of `back`) holding each choice, token-major.
        let slots: Vec<Option<usize>> = match shape.routing {
            Routing::Balanced => (0..t * k).map(Some).collect(),
            Routing::Natural { .. } => {
                let counts = ints("send_counts", rank)?;
                let slot_of = ints("slot_of", rank)?;
                slot_of
                    .iter()
                    .enumerate()
                    .map(|(choice, &s)| {
                        slot_position(shape, s, &counts).map_err(|problem| ReferenceError::Slot {
                            rank: rank as usize,
                            choice,
                            in_input: true,
                            problem,
                        })
                    })
                    .collect::<Result<_, _>>()?
            }
        };
        if slots.len() != t * k || xs.len() < slots.iter().flatten().max().map_or(0, |&s| (s + 1) * h) {
            return Err(ReferenceError::SlotsDoNotFit { rank: rank as usize });
        }
        let mut out = vec![0.0f32; t * h];
        for token in 0..t {
            let mut acc = vec![0.0f32; h];
            for choice in 0..k {
                // A dropped choice contributes nothing.
                let Some(slot) = slots[token * k + choice] else { continue };
                let expert = slot / slot_rows;
                let (owner, local) = (expert / e, expert % e);
                let w13 = &w13[owner][local * h * 2 * i..(local + 1) * h * 2 * i];
                let w2 = &w2[owner][local * i * h..(local + 1) * i * h];
                let sent = &xs[slot * h..(slot + 1) * h];
                let received = match shape.dispatch {
                    DispatchPrecision::Bf16 => sent.to_vec(),
                    DispatchPrecision::Int8 => int8_round_trip(sent),
                };
                let y = expert_ffn(&received, w13, w2, i, shape.gmm1_cols as usize);
                let w = weights[token * k + choice];
                for (a, v) in acc.iter_mut().zip(&y) {
                    *a += v * w;
                }
            }
            out[token * h..(token + 1) * h].copy_from_slice(&acc);
        }
        outs.push(HostTensor::from_f32(DType::Bf16, &[t as u64, h as u64], &out));
    }
    Ok(outs)
}
