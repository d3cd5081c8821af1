//! The MoE-FFN layer of [`MoeShape::taskflow`], computed with plain loops over ranks,
//! tokens, choices and columns — no tiles, regions or schedule — from the routing layout
//! documented in [`crate::moe`]. The executor's result must equal it bitwise: each value is
//! rounded where the taskflow stores it (BF16 after each matmul, after SwiGLU and after the
//! weighted sum), and each sum runs in the order the ops fix (matmul over the inner
//! dimension ascending, the weighted sum over choices ascending, both in FP32 from +0).

use super::memory::{Inputs, SplitMix};
use super::ops::silu;
use super::tensor::{HostTensor, round_to};
use crate::model::DType;
use crate::moe::MoeShape;

/// Deterministic data for every input of the MoE taskflow, different on every rank:
/// `xs` uniform in `[-1, 1)`, `w13` and `w2` uniform scaled by `1/√fan-in`, and each
/// token's top-k weights positive and summing to about 1 (in FP32).
pub fn moe_inputs(shape: &MoeShape, seed: u64) -> Inputs {
    let (h, i, e, k, t) = (shape.hidden, shape.intermediate, shape.local_experts(), shape.top_k, shape.tokens_per_rank);
    let sent = t * k;
    let mut inputs = Inputs::new();
    for rank in 0..shape.ranks {
        let mut rng = SplitMix::new(seed ^ u64::from(rank).wrapping_mul(0xA076_1D64_78BD_642F));
        let (s13, s2) = (1.0 / (h as f32).sqrt(), 1.0 / (i as f32).sqrt());
        inputs.set_rank("xs", rank, HostTensor::from_fn(DType::Bf16, &[sent, h], |_| rng.uniform()));
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

/// One expert's FFN on one row `x` (length H): `y = bf16(bf16(swiglu(bf16(x · w13))) · w2)`
/// with `w13` laid out `[gate | up]` per GMM1 column block.
fn expert_ffn(shape: &MoeShape, x: &[f32], w13: &[f32], w2: &[f32]) -> Vec<f32> {
    let (h, i, n1) = (shape.hidden as usize, shape.intermediate as usize, shape.gmm1_cols as usize);
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
    (0..h)
        .map(|col| {
            let mut acc = 0.0f32;
            for q in 0..i {
                acc += act[q] * w2[q * h + col];
            }
            bf(acc)
        })
        .collect()
}

/// The layer's output `out` on every rank (BF16 `[tokens_per_rank, hidden]`), computed from
/// `inputs` (as [`moe_inputs`] makes them, or any data of the same shapes).
pub fn moe_reference(shape: &MoeShape, inputs: &Inputs) -> Result<Vec<HostTensor>, String> {
    shape.validate()?;
    let get = |name: &str, rank: u32| {
        inputs.get(name, rank).map(HostTensor::to_f32).ok_or_else(|| format!("input `{name}` missing for rank {rank}"))
    };
    let (h, i, k, t) =
        (shape.hidden as usize, shape.intermediate as usize, shape.top_k as usize, shape.tokens_per_rank as usize);
    let (e, s) = (shape.local_experts() as usize, shape.rows_per_source() as usize);
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
        let mut out = vec![0.0f32; t * h];
        for token in 0..t {
            let mut acc = vec![0.0f32; h];
            for choice in 0..k {
                let slot = token * k + choice;
                let expert = slot / s;
                let (owner, local) = (expert / e, expert % e);
                let w13 = &w13[owner][local * h * 2 * i..(local + 1) * h * 2 * i];
                let w2 = &w2[owner][local * i * h..(local + 1) * i * h];
                let y = expert_ffn(shape, &xs[slot * h..(slot + 1) * h], w13, w2);
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
