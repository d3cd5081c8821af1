//! A custom fused MoE variant without touching hpmoe: a user-defined AIV op fusing SwiGLU
//! with a per-row scale (its Rust reference body runs on the host, `emit` is its AscendC
//! call), registered in the taskflow's op registry and called from a tile like a built-in.

use hpmoe_core::dsl::*;
use hpmoe_core::model::{Access, CoreKind, WorkModel};
use hpmoe_macros::taskflow;

#[taskflow(profile = small(2), ranks = 2)]
fn scaled_ffn() {
    const ROWS: u64 = 32;
    const INTER: u64 = 16;
    const B: u64 = 8;
    const GATE_UP: Tensor<F32> = input([ROWS, 2 * INTER]);
    const SCALE: Tensor<F32> = input([ROWS, 1]);
    const ACT: Tensor<F32> = output([ROWS, INTER]);

    /// act[i, j] = silu(gate[i, j]) * up[i, j] * scale[i], gate and up the halves of a row.
    #[op(aiv, work = vector(7), emit = "hpmoe_user::ScaledSwiGlu({act}, {gate_up}, {scale})")]
    fn scaled_swiglu(gate_up: &TileData, scale: &TileData, act: &mut TileData) {
        let half = gate_up.row_len() / 2;
        for ((row, s), out) in gate_up.rows().zip(scale.rows()).zip(act.rows_mut()) {
            for (j, o) in out.iter_mut().enumerate() {
                let (g, u) = (row[j], row[half + j]);
                *o = g / (1.0 + (-g).exp()) * u * s[0];
            }
        }
    }

    /// acc += src (a read-write parameter).
    #[op(aiv, emit = "hpmoe_user::AddInto({acc}, {src})", read_write(acc))]
    fn add_into(src: &TileData, acc: &mut TileData) {
        for (a, s) in acc.values.iter_mut().zip(&src.values) {
            *a += s;
        }
    }

    #[tile(aiv, grid(m in 0..ROWS / B))]
    fn act(m: Idx) {
        scaled_swiglu(GATE_UP.slice(m * B, B), SCALE.slice(m * B, B), ACT.slice(m * B, B));
        add_into(ACT.slice(m * B, B), ACT.slice(m * B, B));
    }
}

fn main() {
    let program = scaled_ffn();
    let tf = program.taskflow().unwrap();
    let spec = tf.ops.get("scaled_swiglu").expect("the user op is registered");
    assert_eq!(spec.core, CoreKind::Aiv);
    assert_eq!(spec.work, WorkModel::Vector { flops_per_element: 7 });
    assert_eq!(spec.params.iter().map(|p| (p.name.as_str(), p.access)).collect::<Vec<_>>(), [
        ("gate_up", Access::Read),
        ("scale", Access::Read),
        ("act", Access::Write)
    ]);
    assert_eq!(spec.emit(), Some("hpmoe_user::ScaledSwiGlu({act}, {gate_up}, {scale})"));
    assert!(spec.doc.starts_with("act[i, j] = silu(gate[i, j])"));
    assert_eq!(tf.ops.get("add_into").unwrap().params[1].access, Access::ReadWrite);
    assert!(tf.ops.get("matmul").is_some(), "the built-ins stay registered");

    // The reference body, through the generated adapter.
    let op = program.user_op("scaled_swiglu").unwrap();
    assert_eq!((op.params, op.emit), (3, "hpmoe_user::ScaledSwiGlu({act}, {gate_up}, {scale})"));
    let mut args = [
        TileData::new(&[1, 4], vec![0.0, 1.0, 2.0, 3.0]).unwrap(),
        TileData::new(&[1, 1], vec![2.0]).unwrap(),
        TileData::zeros(&[1, 2]),
    ];
    op.run(&mut args).unwrap();
    let silu1 = 1.0 / (1.0 + (-1.0f32).exp());
    assert_eq!(args[2].values, vec![0.0, silu1 * 3.0 * 2.0]);
    assert!(op.run(&mut args[..2]).is_err(), "the argument count is checked");

    let add = program.user_op("add_into").unwrap();
    let mut args = [TileData::new(&[2], vec![1.0, 2.0]).unwrap(), TileData::new(&[2], vec![10.0, 20.0]).unwrap()];
    add.run(&mut args).unwrap();
    assert_eq!(args[1].values, vec![11.0, 22.0]);
    assert_eq!(program.table().unwrap().entries().len(), 4 * 2);
}
