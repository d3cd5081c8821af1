//! The builder's taskflows under the family names of the MoE-FFN layer written in the
//! `#[taskflow]` DSL (`examples/dsl/`), so the two can be compared table for table: a schedule
//! table names its families.

use hpmoe_core::model::Taskflow;

/// The builder's families whose DSL tiles are named otherwise, because a tile cannot share its
/// name with the op it calls: (builder's name, DSL's name).
const RENAMED: [(&str, &str); 3] =
    [("swiglu", "activation"), ("quantize", "quantize_block"), ("dequantize", "dequantize_block")];

/// `built` with its families named as the DSL files name them (the forward's
/// `swiglu` is `activation`, INT8 dispatch's `quantize` and `dequantize` are `quantize_block`
/// and `dequantize_block`), in the family and in every `after` that refers to it.
pub fn under_dsl_names(mut built: Taskflow) -> Taskflow {
    let dsl_name = |name: &mut String| {
        if let Some((_, dsl)) = RENAMED.iter().find(|(builder, _)| builder == name) {
            *name = (*dsl).into();
        }
    };
    for f in &mut built.families {
        dsl_name(&mut f.name);
        for a in &mut f.after {
            dsl_name(&mut a.family);
        }
    }
    built
}
