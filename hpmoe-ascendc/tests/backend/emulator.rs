//! Generated kernels run on the CPU emulation of the device API and end with every tensor of
//! every rank equal, bit for bit, to the host executor's run of the same table: each built-in op,
//! a user op, guarded tiles, hardware-flagged AIC → AIV dependencies, puts across ranks, chains
//! inside a family, and the
//! MoE layer at its tiny shapes (balanced and natural routing). Skipped, with a note, where g++
//! is missing.

use crate::common;

use common::taskflows::{
    all_ops, backward_gather_ops, backward_matmuls, backward_vector_ops, guarded, quantize_blocks, small,
};
use hpmoe_ascendc::emulator::Emulation;
use hpmoe_ascendc::{EmitOptions, KernelFiles, emit_with};
use hpmoe_core::model::Taskflow;
use hpmoe_core::schedule::SimpleCost;
use hpmoe_host::exec::moe_reference::moe_inputs;
use hpmoe_host::exec::{Arg, ArgDesc, Executor, Inputs, OpError, OpImpls, RefOp, RunOptions, ShapeMismatch};
use hpmoe_host::moe::{DispatchPrecision, MoeShape};

/// `out += 2 * src` (tests/cpp/user_ops.h), in FP32 like the device function.
#[derive(Debug)]
struct Twice;

impl RefOp for Twice {
    fn check(&self, args: &[ArgDesc]) -> Result<(), OpError> {
        match args {
            [a, b] if a.elements() == b.elements() => Ok(()),
            [a, b] => Err(ShapeMismatch::SameElements(a.clone(), b.clone()).into()),
            _ => Err(OpError::Arity { expected: 2, got: args.len() }),
        }
    }

    fn run(&self, args: &[Arg<'_>]) -> Result<(), OpError> {
        let (src, mut out) = (args[0].load(), args[1].load());
        for (o, s) in out.iter_mut().zip(src) {
            *o += s * 2.0;
        }
        args[1].store(&out)
    }
}

fn impls() -> OpImpls {
    let mut impls = OpImpls::builtin();
    impls.register("twice", Twice).unwrap();
    impls
}

fn kernel_of(tf: &Taskflow) -> (hpmoe_core::Compiled, KernelFiles) {
    // With hardware flags (the default of a plan): the kernel and the executor run one table and
    // one flag plan.
    let compiled = hpmoe_core::compile_with(tf, &SimpleCost::default(), &hpmoe_core::CompileOptions::default())
        .unwrap_or_else(|d| panic!("{}", d.render(&tf.sources)));
    let emit = EmitOptions { includes: vec!["user_ops.h".into()], ..EmitOptions::default() };
    let kernel = emit_with(tf, &compiled, &emit).unwrap();
    (compiled, kernel)
}

/// Runs `tf`'s kernel on the emulator and its table on the host executor; every tensor of every
/// rank must be bitwise equal.
fn emulator_equals_executor(tf: &Taskflow, inputs: &Inputs) {
    let Some(options) = common::emulator_options() else { return };
    let (compiled, kernel) = kernel_of(tf);
    let emulation = Emulation::build(&kernel, &options).unwrap_or_else(|e| panic!("{e}"));
    let run = emulation.run(tf, inputs).unwrap_or_else(|e| panic!("{}: {e}", tf.name));
    assert_eq!(kernel.table, compiled.table);
    let exec = Executor::for_compiled(tf, &compiled, &impls()).unwrap();
    let host = exec.run(inputs, &RunOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    if let Some(d) = run.first_difference(&host.snapshot) {
        panic!("{}: the emulated kernel and the host executor differ: {d}", tf.name);
    }
}

#[test]
fn the_small_kernel_puts_matmuls_flags_and_user_op() {
    let tf = small();
    emulator_equals_executor(&tf, &Inputs::random(&tf, 1));
}

#[test]
fn every_built_in_op() {
    let tf = all_ops();
    emulator_equals_executor(&tf, &Inputs::random(&tf, 2));
}

/// Quantisation over several row blocks and column tiles: its per-pipe syncs hold at every
/// block, not only the first (each is shown needed in tests/emulator_faults.rs).
#[test]
fn quantize_over_row_blocks_and_column_tiles() {
    let tf = quantize_blocks();
    emulator_equals_executor(&tf, &Inputs::random(&tf, 3));
}

/// Chains inside a family, data flowing along them through global memory: `mm(s)` multiplies
/// the product `mm(s - 1)` wrote, all on one AIC, and `sum(e, s)` adds row `s` into the running
/// sum `sum(e, s - 1)` left, on the AIVs.
#[test]
fn chains_inside_a_family_pass_their_data_along() {
    use hpmoe_core::model::{CoreKind, DType, IndexSel, MachineProfile};
    let mut tf = Taskflow::new("chains", MachineProfile::small(1, 2));
    let x = tf.input("x", DType::Bf16, &[16, 16]);
    let w = tf.input("w", DType::Bf16, &[16, 16]);
    let h = tf.output("h", DType::Bf16, &[5, 16, 16]);
    let rows = tf.input("rows", DType::F32, &[2, 6, 16]);
    let sums = tf.output("sums", DType::F32, &[2, 7, 16]);
    tf.tile("first", CoreKind::Aic, |t| t.op("matmul", [x.whole(), w.whole(), h.at(0)]));
    tf.tile("mm", CoreKind::Aic, |t| {
        let s = t.grid("s", 4);
        t.op("matmul", [h.at(s.clone()), w.whole(), h.at(s.clone() + 1)]);
        t.after("mm", [IndexSel::At(s - 1)]);
    });
    tf.tile("start", CoreKind::Aiv, |t| {
        let e = t.grid("e", 2);
        t.op("zero", [sums.at(e).at(0)]);
    });
    tf.tile("sum", CoreKind::Aiv, |t| {
        let e = t.grid("e", 2);
        let s = t.grid("s", 6);
        t.op("copy", [sums.at(e.clone()).at(s.clone()), sums.at(e.clone()).at(s.clone() + 1)]);
        t.op("accumulate", [rows.at(e.clone()).at(s.clone()), sums.at(e.clone()).at(s.clone() + 1)]);
        t.after("sum", [IndexSel::At(e), IndexSel::At(s - 1)]);
    });
    emulator_equals_executor(&tf, &Inputs::random(&tf, 5));
}

#[test]
fn guarded_tiles_and_the_gathering_weighted_sum() {
    let tf = guarded();
    let mut inputs = Inputs::random(&tf, 3);
    // Counts that leave some blocks empty and fill others; slots in range, one dropped choice.
    for rank in 0..2 {
        let counts = if rank == 0 { [6.0, 0.0] } else { [3.0, 8.0] };
        inputs.set_rank(
            "send_counts",
            rank,
            hpmoe_host::exec::HostTensor::from_f32(hpmoe_core::model::DType::I32, &[2], &counts),
        );
        let slots: Vec<f32> = (0..16).map(|i| if i == 5 { -1.0 } else { ((i * 3) % 16) as f32 }).collect();
        inputs.set_rank(
            "slot_of",
            rank,
            hpmoe_host::exec::HostTensor::from_f32(hpmoe_core::model::DType::I32, &[8, 2], &slots),
        );
    }
    emulator_equals_executor(&tf, &inputs);
}

#[test]
fn moe_layer_tiny_2() {
    let shape = MoeShape::tiny(2);
    emulator_equals_executor(&shape.taskflow().unwrap(), &moe_inputs(&shape, 7));
}

#[test]
fn moe_layer_tiny_4() {
    let shape = MoeShape::tiny(4);
    emulator_equals_executor(&shape.taskflow().unwrap(), &moe_inputs(&shape, 7));
}

#[test]
fn moe_layer_tiny_natural_2() {
    let shape = MoeShape::tiny_natural(2);
    emulator_equals_executor(&shape.taskflow().unwrap(), &moe_inputs(&shape, 7));
}

#[test]
fn moe_layer_tiny_natural_4() {
    let shape = MoeShape::tiny_natural(4);
    emulator_equals_executor(&shape.taskflow().unwrap(), &moe_inputs(&shape, 7));
}

/// With a relay per rank (a `fence` tile, no work) between the combine puts and the weighted
/// sums: the sums wait for it alone, and still read every put's rows.
#[test]
fn moe_layer_tiny_natural_2_with_a_relay() {
    let shape = MoeShape::tiny_natural(2).with_relay();
    emulator_equals_executor(&shape.taskflow().unwrap(), &moe_inputs(&shape, 7));
}

/// INT8 dispatch: quantised rows and their scales put across ranks, dequantised per block
/// before GMM1; every tensor (the quantised send buffer and the received scales included)
/// against the executor.
#[test]
fn moe_layer_tiny_int8_2() {
    let shape = MoeShape::tiny(2).with_dispatch(DispatchPrecision::Int8);
    emulator_equals_executor(&shape.taskflow().unwrap(), &moe_inputs(&shape, 7));
}

#[test]
fn moe_layer_tiny_natural_int8_2() {
    let shape = MoeShape::tiny_natural(2).with_dispatch(DispatchPrecision::Int8);
    emulator_equals_executor(&shape.taskflow().unwrap(), &moe_inputs(&shape, 7));
}

/// `tf` cut down to one tile family: the tensors it reads but does not write become inputs (given
/// random data), so the family's ops run alone in a kernel of their own.
fn family_alone(tf: &Taskflow, family: usize) -> Taskflow {
    let mut one = tf.clone();
    let f = tf.families[family].clone();
    one.name = format!("{}_{}", tf.name, f.name);
    let mut written = std::collections::BTreeSet::new();
    for call in &f.body {
        let spec = tf.ops.get(&call.op).expect("a registered op");
        for (param, region) in spec.params.iter().zip(&call.args) {
            if param.access.writes() {
                written.insert(region.tensor.clone());
            }
        }
    }
    for t in &mut one.tensors {
        if !written.contains(&t.name) {
            t.kind = hpmoe_core::model::TensorKind::Input;
        }
    }
    one.families = vec![f];
    one
}

/// `inputs` with every i32 input (row indices, counts) folded into -1..15: in range for the
/// 16-row gather tables of these taskflows, with some dropped (-1) choices.
fn small_indices(tf: &Taskflow, mut inputs: Inputs) -> Inputs {
    use hpmoe_core::model::{DType, TensorKind};
    for t in tf.tensors.iter().filter(|t| t.kind == TensorKind::Input && t.dtype == DType::I32) {
        for rank in 0..tf.profile.ranks {
            let values: Vec<f32> = inputs.get(&t.name, rank).unwrap().to_f32();
            let folded: Vec<f32> = values.iter().map(|v| (*v as i64).rem_euclid(17) as f32 - 1.0).collect();
            inputs.set_rank(&t.name, rank, hpmoe_host::exec::HostTensor::from_f32(DType::I32, &t.shape, &folded));
        }
    }
    inputs
}

#[test]
fn every_built_in_op_alone_in_a_kernel() {
    // One kernel per family of the op-covering taskflows: each built-in op runs in a kernel of
    // its own (or beside only the ops its family needs), against the executor bitwise.
    let mut ops_seen = std::collections::BTreeSet::new();
    let backward = [
        backward_matmuls(1),
        backward_vector_ops(3, 2, 40, 24, hpmoe_core::model::DType::Bf16),
        backward_gather_ops(8, 2, 40, 16, hpmoe_core::model::DType::Bf16),
    ];
    for tf in [all_ops(), small(), guarded(), MoeShape::tiny(2).taskflow().unwrap()].into_iter().chain(backward) {
        for family in 0..tf.families.len() {
            let one = family_alone(&tf, family);
            // An accumulation alone would read a region nothing wrote (matmul_accumulate and
            // matmul_tn_accumulate run in chains in tests/accumulation.rs and backward_ops.rs).
            if one.families[0]
                .body
                .iter()
                .any(|c| matches!(c.op.as_str(), "matmul_accumulate" | "matmul_tn_accumulate"))
            {
                continue;
            }
            for call in &one.families[0].body {
                ops_seen.insert(call.op.clone());
            }
            emulator_equals_executor(&one, &small_indices(&one, Inputs::random(&one, 9)));
        }
    }
    let every = [
        "matmul",
        "put",
        "copy",
        "zero",
        "swiglu",
        "cast",
        "quantize",
        "dequantize",
        "scale_rows",
        "accumulate",
        "weighted_accumulate",
        "gather_weighted_accumulate",
        "matmul_nt",
        "matmul_tn",
        "swiglu_backward",
        "scale_rows_repeat",
        "row_dot_topk",
        "sum_topk",
        "gather_scale_rows_repeat",
        "gather_row_dot_topk",
        "gather_sum_topk",
    ];
    for op in every {
        assert!(ops_seen.contains(op), "{op} ran in no kernel of its own");
    }
}
