//! [`LayerValues`]: the layer's forward in f64 without rounding, for finite differences against
//! the gradients of [`super::moe_backward_reference`].

use super::{Dims, values};
use crate::exec::ReferenceError;
use crate::exec::memory::Inputs;
use crate::moe::MoeShape;

/// The forward's inputs and the output gradient as f64 values, per rank, for finite
/// differences: [`LayerValues::loss`] evaluates `Σ_ranks Σ dOut ⊙ out` of the layer in f64
/// without any rounding, so perturbing one value by `±ε` and differencing the loss gives the
/// derivative the backward computes (up to the backward's BF16 roundings).
#[derive(Clone, Debug, PartialEq)]
pub struct LayerValues {
    /// Per rank: `xs` `[R·E·S, H]`, row `j` carrying choice `j % k` of token `j / k`.
    pub xs: Vec<Vec<f64>>,
    /// Per rank: `w13` `[E, H, 2I]`.
    pub w13: Vec<Vec<f64>>,
    /// Per rank: `w2` `[E, I, H]`.
    pub w2: Vec<Vec<f64>>,
    /// Per rank: `topk_weights` `[T, k]`.
    pub weights: Vec<Vec<f64>>,
    /// Per rank: `dout` `[T, H]`.
    pub dout: Vec<Vec<f64>>,
}

impl LayerValues {
    /// The values of `inputs` (as [`super::moe_backward_inputs`] makes them).
    ///
    /// # Errors
    /// If the shape is invalid, not balanced or not BF16-dispatched, or an input is missing or
    /// misshapen.
    pub fn from_inputs(shape: &MoeShape, inputs: &Inputs) -> Result<LayerValues, ReferenceError> {
        let d = Dims::balanced_bf16(shape)?;
        let get = |name: &str, len: usize| -> Result<Vec<Vec<f64>>, ReferenceError> {
            (0..d.r).map(|rank| Ok(values(inputs, name, rank, len)?.into_iter().map(f64::from).collect())).collect()
        };
        Ok(LayerValues {
            xs: get("xs", d.slots() * d.h)?,
            w13: get("w13", d.e * d.h * 2 * d.i)?,
            w2: get("w2", d.e * d.i * d.h)?,
            weights: get("topk_weights", d.t * d.k)?,
            dout: get("dout", d.t * d.h)?,
        })
    }

    /// `Σ_ranks Σ_{t, h} dOut[t, h] · out[t, h]` with `out[t] = Σ_c w[t, c] · FFN_g(xs[t·k + c])`
    /// (`g` the global expert of slot `t·k + c`), all in f64 with no rounding.
    ///
    /// # Errors
    /// If the shape is invalid, not balanced or not BF16-dispatched.
    pub fn loss(&self, shape: &MoeShape) -> Result<f64, ReferenceError> {
        let d = Dims::balanced_bf16(shape)?;
        let (h, i, n1) = (d.h, d.i, d.n1);
        let mut loss = 0.0f64;
        for rank in 0..d.r {
            for slot in 0..d.slots() {
                let expert = slot / d.c;
                let (owner, e) = (expert / d.e, expert % d.e);
                let x = &self.xs[rank][slot * h..(slot + 1) * h];
                let w13 = &self.w13[owner][e * h * 2 * i..(e + 1) * h * 2 * i];
                let w2 = &self.w2[owner][e * i * h..(e + 1) * i * h];
                let gate_up: Vec<f64> =
                    (0..2 * i).map(|col| (0..h).map(|p| x[p] * w13[p * 2 * i + col]).sum()).collect();
                let act: Vec<f64> = (0..i)
                    .map(|q| {
                        let (block, qq) = (q / (n1 / 2), q % (n1 / 2));
                        let (g, u) = (gate_up[block * n1 + qq], gate_up[block * n1 + n1 / 2 + qq]);
                        g / (1.0 + (-g).exp()) * u
                    })
                    .collect();
                let w = self.weights[rank][slot];
                let token = slot / d.k;
                for col in 0..h {
                    let y: f64 = (0..i).map(|q| act[q] * w2[q * h + col]).sum();
                    loss += self.dout[rank][token * h + col] * w * y;
                }
            }
        }
        Ok(loss)
    }
}
