//! The reference ops on hand-checked data, run by both the sequential runner and the
//! executor; and the errors about ops reported before a run starts.

use hpmoe_core::model::{CoreKind, DType, MachineProfile, OpSpec, Param, Taskflow, TensorRef, WorkModel};
use hpmoe_core::schedule::SimpleCost;
use hpmoe_host::exec::{
    Arg, ArgDesc, ExecError, Executor, HostTensor, IndexAt, Inputs, OpError, OpImpls, OpProblem, RefOp, RunOptions,
    SequentialRunner, SetupError, ShapeMismatch, Snapshot, TileError,
};

/// Runs `tf` sequentially and on the executor, checks both agree bitwise, returns rank 0's
/// tensors.
pub(crate) fn run_both(tf: &Taskflow, impls: &OpImpls, inputs: &Inputs) -> Snapshot {
    let seq = SequentialRunner::new(tf, impls).unwrap().run(inputs).unwrap();
    let compiled =
        hpmoe_core::compile(tf, &SimpleCost::default()).unwrap_or_else(|d| panic!("{}", d.render(&tf.sources)));
    let exec = Executor::new(tf, &compiled.table, impls).unwrap();
    let par = exec.run(inputs, &RunOptions::default()).unwrap();
    assert_eq!(par.snapshot.first_difference(&seq.snapshot), None);
    par.snapshot
}

fn f32s(t: &HostTensor) -> Vec<f32> {
    t.to_f32()
}

#[test]
fn matmul_sums_in_f32_in_ascending_inner_order() {
    let mut tf = Taskflow::new("mm", MachineProfile::small(1, 1));
    let a = tf.input("a", DType::F32, &[2, 3]);
    let b = tf.input("b", DType::F32, &[3, 2]);
    let c = tf.output("c", DType::F32, &[2, 2]);
    let d = tf.input("d", DType::F32, &[1, 3]);
    let ones = tf.input("ones", DType::F32, &[3, 1]);
    let e = tf.output("e", DType::Bf16, &[1, 1]);
    tf.tile("mm", CoreKind::Aic, |t| {
        t.op("matmul", [a.whole(), b.whole(), c.whole()]);
        t.op("matmul", [d.whole(), ones.whole(), e.whole()]);
    });
    let mut inputs = Inputs::new();
    inputs
        .set("a", HostTensor::from_f32(DType::F32, &[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]))
        .set("b", HostTensor::from_f32(DType::F32, &[3, 2], &[7.0, 8.0, 9.0, 10.0, 11.0, 12.0]))
        // (1 + 1e8) + -1e8 = 0 in f32; the other order would give 1.
        .set("d", HostTensor::from_f32(DType::F32, &[1, 3], &[1.0, 1e8, -1e8]))
        .set("ones", HostTensor::filled(DType::F32, &[3, 1], 1.0));
    let out = run_both(&tf, &OpImpls::builtin(), &inputs);
    assert_eq!(f32s(out.get(0, "c").unwrap()), vec![58.0, 64.0, 139.0, 154.0]);
    assert_eq!(out.get(0, "e").unwrap().bits(), &[0]); // +0.0, rounded to bf16
}

#[test]
fn swiglu_scale_rows_and_top_k_weighted_accumulation() {
    let mut tf = Taskflow::new("vec", MachineProfile::small(1, 1));
    let gu = tf.input("gu", DType::F32, &[1, 4]);
    let act = tf.output("act", DType::F32, &[1, 2]);
    let src = tf.input("src", DType::F32, &[4, 2]);
    let scale = tf.input("scale", DType::F32, &[4]);
    let scaled = tf.output("scaled", DType::F32, &[4, 2]);
    let w = tf.input("w", DType::F32, &[2, 2]);
    let sum = tf.output("sum", DType::F32, &[2, 2]);
    let cancel = tf.input("cancel", DType::F32, &[3, 1]);
    let ones = tf.input("ones", DType::F32, &[3]);
    let csum = tf.output("csum", DType::F32, &[1, 1]);
    tf.tile("v", CoreKind::Aiv, |t| {
        t.op("swiglu", [gu.whole(), act.whole()]);
        t.op("scale_rows", [src.whole(), scale.whole(), scaled.whole()]);
        t.op("zero", [sum.whole()]);
        t.op("weighted_accumulate", [src.whole(), w.whole(), sum.whole()]);
        t.op("zero", [csum.whole()]);
        t.op("weighted_accumulate", [cancel.whole(), ones.whole(), csum.whole()]);
    });
    let mut inputs = Inputs::new();
    inputs
        .set("gu", HostTensor::from_f32(DType::F32, &[1, 4], &[1.0, -2.0, 3.0, 0.5]))
        .set("src", HostTensor::from_f32(DType::F32, &[4, 2], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]))
        .set("scale", HostTensor::from_f32(DType::F32, &[4], &[2.0, -1.0, 0.5, 0.0]))
        .set("w", HostTensor::from_f32(DType::F32, &[2, 2], &[0.5, 0.25, 1.0, -1.0]))
        .set("cancel", HostTensor::from_f32(DType::F32, &[3, 1], &[1.0, 1e8, -1e8]))
        .set("ones", HostTensor::filled(DType::F32, &[3], 1.0));
    let out = run_both(&tf, &OpImpls::builtin(), &inputs);
    let silu = |x: f32| x / (1.0 + (-x).exp());
    assert_eq!(f32s(out.get(0, "act").unwrap()), vec![silu(1.0) * 3.0, silu(-2.0) * 0.5]);
    assert_eq!(f32s(out.get(0, "scaled").unwrap()), vec![2.0, 4.0, -3.0, -4.0, 2.5, 3.0, 0.0, 0.0]);
    // Token 0: rows 0, 1 with weights 0.5, 0.25; token 1: rows 2, 3 with 1, -1.
    assert_eq!(f32s(out.get(0, "sum").unwrap()), vec![0.5 + 0.75, 1.0 + 1.0, 5.0 - 7.0, 6.0 - 8.0]);
    // Choices are summed in order: (0 + 1 + 1e8) - 1e8 = 0, where the reverse order gives 1.
    assert_eq!(out.get(0, "csum").unwrap().bits(), &[0]);
}

#[test]
fn quantize_dequantize_and_cast() {
    let mut tf = Taskflow::new("q", MachineProfile::small(1, 1));
    let x = tf.input("x", DType::F32, &[2, 4]);
    let q = tf.output("q", DType::I8, &[2, 4]);
    let s = tf.output("s", DType::F32, &[2]);
    let y = tf.output("y", DType::Bf16, &[2, 4]);
    let c = tf.output("c", DType::I8, &[2, 4]);
    tf.tile("q", CoreKind::Aiv, |t| {
        t.op("quantize", [x.whole(), q.whole(), s.whole()]);
        t.op("dequantize", [q.whole(), s.whole(), y.whole()]);
        t.op("cast", [x.whole(), c.whole()]);
    });
    let data = [1.27, -0.635, 0.0, 0.3, 0.0, 0.0, 0.0, 0.0];
    let mut inputs = Inputs::new();
    inputs.set("x", HostTensor::from_f32(DType::F32, &[2, 4], &data));
    let out = run_both(&tf, &OpImpls::builtin(), &inputs);
    let scale = 1.27f32 / 127.0;
    assert_eq!(f32s(out.get(0, "s").unwrap()), vec![scale, 0.0]);
    let want_q: Vec<f32> = [1.27f32, -0.635, 0.0, 0.3].iter().map(|v| (v / scale).round_ties_even()).collect();
    assert_eq!(want_q, vec![127.0, -64.0, 0.0, 30.0]);
    assert_eq!(f32s(out.get(0, "q").unwrap()), [want_q, vec![0.0; 4]].concat());
    for (got, orig) in out.get(0, "y").unwrap().to_f32().iter().zip(data) {
        assert!((got - orig).abs() <= scale / 2.0 + 0.01, "dequantised {got} far from {orig}");
    }
    assert_eq!(f32s(out.get(0, "c").unwrap()), vec![1.0, -1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
}

/// `dst = 2 · src`, a user op with its own reference body.
struct Double;

impl RefOp for Double {
    fn check(&self, args: &[ArgDesc]) -> Result<(), OpError> {
        match args {
            [a, b] if a.elements() == b.elements() => Ok(()),
            [a, b] => Err(ShapeMismatch::SameElements(a.clone(), b.clone()).into()),
            _ => Err(OpError::Arity { expected: 2, got: args.len() }),
        }
    }
    fn run(&self, args: &[Arg<'_>]) -> Result<(), OpError> {
        let v: Vec<f32> = args[0].load().iter().map(|x| 2.0 * x).collect();
        args[1].store(&v)
    }
}

/// Writes its read-only first argument.
struct Vandal;

impl RefOp for Vandal {
    fn check(&self, _: &[ArgDesc]) -> Result<(), OpError> {
        Ok(())
    }
    fn run(&self, args: &[Arg<'_>]) -> Result<(), OpError> {
        args[0].store(&vec![0.0; args[0].desc().elements()])
    }
}

fn user_op_taskflow(op: &str) -> Taskflow {
    let mut tf = Taskflow::new("user", MachineProfile::small(1, 2));
    tf.ops
        .register(OpSpec::new(
            op,
            CoreKind::Aiv,
            vec![Param::read("src"), Param::write("dst")],
            WorkModel::Vector { flops_per_element: 1 },
            "a user op",
        ))
        .unwrap();
    let x = tf.input("x", DType::Bf16, &[4, 2]);
    let y = tf.output("y", DType::Bf16, &[4, 2]);
    tf.tile("user", CoreKind::Aiv, |t| {
        let i = t.grid("i", 4);
        t.op(op, [x.slice(i.clone(), 1), y.slice(i, 1)]);
    });
    tf
}

#[test]
fn user_ops_run_their_own_reference_bodies() {
    let tf = user_op_taskflow("double");
    let mut impls = OpImpls::builtin();
    impls.register("double", Double).unwrap();
    assert!(impls.register("double", Double).is_err(), "a second body for one op is refused");
    let inputs = Inputs::random(&tf, 1);
    let out = run_both(&tf, &impls, &inputs);
    let x = inputs.get("x", 0).unwrap().to_f32();
    assert_eq!(out.get(0, "y").unwrap().to_f32(), x.iter().map(|v| 2.0 * v).collect::<Vec<_>>());
}

#[test]
fn an_op_without_a_body_or_with_bad_shapes_is_refused_before_the_run() {
    let tf = user_op_taskflow("double");
    let compiled = hpmoe_core::compile(&tf, &SimpleCost::default()).unwrap();
    let err = Executor::new(&tf, &compiled.table, &OpImpls::builtin()).unwrap_err();
    assert!(
        matches!(&err, ExecError::Setup(e) if matches!(&**e, SetupError::Ops(p) if matches!(&p[..], [OpProblem::NoBody { op, .. }] if op == "double")))
            && err.to_string().contains("no reference implementation"),
        "{err}"
    );
    assert!(matches!(SequentialRunner::new(&tf, &OpImpls::builtin()), Err(ExecError::Setup(_))));

    let mut tf = Taskflow::new("bad", MachineProfile::small(1, 1));
    let a = tf.input("a", DType::Bf16, &[4, 8]);
    let b = tf.input("b", DType::Bf16, &[4, 8]);
    let c = tf.output("c", DType::Bf16, &[4, 8]);
    tf.tile("mm", CoreKind::Aic, |t| t.op("matmul", [a.whole(), b.whole(), c.whole()]));
    let compiled = hpmoe_core::compile(&tf, &SimpleCost::default()).unwrap();
    let err = Executor::new(&tf, &compiled.table, &OpImpls::builtin()).unwrap_err().to_string();
    assert!(err.contains("op `matmul` in tile `mm`") && err.contains("do not multiply"), "{err}");
}

#[test]
fn missing_or_misshaped_inputs_and_foreign_tables_are_refused() {
    let tf = user_op_taskflow("double");
    let mut impls = OpImpls::builtin();
    impls.register("double", Double).unwrap();
    let compiled = hpmoe_core::compile(&tf, &SimpleCost::default()).unwrap();
    let exec = Executor::new(&tf, &compiled.table, &impls).unwrap();
    let err = exec.run(&Inputs::new(), &RunOptions::default()).unwrap_err().to_string();
    assert!(err.contains("input `x` has no data for rank 0"), "{err}");
    let mut inputs = Inputs::new();
    inputs.set("x", HostTensor::filled(DType::Bf16, &[2, 4], 1.0));
    let err = exec.run(&inputs, &RunOptions::default()).unwrap_err().to_string();
    assert!(err.contains("input `x` on rank 0 is bf16 [2, 4]"), "{err}");
    let err = exec.run(&Inputs::random(&tf, 0), &RunOptions { max_host_bytes: 16, ..RunOptions::default() });
    assert!(err.unwrap_err().to_string().contains("max_host_bytes"));

    let other = hpmoe_host::moe::MoeShape::tiny(2).taskflow().unwrap();
    let other_table = hpmoe_core::compile(&other, &SimpleCost::default()).unwrap().table;
    let err = Executor::new(&tf, &other_table, &impls).unwrap_err().to_string();
    assert!(err.contains("does not belong to taskflow `user`"), "{err}");
}

#[test]
fn an_op_writing_a_read_only_argument_fails_the_run_naming_the_tile() {
    let tf = user_op_taskflow("vandal");
    let mut impls = OpImpls::builtin();
    impls.register("vandal", Vandal).unwrap();
    let compiled = hpmoe_core::compile(&tf, &SimpleCost::default()).unwrap();
    let exec = Executor::new(&tf, &compiled.table, &impls).unwrap();
    let err = exec.run(&Inputs::random(&tf, 0), &RunOptions::default()).unwrap_err();
    let t = err.tile_failure().unwrap_or_else(|| panic!("{err}"));
    assert_eq!(t.op.as_deref(), Some("vandal"));
    assert!(t.tile.starts_with("user(i="), "{t:?}");
    assert!(matches!(&t.error, TileError::Op(OpError::ReadOnly { arg }) if arg.param == "src"), "{t:?}");
    assert!(t.error.to_string().contains("only reads"), "{t:?}");
    let seq = SequentialRunner::new(&tf, &impls).unwrap().run(&Inputs::random(&tf, 0)).unwrap_err();
    assert_eq!(seq.tile_failure().unwrap().tile, "user(i=0) on rank 0");
}

/// A tile running `gather_weighted_accumulate(table, index, weight, dst)` after setting
/// `dst` from `init`, with `index` `[rows, k]`.
fn gather_taskflow(table_rows: u64, rows: u64, k: u64, cols: u64, dst: DType) -> Taskflow {
    let mut tf = Taskflow::new("gather", MachineProfile::small(1, 1));
    let table = tf.input("table", DType::Bf16, &[table_rows, cols]);
    let index = tf.input("index", DType::I32, &[rows, k]);
    let weight = tf.input("weight", DType::F32, &[rows, k]);
    let init = tf.input("init", dst, &[rows, cols]);
    let out = tf.output("out", dst, &[rows, cols]);
    tf.tile("g", CoreKind::Aiv, |t| {
        t.op("copy", [init.whole(), out.whole()]);
        t.op("gather_weighted_accumulate", [table.whole(), index.whole(), weight.whole(), out.whole()]);
    });
    tf
}

fn gather_inputs(table: &[f32], cols: u64, index: &[i32], weight: &[f32], k: u64, init: HostTensor) -> Inputs {
    let (n, rows) = (table.len() as u64 / cols, index.len() as u64 / k);
    let mut inputs = Inputs::new();
    inputs
        .set("table", HostTensor::from_f32(DType::Bf16, &[n, cols], table))
        .set("index", HostTensor::from_bits(DType::I32, &[rows, k], index.iter().map(|&i| i as u32).collect()))
        .set("weight", HostTensor::from_f32(DType::F32, &[rows, k], weight))
        .set("init", init);
    inputs
}

#[test]
fn gather_weighted_accumulate_picks_rows_by_index_and_skips_negative_ones() {
    let tf = gather_taskflow(4, 3, 2, 2, DType::F32);
    let table = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0];
    // Row 0: table rows 3 and 0; row 1: row 1 and a dropped choice; row 2: both dropped.
    let index = [3, 0, 1, -1, -7, -1];
    let weight = [0.5, 2.0, 0.25, 100.0, 100.0, 100.0];
    let init = HostTensor::from_f32(DType::F32, &[3, 2], &[10.0, 20.0, 30.0, 40.0, 50.0, 60.0]);
    let out = run_both(&tf, &OpImpls::builtin(), &gather_inputs(&table, 2, &index, &weight, 2, init));
    assert_eq!(
        f32s(out.get(0, "out").unwrap()),
        vec![10.0 + 3.5 + 2.0, 20.0 + 4.0 + 4.0, 30.0 + 0.75, 40.0 + 1.0, 50.0, 60.0]
    );
}

#[test]
fn gather_weighted_accumulate_sums_in_choice_order_in_f32_and_rounds_once() {
    // Row 0: (0 + 1 + big) - big = 0 in f32 (choice order), where the reverse order gives 1.
    let big = 1e8; // 99_614_720 in bf16
    let tf = gather_taskflow(3, 2, 3, 1, DType::Bf16);
    let table = [1.0, big, big];
    let index = [0, 1, 2, 0, 0, 0];
    // Row 1: bf16 1 + three times 2^-9, rounded once: 1 + 2^-7 (each step rounded: 1).
    let tiny = 1.0 / 512.0;
    let weight = [1.0, 1.0, -1.0, tiny, tiny, tiny];
    let init = HostTensor::from_f32(DType::Bf16, &[2, 1], &[0.0, 1.0]);
    let out = run_both(&tf, &OpImpls::builtin(), &gather_inputs(&table, 1, &index, &weight, 3, init));
    assert_eq!(f32s(out.get(0, "out").unwrap()), vec![0.0, 1.0 + 1.0 / 128.0]);
}

#[test]
fn gather_weighted_accumulate_equals_weighted_accumulate_on_the_fixed_layout() {
    // index[i, j] = i·k + j makes the gather read what weighted_accumulate reads: same bits.
    let (rows, k, cols) = (4u64, 3u64, 8u64);
    let mut tf = gather_taskflow(rows * k, rows, k, cols, DType::Bf16);
    let named = |name: &str| TensorRef { name: name.into() };
    let (table, weight, init) = (named("table"), named("weight"), named("init"));
    let out = tf.output("fixed", DType::Bf16, &[rows, cols]);
    tf.tile("fixed", CoreKind::Aiv, |t| {
        t.op("copy", [init.whole(), out.whole()]);
        t.op("weighted_accumulate", [table.whole(), weight.whole(), out.whole()]);
    });
    let mut inputs = Inputs::random(&tf, 9);
    let index: Vec<u32> = (0..(rows * k) as u32).collect();
    inputs.set_rank("index", 0, HostTensor::from_bits(DType::I32, &[rows, k], index));
    let out = run_both(&tf, &OpImpls::builtin(), &inputs);
    let (gathered, fixed) = (out.get(0, "out").unwrap(), out.get(0, "fixed").unwrap());
    assert_eq!(gathered.first_difference(fixed), None);
    assert!(gathered.to_f32().iter().all(|v| v.is_finite()));
}

#[test]
fn an_out_of_range_gather_index_fails_the_run_naming_the_op() {
    let tf = gather_taskflow(4, 2, 2, 2, DType::F32);
    let inputs = gather_inputs(&[0.0; 8], 2, &[0, 1, 2, 4], &[1.0; 4], 2, HostTensor::filled(DType::F32, &[2, 2], 0.0));
    let compiled = hpmoe_core::compile(&tf, &SimpleCost::default()).unwrap();
    let errors = [
        Executor::new(&tf, &compiled.table, &OpImpls::builtin()).unwrap().run(&inputs, &RunOptions::default()),
        SequentialRunner::new(&tf, &OpImpls::builtin()).unwrap().run(&inputs),
    ];
    for err in errors.map(Result::unwrap_err) {
        let t = err.tile_failure().unwrap_or_else(|| panic!("{err}"));
        assert_eq!(t.tile, "g() on rank 0");
        assert_eq!(t.op.as_deref(), Some("gather_weighted_accumulate"));
        let TileError::Op(OpError::IndexOutOfRange(e)) = &t.error else { panic!("{t:?}") };
        assert_eq!((e.at, e.value, e.of.param.as_str(), e.len), (IndexAt::Element { row: 1, col: 1 }, 4, "table", 4));
        assert_eq!(t.error.to_string(), "index[1, 1] = 4 is out of range: `table` bf16 [4, 2] has 4 rows");
        assert!(err.to_string().contains("op `gather_weighted_accumulate`"), "{err}");
    }
}

#[test]
fn gather_weighted_accumulate_refuses_bad_argument_shapes_and_types() {
    /// (case, index shape, index type, weight shape, dst shape, expected fragment)
    type Case = (&'static str, [u64; 2], DType, [u64; 2], [u64; 2], &'static str);
    let cases: [Case; 4] = [
        ("f32 index", [2, 2], DType::F32, [2, 2], [2, 4], "`index` f32 [2, 2] must be i32"),
        ("weights", [2, 2], DType::I32, [2, 3], [2, 4], "needs one weight per element of `index`"),
        ("dst rows", [2, 2], DType::I32, [2, 2], [3, 4], "needs one row per row of `index`"),
        ("dst cols", [2, 2], DType::I32, [2, 2], [2, 2], "must be as long as the rows of `dst`"),
    ];
    for (case, index_shape, index_type, weight_shape, dst_shape, want) in cases {
        let mut tf = Taskflow::new("bad_gather", MachineProfile::small(1, 1));
        let table = tf.input("table", DType::Bf16, &[5, 4]);
        let index = tf.input("index", index_type, &index_shape);
        let weight = tf.input("weight", DType::F32, &weight_shape);
        let dst = tf.output("dst", DType::F32, &dst_shape);
        tf.tile("g", CoreKind::Aiv, |t| {
            t.op("zero", [dst.whole()]);
            t.op("gather_weighted_accumulate", [table.whole(), index.whole(), weight.whole(), dst.whole()]);
        });
        let err = SequentialRunner::new(&tf, &OpImpls::builtin()).unwrap_err().to_string();
        assert!(err.contains("op `gather_weighted_accumulate` in tile `g` rejects its arguments"), "{case}: {err}");
        assert!(err.contains(want), "{case}: {err}");
    }
}
