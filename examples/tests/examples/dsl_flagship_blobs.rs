//! The DSL flagship (`examples/moe_ffn_dsl.rs`) embeds schedule tables of megabytes, packed
//! (`hpmoe_core::dsl::pack`), as byte-string literals. The embedded blobs must be, byte for byte, what `hpmoe_ascendc::Build`
//! wrote for the same file in this crate's build script: one plan per taskflow, whichever of
//! the two compiled it.

#[allow(dead_code)]
#[path = "../../examples/moe_ffn_dsl.rs"]
mod flagship;

use hpmoe_core::dsl::Program;
use std::path::Path;

fn assert_one_plan(program: &Program) {
    let dir = Path::new(env!("HPMOE_EXAMPLES_DIR"));
    let file = |suffix: &str| std::fs::read(dir.join(format!("{}{suffix}", program.name))).unwrap();
    let table = program.table_bytes().unwrap();
    assert!(table.len() > 1 << 20, "the flagship's table is megabytes");
    assert!(
        program.table_packed.len() * 6 < table.len(),
        "{}: packed {} of {} bytes",
        program.name,
        program.table_packed.len(),
        table.len()
    );
    assert_eq!(table, file("_schedule.bin"), "{}: one table", program.name);
    assert_eq!(program.flags_bytes, file("_flags.bin"), "{}: one flag plan", program.name);
    assert!(program.table().is_ok(), "{}: the embedded table decodes", program.name);
}

#[test]
fn the_balanced_layer_embeds_the_table_build_wrote() {
    assert_one_plan(&flagship::moe_ffn());
}

#[test]
fn the_natural_routing_layer_embeds_the_table_build_wrote() {
    assert_one_plan(&flagship::moe_ffn_natural());
}
