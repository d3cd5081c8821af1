//! The DeepSeek-V3 EP 8 backward and training step written in the DSL, under balanced routing
//! (`examples/moe_training_dsl.rs`) and natural routing (`examples/moe_training_natural_dsl.rs`),
//! the macro's tables, are the builder's (`MoeShape::deepseek_v3(8, 4096)`,
//! `MoeShape::deepseek_v3_natural(8, 4096)`): the same structure, and the builder's taskflows
//! plan to the same schedule tables and flag plans, byte for byte.

#[allow(dead_code)]
#[path = "../../examples/moe_training_dsl.rs"]
mod training;

#[allow(dead_code)]
#[path = "../../examples/moe_training_natural_dsl.rs"]
mod natural;

use hpmoe_host::moe::Pass;

#[test]
fn the_dsl_backward_is_the_builder_s_table_for_table() {
    assert!(training::check(&training::moe_ffn_backward(), Pass::Backward));
}

#[test]
fn the_dsl_training_step_is_the_builder_s_table_for_table() {
    assert!(training::check(&training::moe_ffn_training_step(), Pass::TrainingStep));
}

#[test]
fn the_dsl_natural_backward_is_the_builder_s_table_for_table() {
    assert!(natural::check(&natural::moe_ffn_backward(), Pass::Backward));
}

#[test]
fn the_dsl_natural_training_step_is_the_builder_s_table_for_table() {
    assert!(natural::check(&natural::moe_ffn_training_step(), Pass::TrainingStep));
}
