//! The DeepSeek-V3 layers the DSL examples hold only as variants compiled by the shared front-end
//! (`hpmoe_examples::dsl_check::variant_source`: the example's `ranks = 8` replaced, and under
//! INT8 dispatch its BF16 layout files replaced by their INT8 counterparts): the balanced
//! backward and training step with INT8 dispatch at EP 8 (`moe_training_dsl.rs`), and under
//! natural routing the forward (`moe_ffn_natural` of `moe_ffn_dsl.rs`), backward and training
//! step (`moe_training_natural_dsl.rs`) with INT8 dispatch at EP 8 and with BF16 dispatch at EP
//! 16, 32 and 64. Each lowers to the builder's taskflow — the same structure, the same family and
//! tensor names (so the same schedule table: `plan` reads nothing else) — with no scheduling, so
//! this costs a second; the examples' `--int8` and `--ranks` options plan both and compare the
//! tables and flag plans byte for byte.

use hpmoe_core::model::Taskflow;
use hpmoe_examples::dsl_check::{Variant, pass_of, variant_source};
use hpmoe_host::moe::{DispatchPrecision, MoeShape, under_dsl_names};

const TRAINING: (&str, &str) = (include_str!("../../examples/moe_training_dsl.rs"), "moe_training_dsl.rs");
const NATURAL: (&str, &str) =
    (include_str!("../../examples/moe_training_natural_dsl.rs"), "moe_training_natural_dsl.rs");
const FORWARD: (&str, &str) = (include_str!("../../examples/moe_ffn_dsl.rs"), "moe_ffn_dsl.rs");

/// The taskflows of the example `(src, file)` as `variant` changes it, lowered by the front-end
/// alone (no checks past lowering, no scheduling).
fn lowered((src, file): (&str, &str), ranks: u32, dispatch: DispatchPrecision) -> Vec<Taskflow> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let src = variant_source(src, file, Variant { ranks, dispatch, only: &[] }).unwrap();
    let found = hpmoe_core::syntax::parse_file_in(&src, Some(&dir))
        .unwrap_or_else(|e| panic!("{}", hpmoe_core::syntax::render_error(&e, file)));
    found
        .into_iter()
        .map(|fe| {
            assert!(fe.errors.is_empty(), "{file} at EP {ranks}, {dispatch:?}: {:?}", fe.errors);
            fe.taskflow
        })
        .collect()
}

/// Asserts that the DSL taskflow `dsl` is the builder's pass of `shape` it is named for: the
/// same structure, families (under the DSL's names) and tensors (the builder's in capitals).
fn is_the_builders(dsl: &Taskflow, shape: &MoeShape, what: &str) {
    let built = shape.pass_taskflow(pass_of(&dsl.name)).unwrap();
    assert!(dsl.same_structure(&built), "{what}: structure");
    let built = under_dsl_names(built);
    let families = |tf: &Taskflow| tf.families.iter().map(|f| f.name.clone()).collect::<Vec<_>>();
    assert_eq!(families(dsl), families(&built), "{what}");
    let tensors = |tf: &Taskflow| tf.tensors.iter().map(|t| t.name.to_uppercase()).collect::<Vec<_>>();
    assert_eq!(tensors(dsl), tensors(&built), "{what}");
    assert_eq!(dsl.profile, hpmoe_core::model::MachineProfile::ascend910b(shape.ranks), "{what}");
}

#[test]
fn the_int8_backward_and_training_step_at_deepseek_v3_ep8_are_the_builders() {
    let int8 = MoeShape::deepseek_v3(8, 4096).with_dispatch(DispatchPrecision::Int8);
    let found = lowered(TRAINING, 8, DispatchPrecision::Int8);
    assert_eq!(
        found.iter().map(|tf| tf.name.as_str()).collect::<Vec<_>>(),
        ["moe_ffn_backward", "moe_ffn_training_step"]
    );
    for tf in &found {
        is_the_builders(tf, &int8, &format!("balanced INT8 {}", tf.name));
        // The comparison sees the dispatch: the BF16 layer's pass differs (the backward alone by
        // its saved input's name alone: `XIN` where the BF16 one has `RECV`, of the same shape).
        let bf16 = MoeShape::deepseek_v3(8, 4096).pass_taskflow(pass_of(&tf.name)).unwrap();
        let saved_x = |tf: &Taskflow| tf.tensors.iter().any(|t| t.name.eq_ignore_ascii_case("xin"));
        assert!(saved_x(tf) && !saved_x(&bf16), "{}", tf.name);
        assert_eq!(tf.same_structure(&bf16), tf.name == "moe_ffn_backward", "{}", tf.name);
    }
}

#[test]
fn the_natural_int8_layers_at_deepseek_v3_ep8_are_the_builders() {
    let int8 = MoeShape::deepseek_v3_natural(8, 4096).with_dispatch(DispatchPrecision::Int8);
    let forward = lowered(FORWARD, 8, DispatchPrecision::Int8);
    let forward: Vec<&Taskflow> = forward.iter().filter(|tf| tf.name == "moe_ffn_natural").collect();
    assert_eq!(forward.len(), 1);
    let passes = lowered(NATURAL, 8, DispatchPrecision::Int8);
    for tf in forward.into_iter().chain(&passes) {
        is_the_builders(tf, &int8, &format!("natural INT8 {}", tf.name));
        // The forward's quantising and dequantising tiles are guarded by the counts, like their blocks.
        let guarded = tf.families.iter().filter(|f| f.guard.is_some()).map(|f| f.name.as_str()).collect::<Vec<_>>();
        let forward = tf.name != "moe_ffn_backward";
        assert_eq!(
            guarded.contains(&"quantize_block") && guarded.contains(&"dequantize_block"),
            forward,
            "{guarded:?}"
        );
    }
}

#[test]
fn the_natural_layers_at_deepseek_v3_ep16_to_64_are_the_builders() {
    for ranks in [16, 32, 64] {
        let shape = MoeShape::deepseek_v3_natural(ranks, 4096);
        let forward = lowered(FORWARD, ranks, DispatchPrecision::Bf16);
        let forward = forward.into_iter().filter(|tf| tf.name == "moe_ffn_natural");
        for tf in forward.chain(lowered(NATURAL, ranks, DispatchPrecision::Bf16)) {
            is_the_builders(&tf, &shape, &format!("natural {} at EP {ranks}", tf.name));
            // The comparison sees the EP: the layer at EP 8 differs.
            let at8 = MoeShape::deepseek_v3_natural(8, 4096).pass_taskflow(pass_of(&tf.name)).unwrap();
            assert!(!tf.same_structure(&at8), "{} at EP {ranks}", tf.name);
        }
    }
}

#[test]
fn a_variant_needs_a_taskflow_at_ep8_and_an_int8_layout_to_replace() {
    let at = |ranks| Variant { ranks, dispatch: DispatchPrecision::Int8, only: &[] };
    let src = variant_source(NATURAL.0, NATURAL.1, at(32)).unwrap();
    assert!(src.contains("ranks = 32)]") && !src.contains("ranks = 8)]"));
    assert!(src.contains("dsl/moe_ffn_natural_int8.rs\"") && !src.contains("dsl/moe_ffn_natural.rs\""));
    assert!(src.contains("dsl/moe_ffn_natural_tail.rs\""), "the shared tail stays");
    let no_ep8 = "#[taskflow(profile = small(1), ranks = 2)]\nfn t() {}\n";
    assert!(variant_source(no_ep8, "t.rs", at(8)).is_err());
    let no_layout = "#[taskflow(profile = small(1), ranks = 8)]\nfn t() {}\n";
    let err = variant_source(no_layout, "t.rs", at(8)).unwrap_err().to_string();
    assert!(err.contains("INT8-dispatch counterpart"), "{err}");
}
