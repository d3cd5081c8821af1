//! Generates the AscendC kernels of `kernels/mini_moe.rs` into `$OUT_DIR/hpmoe/examples/` (and
//! compiles them when `ASCEND_HOME_PATH` names a CANN toolkit). The `ascendc` example prints
//! where they went.

fn main() {
    hpmoe_ascendc::Build::new().file("kernels/mini_moe.rs").compile("examples");
}
