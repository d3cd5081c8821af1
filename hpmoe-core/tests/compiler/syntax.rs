//! The front-end on whole taskflows: what it lowers to, and where its errors point.
//! (The compile-fail suite in `ui-tests` covers each error through the macro.)

use hpmoe_core::model::{Access, Affine, CoreKind, DType, IndexSel, RankSel, TensorKind, Var, WorkModel};
use hpmoe_core::schedule::UnitCost;
use hpmoe_core::syntax::{Frontend, parse_file, parse_file_in, render_error};

fn one(src: &str) -> Frontend {
    let mut found = parse_file(src).unwrap_or_else(|e| panic!("{}", render_error(&e, "test.rs")));
    assert_eq!(found.len(), 1);
    found.remove(0)
}

/// The taskflow called `name` of the DSL flagship, whose taskflows include their layouts from
/// `examples/dsl/`.
fn flagship(name: &str) -> Frontend {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/examples");
    let src = include_str!("../../../examples/examples/moe_ffn_dsl.rs");
    let found = parse_file_in(src, Some(&dir)).unwrap_or_else(|e| panic!("{}", render_error(&e, "test.rs")));
    found.into_iter().find(|f| f.taskflow.name == name).unwrap_or_else(|| panic!("no taskflow `{name}`"))
}

/// Every error of `src` as `line:col: message` (first line of the message).
fn errors(src: &str) -> Vec<String> {
    let fe = one(src);
    let err = fe.compile(&UnitCost).expect_err("the taskflow was accepted");
    render_error(&err, "t").lines().filter(|l| l.starts_with("t:")).map(|l| l[2..].to_string()).collect()
}

#[test]
fn the_deepseek_layer_in_the_dsl_is_the_builders_layer() {
    let fe = flagship("moe_ffn");
    assert!(fe.errors.is_empty(), "{:?}", fe.errors);
    let built = hpmoe_host::moe::MoeShape::deepseek_v3(8, 4096).taskflow().unwrap();
    assert!(fe.taskflow.same_structure(&built));
    assert_eq!(fe.taskflow.name, "moe_ffn");
    assert_eq!(fe.taskflow.profile, hpmoe_core::model::MachineProfile::ascend910b(8));
    let names: Vec<&str> = fe.taskflow.families.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["dispatch", "gmm1", "activation", "gmm2", "combine", "weighted_sum"]);
    assert_eq!(fe.tiles.iter().map(|t| t.family).collect::<Vec<_>>(), [0, 1, 2, 3, 4, 5]);
    let w13 = &fe.taskflow.families[1].body[0].args[1];
    assert_eq!((w13.dims[1].start.clone(), w13.dims[1].len), (Affine::constant(0), 7168), "`all()` is the whole dim");
    // The structure comparison can fail: a different block size is another taskflow.
    let other = hpmoe_host::moe::MoeShape { row_block: 64, ..hpmoe_host::moe::MoeShape::deepseek_v3(8, 4096) };
    assert!(!fe.taskflow.same_structure(&other.taskflow().unwrap()));
}

#[test]
fn the_natural_deepseek_layer_in_the_dsl_is_the_builders_layer() {
    let fe = flagship("moe_ffn_natural");
    assert!(fe.errors.is_empty(), "{:?}", fe.errors);
    let natural = hpmoe_host::moe::MoeShape::deepseek_v3_natural(8, 4096);
    assert!(fe.taskflow.same_structure(&natural.taskflow().unwrap()));
    let tf = &fe.taskflow;
    assert_eq!(tf.profile, hpmoe_core::model::MachineProfile::ascend910b(8));
    let names: Vec<&str> = tf.families.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["announce", "dispatch", "gmm1", "activation", "gmm2", "combine", "weighted_sum"]);
    let guards: Vec<Option<(&str, usize)>> =
        tf.families.iter().map(|f| f.guard.as_ref().map(|g| (g.count.tensor.as_str(), g.count.dims.len()))).collect();
    let recv = Some(("RECV_COUNTS", 2));
    assert_eq!(guards, [None, Some(("SEND_COUNTS", 1)), recv, recv, recv, recv, None]);
    // The structure comparison sees the guards: a bound off by a block is another taskflow.
    let mut shifted = tf.clone();
    let g = shifted.families[2].guard.as_mut().unwrap();
    g.above = g.above.clone() + 192;
    assert!(!shifted.same_structure(&natural.taskflow().unwrap()));
    // ... and so is another capacity.
    let other = natural.clone().with_natural_routing(384);
    assert!(!tf.same_structure(&other.taskflow().unwrap()));
}

#[test]
fn the_int8_deepseek_layer_in_the_dsl_is_the_builders_layer() {
    use hpmoe_host::moe::{DispatchPrecision, MoeShape};
    let fe = flagship("moe_ffn_int8");
    assert!(fe.errors.is_empty(), "{:?}", fe.errors);
    let int8 = MoeShape::deepseek_v3(8, 4096).with_dispatch(DispatchPrecision::Int8);
    assert!(fe.taskflow.same_structure(&int8.taskflow().unwrap()));
    let names: Vec<&str> = fe.taskflow.families.iter().map(|f| f.name.as_str()).collect();
    let want =
        ["quantize_block", "dispatch", "dequantize_block", "gmm1", "activation", "gmm2", "combine", "weighted_sum"];
    assert_eq!(names, want);
    // The received rows are INT8, their scales FP32, and GMM1 reads the dequantised rows.
    let dtype = |name: &str| fe.taskflow.tensors.iter().find(|t| t.name == name).unwrap().dtype;
    assert_eq!((dtype("RECV"), dtype("RECV_SCALE"), dtype("XIN")), (DType::I8, DType::F32, DType::Bf16));
    assert_eq!(fe.taskflow.families[3].body[0].args[0].tensor, "XIN");
    // The comparison sees the dispatch precision: the BF16 layer is another taskflow.
    assert!(!fe.taskflow.same_structure(&MoeShape::deepseek_v3(8, 4096).taskflow().unwrap()));
}

/// The taskflow called `name` of the DSL training example (the backward and the training step
/// at DeepSeek-V3 EP 8), read by the front-end alone (no scheduling).
fn training(name: &str) -> Frontend {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/examples");
    let src = include_str!("../../../examples/examples/moe_training_dsl.rs");
    let found = parse_file_in(src, Some(&dir)).unwrap_or_else(|e| panic!("{}", render_error(&e, "test.rs")));
    found.into_iter().find(|f| f.taskflow.name == name).unwrap_or_else(|| panic!("no taskflow `{name}`"))
}

/// [`training`] with the example's `ranks = 8` replaced by `ranks`: the same file, at EP `ranks`.
fn training_at(name: &str, ranks: u32) -> Frontend {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/examples");
    let src = include_str!("../../../examples/examples/moe_training_dsl.rs");
    assert_eq!(src.matches("ranks = 8)]").count(), 2, "the example's two taskflows are at EP 8");
    let src = src.replace("ranks = 8)]", &format!("ranks = {ranks})]"));
    let found = parse_file_in(&src, Some(&dir)).unwrap_or_else(|e| panic!("{}", render_error(&e, "test.rs")));
    found.into_iter().find(|f| f.taskflow.name == name).unwrap_or_else(|| panic!("no taskflow `{name}`"))
}

#[test]
fn the_deepseek_backward_and_training_step_in_the_dsl_are_the_builders() {
    for ranks in [8, 16, 32, 64] {
        deepseek_backward_and_training_step_in_the_dsl_are_the_builders(ranks);
    }
}

/// The DSL training example's taskflows at EP `ranks` (EP 8: as written; the others: the same
/// file at another `ranks`) lower to the builder's `MoeShape::deepseek_v3(ranks, 4096)`: the same
/// structure, and the same family and tensor names (so the same schedule tables: `plan` reads
/// nothing else; `examples/tests/examples/dsl_training_tables.rs` compares the tables at EP 8 and
/// `moe_training_dsl --ranks` at every EP).
fn deepseek_backward_and_training_step_in_the_dsl_are_the_builders(ranks: u32) {
    use hpmoe_host::moe::{MoeShape, Pass};
    let shape = MoeShape::deepseek_v3(ranks, 4096);
    for (name, pass) in [("moe_ffn_backward", Pass::Backward), ("moe_ffn_training_step", Pass::TrainingStep)] {
        let fe = if ranks == 8 { training(name) } else { training_at(name, ranks) };
        let name = format!("{name} at EP {ranks}");
        assert!(fe.errors.is_empty(), "{name}: {:?}", fe.errors);
        let built = shape.pass_taskflow(pass).unwrap();
        assert!(fe.taskflow.same_structure(&built), "{name}");
        assert_eq!(fe.taskflow.name, built.name);
        assert_eq!(fe.taskflow.profile, hpmoe_core::model::MachineProfile::ascend910b(ranks));
        // The forward's `swiglu` family is `activation` in the DSL (a tile cannot share its name
        // with the op it calls).
        let dsl_family = |f: &str| if f == "swiglu" { "activation".to_string() } else { f.to_string() };
        let names =
            |tf: &hpmoe_core::model::Taskflow| tf.families.iter().map(|f| dsl_family(&f.name)).collect::<Vec<_>>();
        assert_eq!(names(&fe.taskflow), names(&built), "{name}");
        let tensors =
            |tf: &hpmoe_core::model::Taskflow| tf.tensors.iter().map(|t| t.name.to_uppercase()).collect::<Vec<_>>();
        assert_eq!(tensors(&fe.taskflow), tensors(&built), "{name}");
        // One weight-gradient tile per expert and gradient block: no accumulating chains.
        assert!(!names(&fe.taskflow).iter().any(|f| f.ends_with("_acc")), "{name}");
        // The comparison sees the weight-gradient grouping: two groups per expert differ.
        let two = MoeShape { wgrad_rows: shape.rows_per_expert() / 2, ..shape.clone() };
        assert!(!fe.taskflow.same_structure(&two.pass_taskflow(pass).unwrap()), "{name}");
    }
}

const SMALL: &str = r#"
#[taskflow(profile = small(2), ranks = 4)]
fn small() {
    const N: u64 = 8;
    const C: u64 = 16;
    const X: Tensor<Bf16> = input([RANKS * N, C]);
    const RECV: Tensor<Bf16> = symmetric([RANKS * N, C]);
    const Y: Tensor<F32> = output([RANKS * N, C]);

    /// out = 2 * src
    #[op(aiv, work = vector(1), emit = "Twice({out}, {src})", read_write(out))]
    fn twice(src: &TileData, out: &mut TileData) {
        for (o, s) in out.values.iter_mut().zip(&src.values) {
            *o += 2.0 * s;
        }
    }

    #[tile(aiv, grid(d in 0..RANKS))]
    fn send(d: Idx) {
        put(X.slice(d * N, N), RECV.on((RANK + d) % RANKS).slice(RANK * N, N));
    }

    #[tile(aiv, grid(r in 0..=RANKS - 1, h in 0..2), after(send(.., ), send))]
    fn scale(r: Idx, h: Idx) {
        let rows = RECV.slice(r * N, N);
        let half = h * (C / 2);
        zero(Y.slice(r * N, N).slice(half, C / 2));
        twice(rows.slice(half, C / 2), Y.slice(r * N, N).slice(half, C / 2));
    }
}
"#;

#[test]
fn lowers_indices_regions_afters_and_user_ops() {
    let fe = one(SMALL);
    assert!(fe.errors.is_empty(), "{:?}", fe.errors);
    let tf = &fe.taskflow;
    assert_eq!(
        tf.tensors.iter().map(|t| (t.kind, t.dtype)).collect::<Vec<_>>(),
        [(TensorKind::Input, DType::Bf16), (TensorKind::Symmetric, DType::Bf16), (TensorKind::Output, DType::F32)]
    );
    assert_eq!(tf.tensors[0].shape.as_slice(), [32, 16]);

    let send = &tf.families[0];
    assert_eq!(send.core, CoreKind::Aiv);
    let dst = &send.body[0].args[1];
    assert_eq!(dst.rank, RankSel::Remote((Affine::rank() + Affine::index(0)).modulo(4)));
    assert_eq!(dst.dims[0].start, Affine::rank() * 8);
    assert_eq!(send.body[0].args[0].dims[0].start, Affine::index(0) * 8);

    let scale = &tf.families[1];
    assert_eq!(scale.grid.iter().map(|g| (g.name.as_str(), g.extent)).collect::<Vec<_>>(), [("r", 4), ("h", 2)]);
    assert_eq!(scale.after.len(), 2);
    assert_eq!(scale.after[0].indices.as_slice(), [IndexSel::All]);
    assert_eq!(scale.after[1].indices.as_slice(), [IndexSel::All]);
    let twice = &scale.body[1];
    assert_eq!(twice.op, "twice");
    let rows = &twice.args[0];
    assert_eq!(rows.tensor, "RECV");
    assert_eq!(rows.dims.len(), 2);
    assert_eq!(rows.dims[0].start, Affine::index(0) * 8);
    assert_eq!(rows.dims[1].start.terms.as_slice(), [(Var::Index(1), 8)]);

    let spec = tf.ops.get("twice").unwrap();
    assert_eq!(spec.core, CoreKind::Aiv);
    assert_eq!(spec.work, WorkModel::Vector { flops_per_element: 1 });
    assert_eq!(spec.params.iter().map(|p| p.access).collect::<Vec<_>>(), [Access::Read, Access::ReadWrite]);
    assert_eq!(spec.emit(), Some("Twice({out}, {src})"));
    assert_eq!(spec.doc, "out = 2 * src");
    assert_eq!(fe.ops[0].params.iter().map(ToString::to_string).collect::<Vec<_>>(), ["src", "out"]);

    let compiled = fe.compile(&UnitCost).unwrap();
    assert_eq!(compiled.expanded.nodes(), (4 + 8) * 4);
    // Source positions reach the IR's source map (for tools without tokens).
    let pos = tf.sources.get(scale.loc).unwrap();
    assert_eq!((pos.line, pos.column), (24, 8));
}

#[test]
fn front_end_and_structural_errors_come_together_in_source_order() {
    let src = r#"
#[taskflow(profile = small(1), ranks = 2)]
fn bad() {
    const N: u64 = 4;
    const X: Tensor<F32> = input([N, 4]);
    const Y: Tensor<F32> = output([M, 4]);
    const Z: Tensor<F32> = output([N, 4]);
    #[tile(aic, grid(i in 0..N))]
    fn a(i: Idx) {
        copy(X.at(i), Z.at(i));
        copy(X.at(i), Y.at(i));
        matmul(X, X, 3);
    }
    #[tile(aiv, grid(i in 0..N), after(b(i)))]
    fn c(i: Idx) {
        zero(Z.at(i * i));
    }
}
"#;
    assert_eq!(
        errors(src),
        [
            "6:36: error: `M` is not a compile-time constant of this taskflow: shapes, grid extents and slice lengths \
             are integer literals, integer consts declared in the taskflow body, and `RANKS`",
            "10:9: error: `copy` runs on aiv cores, but tile `a` is an aic tile",
            "12:22: error: argument `c` of `matmul` must be a region (a tensor `X`, or `X.at(i)`, \
             `X.slice(start, len)`, ...), but `3` is an index expression",
            "14:40: error: tile `c` runs after unknown tile `b`",
            "16:19: error: index expressions are affine: `i * i` multiplies two indices",
        ]
    );
}

#[test]
fn errors_of_the_expanded_taskflow_point_at_their_tokens() {
    let src = r#"
#[taskflow(profile = small(1), ranks = 2)]
fn bad() {
    const X: Tensor<F32> = input([8, 4]);
    const S: Tensor<F32> = scratch([8, 4]);
    const Y: Tensor<F32> = output([8, 4]);
    #[tile(aiv, grid(i in 0..8))]
    fn a(i: Idx) {
        copy(S.at(i), Y.at(i + 1));
    }
    #[tile(aiv, grid(i in 0..8), after(b(i)))]
    fn b(i: Idx) {
        copy(X.at(i), S.at(i));
    }
}
"#;
    let errs = errors(src);
    // The instance waiting for itself stops the ordering checks (the write of `S` after `a`
    // reads it is not reported).
    assert_eq!(errs.len(), 3, "{errs:#?}");
    assert_eq!(
        errs,
        [
            "9:14: error: a(i=0) on rank 0 reads scratch `S`[0..1, 0..4] but nothing written by a tile declared before \
         `a` (and 15 more instances)",
            "9:23: error: argument `dst` of `copy` in a(i=7) on rank 0 is out of bounds: dimension 0 of `Y` is 8..9 but \
         the tensor has 8 (and 1 more instances)",
            "11:40: error: `after(b(..))` makes b(i=0) on rank 0 wait for itself (and 15 more instances)",
        ]
    );
}

const GUARDED: &str = r#"
#[taskflow(profile = small(1), ranks = 2)]
fn guarded() {
    const B: u64 = 4;
    const SENT: Tensor<I32> = input([RANKS]);
    const COUNTS: Tensor<I32> = symmetric([RANKS]);
    const X: Tensor<F32> = input([RANKS, 4 * B, 8]);
    const Y: Tensor<F32> = output([RANKS, 4 * B, 8]);
    #[tile(aiv, grid(dst in 0..RANKS))]
    fn announce(dst: Idx) {
        put(SENT.at(dst), COUNTS.on(dst).at(RANK));
    }
    #[tile(aiv, grid(src in 0..RANKS, b in 0..4))]
    fn work(src: Idx, b: Idx) {
        let rows = b * B;
        run_if_above(COUNTS.at(src), rows + 1);
        copy(X.at(src).slice(rows, B), Y.at(src).slice(rows, B));
    }
}
"#;

#[test]
fn a_guard_lowers_into_the_family_with_its_spans() {
    let fe = one(GUARDED);
    assert!(fe.errors.is_empty(), "{:?}", fe.errors);
    let tf = &fe.taskflow;
    assert_eq!(tf.families[0].guard, None);
    let work = &tf.families[1];
    assert_eq!(work.body.len(), 1, "the guard is no op call");
    let g = work.guard.as_ref().expect("`work` is guarded");
    assert_eq!(g.count.tensor, "COUNTS");
    assert_eq!(g.count.rank, RankSel::Local);
    assert_eq!(g.count.dims.len(), 1);
    assert_eq!((g.count.dims[0].start.clone(), g.count.dims[0].len), (Affine::index(0), 1));
    assert_eq!(g.above, Affine::index(1) * 4 + 1, "`let` bindings reach the bound");
    // The guard's place is its name; the count's is the region expression.
    let at = |loc| {
        let p = tf.sources.get(loc).unwrap();
        (p.line, p.column)
    };
    assert_eq!(at(g.loc), (16, 9));
    assert_eq!(at(g.count.loc), (16, 22));
    // The IR the macro embeds carries the guard.
    assert_eq!(hpmoe_core::model::Taskflow::from_json(&tf.to_json()).unwrap().families[1].guard, work.guard);
    // work(src, b) on rank r waits for announce(dst = r) on rank src, which wrote COUNTS[src].
    let compiled = fe.compile(&UnitCost).unwrap();
    let e = &compiled.expanded;
    let work_node = e.space.node(hpmoe_core::ids::RankId::new(0), 2 + 4); // rank 0, work(src = 1, b = 0)
    assert_eq!(e.dag.pred.row(work_node), &[e.space.node(hpmoe_core::ids::RankId::new(1), 0)]);
}

/// `GUARDED` with `work`'s body replaced.
fn guarded_with(body: &str) -> String {
    let start = GUARDED.find("        let rows = b * B;").unwrap();
    let end = GUARDED.find("    }\n}\n").unwrap();
    format!("{}{body}{}", &GUARDED[..start], &GUARDED[end..])
}

#[test]
fn guard_errors_point_at_the_guard_or_its_count() {
    let src = r#"
#[taskflow(profile = small(1), ranks = 2)]
fn bad() {
    const WIDE: Tensor<F32> = input([4]);
    const COUNTS: Tensor<I32> = symmetric([4, 2]);
    const Y: Tensor<F32> = output([4, 8]);
    #[tile(aiv, grid(i in 0..4))]
    fn not_i32(i: Idx) {
        run_if_above(WIDE.at(i), 0);
        zero(Y.at(i));
    }
    #[tile(aiv, grid(i in 0..4))]
    fn a_row(i: Idx) {
        run_if_above(COUNTS.at(i), 0);
        zero(Y.at(i));
    }
    #[tile(aiv, grid(i in 0..4))]
    fn remote(i: Idx) {
        run_if_above(COUNTS.on(1).at(i).at(0), 0);
        zero(Y.at(i));
    }
    #[tile(aiv)]
    fn own() {
        run_if_above(COUNTS.at(0).at(0), 0);
        zero(COUNTS);
    }
    #[tile(aiv, grid(i in 0..4))]
    fn typo(i: Idx) {
        run_if_above(CONTS.at(i).at(0), i);
        zero(Y.at(i));
    }
}
"#;
    assert_eq!(
        errors(src),
        [
            "9:22: error: the count of `run_if_above` in tile `not_i32` must be an i32 element, but `WIDE` holds f32",
            "14:22: error: the count of `run_if_above` in tile `a_row` must be one element, but it covers 2 elements \
             of `COUNTS`",
            "19:22: error: argument `count` of `run_if_above` in tile `remote` addresses another rank's memory",
            "25:9: error: tile `own` writes `COUNTS`, which its own `run_if_above` guard reads",
            "29:22: error: unknown tensor `CONTS` in tile `typo`",
        ]
    );
}

#[test]
fn a_tile_has_one_guard_before_its_ops() {
    let twice = guarded_with(
        "        run_if_above(COUNTS.at(src), b * B);\n        run_if_above(COUNTS.at(src), 0);\n        \
         zero(Y.at(src).slice(b * B, B));\n",
    );
    let fe = one(&twice);
    let err = fe.compile(&UnitCost).unwrap_err();
    let rendered = render_error(&err, "t");
    assert!(rendered.starts_with("t:16:9: error: tile `work` has two `run_if_above` guards"), "{rendered}");
    assert!(rendered.contains("note: the first guard is here (line 15)"), "{rendered}");
    assert_eq!(fe.taskflow.families[1].guard.as_ref().unwrap().above, Affine::index(1) * 4, "the first one stays");

    let late = guarded_with("        zero(Y.at(src).slice(b * B, B));\n        run_if_above(COUNTS.at(src), b * B);\n");
    assert_eq!(
        errors(&late),
        ["16:9: error: `run_if_above` guards the whole body of tile `work`, so it comes before the tile's ops"]
    );
    let arity = guarded_with("        run_if_above(COUNTS.at(src));\n        zero(Y.at(src).slice(b * B, B));\n");
    assert_eq!(
        errors(&arity),
        [
            "15:9: error: `run_if_above` takes the count and the bound it must exceed: `run_if_above(COUNTS.at(e), b * B)`"
        ]
    );
    let not_a_region = guarded_with("        run_if_above(b * B, 0);\n        zero(Y.at(src).slice(b * B, B));\n");
    assert_eq!(
        errors(&not_a_region),
        ["15:22: error: argument `count` of `run_if_above` must be a region (a tensor `X`, or `X.at(i)`, \
          `X.slice(start, len)`, ...), but `b * B` is an index expression"]
    );
}

#[test]
fn a_guard_on_a_count_nobody_writes_is_an_unwritten_read_at_the_count() {
    let src = r#"
#[taskflow(profile = small(1), ranks = 2)]
fn bad() {
    const COUNTS: Tensor<I32> = scratch([4]);
    const Y: Tensor<F32> = output([4, 8]);
    #[tile(aiv, grid(i in 0..4))]
    fn work(i: Idx) {
        run_if_above(COUNTS.at(i), 0);
        zero(Y.at(i));
    }
}
"#;
    assert_eq!(
        errors(src),
        [
            "8:22: error: work(i=0) on rank 0 reads scratch `COUNTS`[0..1] but nothing written by a tile declared before \
          `work` (and 7 more instances)"
        ]
    );
}

#[test]
fn an_op_cannot_take_the_guards_name() {
    let src = r#"
#[taskflow(profile = small(1), ranks = 1)]
fn bad() {
    const Y: Tensor<F32> = output([4]);
    #[op(aiv, work = vector(1), emit = "F({y})")]
    fn run_if_above(y: &mut TileData) {}
    #[tile(aiv)]
    fn t() {
        zero(Y);
    }
}
"#;
    assert_eq!(
        errors(src),
        [
            "6:8: error: `run_if_above` is the tile guard of the taskflow language, not an op name; give the op another name"
        ]
    );
}

#[test]
fn an_op_declares_its_work_as_a_gather() {
    let src = |work: &str| {
        format!(
            r#"
#[taskflow(profile = small(1), ranks = 1)]
fn g() {{
    const T: Tensor<F32> = input([8, 4]);
    const I: Tensor<I32> = input([2, 2]);
    const O: Tensor<F32> = output([2, 4]);

    #[op(aiv, work = {work}, emit = "Pick({{out}}, {{table}}, {{index}})")]
    fn pick(table: &TileData, index: &TileData, out: &mut TileData) {{
        let _ = (table, index, out);
    }}

    #[tile(aiv)]
    fn sum() {{
        pick(T, I, O);
    }}
}}
"#
        )
    };
    let fe = one(&src("gather(3)"));
    assert!(fe.errors.is_empty(), "{:?}", fe.errors);
    assert_eq!(fe.taskflow.ops.get("pick").unwrap().work, WorkModel::Gather { flops_per_element: 3 });
    // The transposed matmul models of the backward's ops are open to user ops too.
    for (work, model) in [("matmul_nt", WorkModel::MatmulNt), ("matmul_tn", WorkModel::MatmulTn)] {
        let fe = one(&src(work));
        assert_eq!(fe.taskflow.ops.get("pick").unwrap().work, model, "{work}");
    }
    for bad in ["gather(x)", "scatter(3)", "gather"] {
        let fe = parse_file(&src(bad)).map(|mut f| f.remove(0));
        let message = match fe {
            Ok(fe) => format!("{:?}", fe.errors),
            Err(e) => render_error(&e, "t"),
        };
        assert!(message.contains("`gather(FLOPS_PER_ELEMENT)`"), "{bad}: {message}");
    }
}

const REPEATED: &str = r#"
#[taskflow(profile = small(1), ranks = 2)]
fn repeated() {
    const P: u64 = 8;
    const X: Tensor<Bf16> = input([4, 32, 16]);
    const G: Tensor<Bf16> = input([4, 32, 16]);
    const GRAD: Tensor<F32> = output([32, 16]);
    #[tile(aiv, grid(n in 0..2))]
    fn clear(n: Idx) {
        zero(GRAD.all().slice(n * 8, 8));
    }
    #[tile(aic, grid(b in 0..4, n in 0..2), after(acc(b - 1, n)))]
    fn acc(b: Idx, n: Idx) {
        for p in 0..32 / P {
            let cols = n * 8;
            matmul_tn_accumulate(X.at(b).slice(p * P, P), G.at(b).slice(cols, 8), GRAD.slice(p * P, P).slice(cols, 8));
        }
    }
}
"#;

#[test]
fn a_for_in_a_tile_body_is_unrolled_with_its_index_a_constant() {
    let fe = one(REPEATED);
    assert!(fe.errors.is_empty(), "{:?}", fe.errors);
    let acc = &fe.taskflow.families[1];
    assert_eq!(acc.body.len(), 4, "one op per value of `p`");
    for (p, call) in acc.body.iter().enumerate() {
        assert_eq!(call.op, "matmul_tn_accumulate");
        let rows = Affine::constant(p as i64 * 8);
        // X.at(b).slice(p * P, P): the row window of dim 1; GRAD's of dim 0.
        assert_eq!((call.args[0].dims[1].start.clone(), call.args[0].dims[1].len), (rows.clone(), 8));
        assert_eq!((call.args[2].dims[0].start.clone(), call.args[2].dims[0].len), (rows, 8));
        // The `let` inside the loop sees the grid index.
        assert_eq!(call.args[2].dims[1].start, Affine::index(1) * 8);
        let at = fe.taskflow.sources.get(call.loc).unwrap();
        assert_eq!((at.line, at.column), (16, 13), "every copy points at the call as written");
    }
    // It schedules: the chain orders the accumulations after the zeroing.
    fe.compile(&UnitCost).unwrap();
    // An empty range repeats nothing; `0..=N` includes N.
    let empty = REPEATED.replace("for p in 0..32 / P", "for p in 4..4");
    assert_eq!(one(&empty).taskflow.families[1].body.len(), 0);
    let closed = REPEATED.replace("for p in 0..32 / P", "for p in 0..=1");
    assert_eq!(one(&closed).taskflow.families[1].body.len(), 2);
}

#[test]
fn a_for_s_range_is_constant_bounded_and_holds_no_guard() {
    let grid = REPEATED.replace("for p in 0..32 / P", "for p in 0..b + 1");
    assert_eq!(
        errors(&grid),
        ["14:21: error: the range of a `for` in a tile body is a compile-time constant: the loop is unrolled once \
          for all of tile `acc`'s instances, so it cannot depend on a grid index, `RANK` or a `let`"]
    );
    let long = REPEATED.replace("for p in 0..32 / P", "for p in 0..100");
    assert_eq!(
        errors(&long),
        ["14:18: error: this `for` repeats its body 100 times, but a tile calls at most 64 ops \
          (`limits::MAX_OPS_PER_TILE`)"]
    );
    let open = REPEATED.replace("for p in 0..32 / P", "for p in 0..");
    assert_eq!(errors(&open), ["14:18: error: the range of a `for` in a tile body names both ends: `0..N`"]);
    let shadow = REPEATED.replace("for p in 0..32 / P", "for b in 0..4");
    assert_eq!(
        errors(&shadow),
        ["14:13: error: `b` is a grid index of tile `acc`: the loop's index needs a name of its own"]
    );
    let guard = REPEATED.replace(
        "            let cols = n * 8;\n",
        "            run_if_above(X.at(0), 0);\n            let cols = n * 8;\n",
    );
    assert_eq!(
        errors(&guard),
        ["15:13: error: `run_if_above` guards the whole body of tile `acc`, so it cannot repeat in a `for`"]
    );
    // One error per mistake, not one per repetition.
    let unknown = REPEATED.replace("G.at(b)", "GG.at(b)");
    assert_eq!(errors(&unknown), ["16:59: error: unknown tensor `GG` in tile `acc`"]);
}
