//! Generates the AscendC kernels of every `#[taskflow]` in `kernels/mini_moe.rs` and in the
//! flagship `examples/moe_ffn_dsl.rs` (the DeepSeek-V3 MoE-FFN layer at EP 8) into
//! `$OUT_DIR/hpmoe/examples/` — and compiles them when `ASCEND_HOME_PATH` names a CANN
//! toolkit. The `ascendc` example prints where they went.

fn main() {
    hpmoe_ascendc::Build::new().file("kernels/mini_moe.rs").file("examples/moe_ffn_dsl.rs").compile("examples");
}
