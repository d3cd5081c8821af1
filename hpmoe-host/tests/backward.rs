//! The MoE-FFN backward: the plain-loop reference ([`moe_backward_reference`]) against finite
//! differences of the forward evaluated in f64 ([`LayerValues::loss`]).

use hpmoe_host::exec::moe_backward_reference::{
    LayerValues, MoeGradients, moe_backward_inputs, moe_backward_reference,
};
use hpmoe_host::moe::MoeShape;

/// Which value a gradient entry is the derivative by, and how to perturb it.
#[derive(Clone, Copy, Debug)]
enum Entry {
    /// `dx[rank][token, col]`: every routed copy of the token's row moves together.
    Dx { rank: usize, token: usize, col: usize },
    /// `dw13[rank][e, p, col]`.
    Dw13 { rank: usize, index: usize },
    /// `dw2[rank][e, q, col]`.
    Dw2 { rank: usize, index: usize },
    /// `d_weights[rank][token, choice]`.
    DWeights { rank: usize, index: usize },
}

impl Entry {
    /// The gradient's name in the backward taskflow.
    fn name(self) -> &'static str {
        match self {
            Entry::Dx { .. } => "dx",
            Entry::Dw13 { .. } => "dw13",
            Entry::Dw2 { .. } => "dw2",
            Entry::DWeights { .. } => "d_weights",
        }
    }

    /// The gradient the layer computed for this entry.
    fn gradient(self, grads: &[MoeGradients], shape: &MoeShape) -> f64 {
        let (rank, index) = match self {
            Entry::Dx { rank, token, col } => (rank, token * shape.hidden as usize + col),
            Entry::Dw13 { rank, index } | Entry::Dw2 { rank, index } | Entry::DWeights { rank, index } => (rank, index),
        };
        f64::from(grads[rank].get(self.name()).unwrap().get(index))
    }

    /// `values` with this entry moved by `delta`.
    fn moved(self, values: &LayerValues, shape: &MoeShape, delta: f64) -> LayerValues {
        let mut v = values.clone();
        match self {
            Entry::Dx { rank, token, col } => {
                let (k, h) = (shape.top_k as usize, shape.hidden as usize);
                for c in 0..k {
                    v.xs[rank][(token * k + c) * h + col] += delta;
                }
            }
            Entry::Dw13 { rank, index } => v.w13[rank][index] += delta,
            Entry::Dw2 { rank, index } => v.w2[rank][index] += delta,
            Entry::DWeights { rank, index } => v.weights[rank][index] += delta,
        }
        v
    }

    /// The central difference `(L(v + ε) − L(v − ε)) / 2ε` in f64.
    fn finite_difference(self, values: &LayerValues, shape: &MoeShape) -> f64 {
        const EPS: f64 = 1e-3;
        let loss = |d| self.moved(values, shape, d).loss(shape).unwrap();
        (loss(EPS) - loss(-EPS)) / (2.0 * EPS)
    }
}

/// A few entries of every gradient, on both ranks, spread over experts, rows and columns.
fn entries(shape: &MoeShape) -> Vec<Entry> {
    let (h, i, e) = (shape.hidden as usize, shape.intermediate as usize, shape.local_experts() as usize);
    let mut out = Vec::new();
    for rank in 0..shape.ranks as usize {
        for (token, col) in [(0, 0), (5, 17), (15, 31)] {
            out.push(Entry::Dx { rank, token, col });
        }
        for index in [0, h * 2 * i + 3 * 2 * i + 9, (e * h - 1) * 2 * i + 2 * i - 1] {
            out.push(Entry::Dw13 { rank, index });
        }
        for index in [1, i * h + 5 * h + 20, e * i * h - 1] {
            out.push(Entry::Dw2 { rank, index });
        }
        for index in [0, 7, 31] {
            out.push(Entry::DWeights { rank, index });
        }
    }
    out
}

/// Root mean square of gradient `name` over every rank.
fn rms(grads: &[MoeGradients], name: &str) -> f64 {
    let values: Vec<f64> = grads.iter().flat_map(|g| g.get(name).unwrap().to_f32()).map(f64::from).collect();
    (values.iter().map(|v| v * v).sum::<f64>() / values.len() as f64).sqrt()
}

/// Checks a few entries of every gradient in `grads` against central differences (ε = 10⁻³)
/// of the loss `Σ dOut ⊙ out` evaluated in f64 without rounding. The backward works from
/// BF16-rounded activations and stores BF16 activation gradients, so the two differ by a few
/// BF16 ulps of the values summed: the tolerance is 3% of the gradient's RMS over all its
/// entries (measured on `tiny(2)`, seed 3: at most 1.0% of it). Each gradient has an
/// entry of at least half its RMS, so a gradient 10% off there fails.
fn check_finite_differences(shape: &MoeShape, inputs: &hpmoe_host::exec::Inputs, grads: &[MoeGradients]) {
    let values = LayerValues::from_inputs(shape, inputs).unwrap();
    let mut largest = std::collections::BTreeMap::<&str, f64>::new();
    for entry in entries(shape) {
        let name = entry.name();
        let (g, fd) = (entry.gradient(grads, shape), entry.finite_difference(&values, shape));
        let scale = rms(grads, name);
        assert!((g - fd).abs() <= 0.03 * scale, "{entry:?}: gradient {g}, finite difference {fd}, RMS {scale}");
        let big = largest.entry(name).or_default();
        *big = big.max(fd.abs() / scale);
    }
    for (name, ratio) in largest {
        assert!(ratio >= 0.5, "`{name}`: every entry checked is below half the RMS ({ratio})");
    }
}

#[test]
fn reference_gradients_agree_with_finite_differences_of_the_f64_forward() {
    let shape = MoeShape::tiny(2);
    let inputs = moe_backward_inputs(&shape, 3).unwrap();
    let grads = moe_backward_reference(&shape, &inputs).unwrap();
    check_finite_differences(&shape, &inputs, &grads);
}
