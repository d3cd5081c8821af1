//! A taskflow written in the `#[taskflow]` DSL — puts between ranks, a built-in op and a
//! user-defined op — runs on the host executor and gives the values computed by hand.

use hpmoe_core::dsl::*;
use hpmoe_core::model::DType;
use hpmoe_host::exec::{Executor, HostTensor, Inputs, OpImpls, RunOptions};
use hpmoe_macros::taskflow;

#[taskflow(profile = small(1), ranks = 2)]
fn ring_relu() {
    const ROWS: u64 = 4;
    const COLS: u64 = 8;
    const X: Tensor<F32> = input([ROWS, COLS]);
    const RECV: Tensor<F32> = symmetric([ROWS, COLS]);
    const OUT: Tensor<F32> = output([ROWS, COLS]);

    /// out = max(x, 0) * 2
    #[op(aiv, work = vector(2), emit = "my_ops::Relu2({out}, {x})")]
    fn relu2(x: &TileData, out: &mut TileData) {
        for (o, v) in out.values.iter_mut().zip(&x.values) {
            *o = v.max(0.0) * 2.0;
        }
    }

    /// Rank r sends its rows, two at a time, to rank r + 1.
    #[tile(aiv, grid(b in 0..2))]
    fn send(b: Idx) {
        put(X.rows(b * 2, 2), RECV.on((RANK + 1) % RANKS).rows(b * 2, 2));
    }

    #[tile(aiv, grid(half in 0..2))]
    fn act(half: Idx) {
        relu2(RECV.rows(half * 2, 2), OUT.rows(half * 2, 2));
    }
}

#[test]
fn a_dsl_program_runs_on_the_host_executor() {
    let program = ring_relu();
    let impls = OpImpls::for_program(&program).unwrap();
    let exec = Executor::for_program(&program, &impls).unwrap();
    let x = |rank: u32| -> Vec<f32> { (0..32).map(|i| (i as f32 - 10.0) * (rank as f32 + 1.0)).collect() };
    let mut inputs = Inputs::new();
    for rank in 0..2 {
        inputs.set_rank("X", rank, HostTensor::from_f32(DType::F32, &[4, 8], &x(rank)));
    }
    let out = exec.run(&inputs, &RunOptions::default()).unwrap();
    for rank in 0..2u32 {
        // Rank r holds what rank r - 1 (mod 2) sent, through the user op.
        let got = out.snapshot.get(rank, "OUT").unwrap().to_f32();
        let want: Vec<f32> = x((rank + 1) % 2).iter().map(|v| v.max(0.0) * 2.0).collect();
        assert_eq!(got, want, "rank {rank}");
    }
}

#[test]
fn a_user_op_cannot_shadow_a_built_in() {
    let program = ring_relu();
    assert!(OpImpls::for_program(&program).is_ok());
    let clash = Program { user_ops: &[UserOp { name: "copy", params: 2, emit: "", reference: |_| {} }], ..program };
    assert!(OpImpls::for_program(&clash).is_err());
}

#[test]
fn the_macro_exposes_the_ascendc_kernel_source() {
    let source = ring_relu().kernel_source.expect("the backend emits this taskflow");
    assert!(source.contains("extern \"C\" __global__ __aicore__ void ring_relu("), "{source}");
    assert!(source.contains("KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2)"));
    assert!(source.contains("ASCEND_IS_AIC") && source.contains("ASCEND_IS_AIV"));
    // The user op is called through its emission template.
    assert!(source.contains("my_ops::Relu2("), "{source}");
}

/// `MoeShape::tiny_natural(2)` in the DSL: natural routing with capacity padding, guarded
/// tiles and a gathering weighted sum — the layout of `examples/dsl/moe_ffn_natural.rs`, which
/// the DeepSeek `moe_ffn_natural` example includes at its own shape.
#[taskflow(profile = small(2), ranks = 2)]
fn tiny_natural() {
    include!("tiny_shape.rs");
    const C: u64 = 12; // 1.5x the average rows per (source, expert), in whole blocks
    include!("../../../examples/dsl/moe_ffn_natural.rs");
    include!("../../../examples/dsl/moe_ffn_natural_tail.rs");
}

/// `MoeShape::tiny(2)` with INT8 dispatch in the DSL: each block quantised before its put,
/// dequantised after it lands — the layout of `examples/dsl/moe_ffn_int8.rs` (+ the shared
/// `moe_ffn_tail.rs`), which the DeepSeek `moe_ffn_int8` example includes at its own shape.
#[taskflow(profile = small(2), ranks = 2)]
fn tiny_int8() {
    include!("tiny_shape.rs");
    include!("../../../examples/dsl/moe_ffn_int8.rs");
    include!("../../../examples/dsl/moe_ffn_tail.rs");
}

/// Runs the DSL `program` (the forward layer of `shape`, whose builder's taskflow is `built`)
/// on the host executor with the builder's inputs under the DSL's tensor names (same tensors,
/// same order), for each seed, and asserts its output equals the reference's bitwise; returns
/// how many tiles were skipped past their counts in the last run.
fn runs_like_the_reference(program: &Program, shape: &hpmoe_host::moe::MoeShape) -> u64 {
    use hpmoe_host::exec::moe_reference::{moe_inputs, moe_reference};
    let built = shape.taskflow().unwrap();
    let tf = program.taskflow().unwrap();
    // One executor, several runs: each run starts its hardware-flag counts afresh.
    let exec = Executor::for_program(program, &OpImpls::for_program(program).unwrap()).unwrap();
    let mut skipped = 0;
    for seed in [1, 42] {
        let theirs = moe_inputs(shape, seed);
        let mut inputs = Inputs::new();
        for (mine, built) in tf.tensors.iter().zip(&built.tensors) {
            for rank in 0..shape.ranks {
                if let Some(t) = theirs.get(&built.name, rank) {
                    inputs.set_rank(&mine.name, rank, t.clone());
                }
            }
        }
        let out = exec.run(&inputs, &RunOptions::default()).unwrap();
        let reference = moe_reference(shape, &theirs).unwrap();
        for (rank, want) in reference.iter().enumerate() {
            let got = out.snapshot.get(rank as u32, "OUT").unwrap();
            assert_eq!(got.first_difference(want), None, "seed {seed}, rank {rank}");
        }
        assert_eq!(out.stats.tiles, shape.instances_per_rank() * u64::from(shape.ranks));
        skipped = out.stats.skipped;
    }
    skipped
}

#[test]
fn a_guarded_dsl_layer_runs_on_the_executor_bitwise_like_the_reference() {
    let shape = hpmoe_host::moe::MoeShape::tiny_natural(2);
    let program = tiny_natural();
    let tf = program.taskflow().unwrap();
    assert!(tf.same_structure(&shape.taskflow().unwrap()), "the DSL layer differs from MoeShape::tiny_natural(2)");
    assert_eq!(tf.families.iter().filter(|f| f.guard.is_some()).count(), 5, "the IR JSON carries the guards");
    // Some blocks are past their counts: those tiles ran no op but the run completed.
    assert!(runs_like_the_reference(&program, &shape) > 0);
}

#[test]
fn the_int8_dispatch_layer_in_the_dsl_is_the_builders_and_runs_like_the_reference() {
    use hpmoe_host::moe::{DispatchPrecision, MoeShape, under_dsl_names};
    let shape = MoeShape::tiny(2).with_dispatch(DispatchPrecision::Int8);
    let program = tiny_int8();
    let tf = program.taskflow().unwrap();
    let mut built = under_dsl_names(shape.taskflow().unwrap());
    assert!(tf.same_structure(&built), "the DSL layer differs from MoeShape::tiny(2) with INT8 dispatch");
    // Under the DSL's name (the table carries it), the builder's taskflow plans to the macro's
    // table and flag plan, byte for byte.
    built.name = tf.name.clone();
    let compiled = hpmoe_core::plan(&built).unwrap();
    assert!(compiled.table.to_bytes() == program.table_bytes().unwrap(), "the tables differ");
    assert!(compiled.flags_bin == program.flags_bytes, "the flag plans differ");
    // The comparison sees a difference: BF16 dispatch is another layer.
    assert!(!tf.same_structure(&MoeShape::tiny(2).taskflow().unwrap()));
    assert_eq!(runs_like_the_reference(&program, &shape), 0);
}

/// A running sum along `s` in the DSL: each `step(e, s)` runs after `step(e, s - 1)` (and
/// `step(e, 0)` after nothing of its own family), adding row `s` of `X` to the sum so far.
#[taskflow(profile = small(2), ranks = 2)]
fn running_sum() {
    const E: u64 = 3;
    const S: u64 = 8;
    const COLS: u64 = 4;
    const X: Tensor<F32> = input([E, S, COLS]);
    const SUMS: Tensor<F32> = output([E, S + 1, COLS]);

    #[tile(aiv, grid(e in 0..E))]
    fn start(e: Idx) {
        zero(SUMS.at(e).at(0));
    }

    #[tile(aiv, grid(e in 0..E, s in 0..S), after(step(e, s - 1)))]
    fn step(e: Idx, s: Idx) {
        copy(SUMS.at(e).at(s), SUMS.at(e).at(s + 1));
        accumulate(X.at(e).at(s), SUMS.at(e).at(s + 1));
    }
}

#[test]
fn a_chain_family_runs_the_running_sum_of_a_sequential_loop() {
    let (e_len, s_len, cols) = (3usize, 8usize, 4usize);
    let program = running_sum();
    let impls = OpImpls::for_program(&program).unwrap();
    let exec = Executor::for_program(&program, &impls).unwrap();
    // Large and small values mixed, so f32 sums taken in any other order would round differently.
    let x = |rank: u32| -> Vec<f32> {
        (0..e_len * s_len * cols)
            .map(|i| if i % 3 == 0 { 1e7 + i as f32 } else { 0.1 * i as f32 + rank as f32 })
            .collect()
    };
    let mut inputs = Inputs::new();
    for rank in 0..2 {
        inputs.set_rank("X", rank, HostTensor::from_f32(DType::F32, &[3, 8, 4], &x(rank)));
    }
    let out = exec.run(&inputs, &RunOptions::default()).unwrap();
    for rank in 0..2u32 {
        let x = x(rank);
        let mut want = vec![0f32; e_len * (s_len + 1) * cols];
        for e in 0..e_len {
            for s in 0..s_len {
                for c in 0..cols {
                    let sum = want[(e * (s_len + 1) + s) * cols + c] + x[(e * s_len + s) * cols + c];
                    want[(e * (s_len + 1) + s + 1) * cols + c] = sum;
                }
            }
        }
        let got = out.snapshot.get(rank, "SUMS").unwrap().to_f32();
        let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&got), bits(&want), "rank {rank}");
    }
}

/// The backward's built-ins as DSL functions: one AIC tile with the transposed matmuls (the
/// weight gradient chained over two blocks by declaration order), one AIV tile with the four
/// vector ops.
#[taskflow(profile = small(1), ranks = 1)]
fn backward_ops() {
    const T: u64 = 4;
    const K: u64 = 2;
    const H: u64 = 8;
    const W: u64 = 4;
    const DY: Tensor<F32> = input([T, H]);
    const W2: Tensor<F32> = input([W, H]);
    const A: Tensor<F32> = input([2 * T, W]);
    const GATE_UP: Tensor<F32> = input([T, 2 * W]);
    const ROUTE: Tensor<F32> = input([T, K]);
    const EXPERT_OUT: Tensor<F32> = input([T * K, H]);
    const DA: Tensor<F32> = output([T, W]);
    const DW: Tensor<F32> = output([W, H]);
    const DGU: Tensor<F32> = output([T, 2 * W]);
    const REPEATED: Tensor<F32> = output([T * K, H]);
    const DROUTE: Tensor<F32> = output([T, K]);
    const SUMMED: Tensor<F32> = output([T, H]);

    #[tile(aic)]
    fn dgrad() {
        matmul_nt(DY.rows(0, T), W2.rows(0, W), DA.rows(0, T));
    }

    #[tile(aic)]
    fn wgrad0() {
        matmul_tn(A.rows(0, T), DY.rows(0, T), DW.rows(0, W));
    }

    #[tile(aic)]
    fn wgrad1() {
        matmul_tn_accumulate(A.rows(T, T), DY.rows(0, T), DW.rows(0, W));
    }

    #[tile(aiv)]
    fn vec_grads() {
        swiglu_backward(GATE_UP.rows(0, T), DA.rows(0, T), DGU.rows(0, T));
        scale_rows_repeat(DY.rows(0, T), ROUTE.rows(0, T), REPEATED.rows(0, T * K));
        row_dot_topk(DY.rows(0, T), EXPERT_OUT.rows(0, T * K), DROUTE.rows(0, T));
        sum_topk(EXPERT_OUT.rows(0, T * K), SUMMED.rows(0, T));
    }
}

#[test]
fn the_backward_built_ins_are_dsl_functions_with_the_builders_results() {
    use hpmoe_core::model::{CoreKind, MachineProfile, Taskflow};
    use hpmoe_host::exec::SequentialRunner;
    let program = backward_ops();
    let exec = Executor::for_program(&program, &OpImpls::builtin()).unwrap();
    let (t, k, h, w) = (4u64, 2u64, 8u64, 4u64);
    let mut tf = Taskflow::new("backward_ops", MachineProfile::small(1, 1));
    let f = DType::F32;
    let dy = tf.input("DY", f, &[t, h]);
    let w2 = tf.input("W2", f, &[w, h]);
    let a = tf.input("A", f, &[2 * t, w]);
    let gate_up = tf.input("GATE_UP", f, &[t, 2 * w]);
    let route = tf.input("ROUTE", f, &[t, k]);
    let expert_out = tf.input("EXPERT_OUT", f, &[t * k, h]);
    let [da, dw, dgu, repeated, droute, summed] = [
        ("DA", [t, w]),
        ("DW", [w, h]),
        ("DGU", [t, 2 * w]),
        ("REPEATED", [t * k, h]),
        ("DROUTE", [t, k]),
        ("SUMMED", [t, h]),
    ]
    .map(|(name, shape)| tf.output(name, f, &shape));
    tf.tile("dgrad", CoreKind::Aic, |x| x.op("matmul_nt", [dy.whole(), w2.whole(), da.whole()]));
    tf.tile("wgrad0", CoreKind::Aic, |x| x.op("matmul_tn", [a.slice(0, t), dy.whole(), dw.whole()]));
    tf.tile("wgrad1", CoreKind::Aic, |x| x.op("matmul_tn_accumulate", [a.slice(t as i64, t), dy.whole(), dw.whole()]));
    tf.tile("vec_grads", CoreKind::Aiv, |x| {
        x.op("swiglu_backward", [gate_up.whole(), da.whole(), dgu.whole()]);
        x.op("scale_rows_repeat", [dy.whole(), route.whole(), repeated.whole()]);
        x.op("row_dot_topk", [dy.whole(), expert_out.whole(), droute.whole()]);
        x.op("sum_topk", [expert_out.whole(), summed.whole()]);
    });
    let inputs = Inputs::random(&tf, 3);
    let dsl = exec.run(&inputs, &RunOptions::default()).unwrap().snapshot;
    let built = SequentialRunner::new(&tf, &OpImpls::builtin()).unwrap().run(&inputs).unwrap().snapshot;
    assert_eq!(dsl.first_difference(&built), None);
    assert!(dsl.get(0, "DW").unwrap().to_f32().iter().any(|&v| v != 0.0));
}
