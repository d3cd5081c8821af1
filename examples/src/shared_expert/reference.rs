//! Data for the variant and the naive sequential reference it must equal bitwise.
//!
//! The reference is written from the layer's description alone, with plain loops over ranks,
//! tokens, choices and columns — no tiles, regions, schedule or op registry; each expert's FFN
//! (routed and shared alike) is the routed layer's reference one
//! ([`hpmoe_host::exec::moe_reference::expert_ffn`]). Each value is
//! rounded to BF16 where the taskflow stores it (after each matmul and after SwiGLU, in both
//! experts; once at the end of the final sum), and each sum runs in the order the ops fix:
//! matmuls over the inner dimension ascending from +0 in FP32; the final sum from the shared
//! expert's output, over choices ascending, in FP32.

use super::SharedMoe;
use crate::ExampleError;
use hpmoe_core::model::DType;
use hpmoe_host::exec::moe_reference::{expert_ffn, moe_inputs};
use hpmoe_host::exec::{HostTensor, Inputs};
use hpmoe_host::rng::SplitMix;

/// Deterministic data for every input of [`SharedMoe::taskflow`]: the routed layer's
/// `moe_inputs` (weights different on every rank), then on every rank its tokens `x`,
/// uniform in `[-1, 1)`, and the send buffer `xs` gathered from them by the routing layout
/// (slot `j` holds token `j / top_k`); the shared expert's weights, uniform scaled by
/// `1/√fan-in`, the same on every rank (it is replicated).
pub fn inputs(shape: &SharedMoe, seed: u64) -> Inputs {
    let r = &shape.routed;
    let (t, h, k, i) = (r.tokens_per_rank, r.hidden, r.top_k, shape.shared.intermediate);
    let mut inputs = moe_inputs(r, seed);
    for rank in 0..r.ranks {
        let mut rng = SplitMix::new(seed ^ 0x5EED_0F70_CE00 ^ u64::from(rank).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let x = HostTensor::from_fn(DType::Bf16, &[t, h], |_| rng.uniform());
        let row = |token: usize| &x.bits()[token * h as usize..(token + 1) * h as usize];
        let xs: Vec<u32> = (0..(t * k) as usize).flat_map(|slot| row(slot / k as usize).iter().copied()).collect();
        inputs.set_rank("xs", rank, HostTensor::from_bits(DType::Bf16, &[t * k, h], xs));
        inputs.set_rank("x", rank, x);
    }
    let mut rng = SplitMix::new(seed ^ 0x5AA2_ED00_0000_0001);
    let (s13, s2) = (1.0 / (h as f32).sqrt(), 1.0 / (i as f32).sqrt());
    inputs.set("shared_w13", HostTensor::from_fn(DType::Bf16, &[h, 2 * i], |_| rng.uniform() * s13));
    inputs.set("shared_w2", HostTensor::from_fn(DType::Bf16, &[i, h], |_| rng.uniform() * s2));
    inputs
}

/// The layer's output `out` on every rank (BF16 `[tokens_per_rank, hidden]`):
/// `out[t] = bf16(shared(x[t]) + Σ_c topk_weights[t, c] · expert_{e(t, c)}(x[t]))`, where
/// choice `c` of token `t` goes to global expert `(t·k + c) / S` (the routing layout of
/// [`hpmoe_host::moe`]), owned by rank `expert / E` as its local expert `expert % E`.
pub fn reference(shape: &SharedMoe, inputs: &Inputs) -> Result<Vec<HostTensor>, ExampleError> {
    shape.validate()?;
    let get = |name: &str, rank: u32| {
        inputs
            .get(name, rank)
            .map(HostTensor::to_f32)
            .ok_or_else(|| ExampleError::MissingInput { name: name.into(), rank })
    };
    let r = &shape.routed;
    let (h, i, k, t) = (r.hidden as usize, r.intermediate as usize, r.top_k as usize, r.tokens_per_rank as usize);
    let (e, s) = (r.local_experts() as usize, r.rows_per_source() as usize);
    let (si, s_cols) = (shape.shared.intermediate as usize, shape.shared.gmm1_cols as usize);
    let mut w13 = Vec::new();
    let mut w2 = Vec::new();
    for rank in 0..r.ranks {
        w13.push(get("w13", rank)?);
        w2.push(get("w2", rank)?);
    }
    let mut outs = Vec::new();
    for rank in 0..r.ranks {
        let x = get("x", rank)?;
        let weights = get("topk_weights", rank)?;
        let (sw13, sw2) = (get("shared_w13", rank)?, get("shared_w2", rank)?);
        let mut out = vec![0.0f32; t * h];
        for token in 0..t {
            let row = &x[token * h..(token + 1) * h];
            let mut acc = expert_ffn(row, &sw13, &sw2, si, s_cols);
            for choice in 0..k {
                let expert = (token * k + choice) / s;
                let (owner, local) = (expert / e, expert % e);
                let w13 = &w13[owner][local * h * 2 * i..(local + 1) * h * 2 * i];
                let w2 = &w2[owner][local * i * h..(local + 1) * i * h];
                let y = expert_ffn(row, w13, w2, i, r.gmm1_cols as usize);
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
