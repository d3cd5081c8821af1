//! The machine profiles and every element type and built-in AIV op.

use hpmoe_core::dsl::*;
use hpmoe_core::model::{DType, MachineProfile};
use hpmoe_macros::taskflow;

#[taskflow(profile = ascend910b, ranks = 2)]
fn quantised() {
    const ROWS: u64 = 256;
    const H: u64 = 512;
    const B: u64 = 64;
    const X: Tensor<Bf16> = input([ROWS, H]);
    const Q: Tensor<I8> = scratch([ROWS, H]);
    const SCALE: Tensor<F32> = scratch([ROWS, 1]);
    const D: Tensor<F16> = scratch([ROWS, H]);
    const COUNT: Tensor<I32> = output([ROWS, 1]);
    const OUT: Tensor<Bf16> = output([ROWS, H]);

    #[tile(aiv, grid(b in 0..ROWS / B))]
    fn quant(b: Idx) {
        quantize(X.slice(b * B, B), Q.slice(b * B, B), SCALE.slice(b * B, B));
    }

    #[tile(aiv, grid(b in 0..ROWS / B))]
    fn dequant(b: Idx) {
        dequantize(Q.slice(b * B, B), SCALE.slice(b * B, B), D.slice(b * B, B));
        cast(D.slice(b * B, B), OUT.slice(b * B, B));
        scale_rows(OUT.slice(b * B, B), SCALE.slice(b * B, B), OUT.slice(b * B, B));
        zero(COUNT.slice(b * B, B));
    }
}

#[taskflow(profile = ascend_a3_die, ranks = 1)]
fn on_a3() {
    const A: Tensor<Bf16> = input([128, 256]);
    const W: Tensor<Bf16> = input([256, 256]);
    const C: Tensor<F32> = output([128, 256]);

    #[tile(aic, grid(n in 0..2))]
    fn mm(n: Idx) {
        matmul(A, W.all().slice(n * 128, 128), C.all().slice(n * 128, 128));
    }
}

fn main() {
    let tf = quantised().taskflow().unwrap();
    assert_eq!(tf.profile, MachineProfile::ascend910b(2));
    let dtypes: Vec<DType> = tf.tensors.iter().map(|t| t.dtype).collect();
    assert_eq!(dtypes, [DType::Bf16, DType::I8, DType::F32, DType::F16, DType::I32, DType::Bf16]);
    let table = quantised().table().unwrap();
    assert_eq!(table.view().header.cores_per_rank, 72);
    assert_eq!(table.entries().len(), 8 * 2);

    let a3 = on_a3().taskflow().unwrap();
    assert_eq!(a3.profile, MachineProfile::ascend_a3_die(1));
    assert_eq!(on_a3().table().unwrap().entries().len(), 2);
}
