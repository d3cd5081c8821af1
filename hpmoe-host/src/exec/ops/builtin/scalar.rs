//! The scalar functions of the built-in bodies, also what hpmoe-host's references compute
//! with (re-exported as `exec::ops::{silu, sigmoid, swiglu_grad}`).

/// `x · sigmoid(x)`, computed as `x / (1 + e^(-x))` in `f32`.
pub fn silu(x: f32) -> f32 {
    x / (1.0 + (-x).exp())
}

/// `sigmoid(x)`, computed as `1 / (1 + e^(-x))` in `f32` (the `e^(-x)` of [`silu`]).
pub fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

/// The SwiGLU gradient at one `(g, u)` pair with output gradient `d`, in `f32`: with
/// `s = sigmoid(g)`, returns `(dg, du)` = `(((d · u) · s) · (1 + g · (1 − s)), (d · g) · s)`,
/// evaluated in exactly that order.
pub fn swiglu_grad(g: f32, u: f32, d: f32) -> (f32, f32) {
    let s = sigmoid(g);
    let dg = ((d * u) * s) * (1.0 + g * (1.0 - s));
    let du = (d * g) * s;
    (dg, du)
}
