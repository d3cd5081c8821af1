//! The custom variant's AscendC kernel at a tiny shape through the same host syntax check as
//! hpmoe-ascendc's generated kernels (`g++ -std=c++17 -fsyntax-only -Wall -Wextra -Werror`
//! against the declaration-only devkit and the runtime headers), with the user op's device
//! function included. Skipped, with a note, where g++ is missing.

use hpmoe_ascendc::check::SyntaxCheck;
use hpmoe_core::cost::{CostProfile, TaskflowCost};
use hpmoe_examples::shared_expert::{SharedMoe, op};
use std::path::PathBuf;

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hpmoe-examples-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn tiny_variant_kernel_passes_the_syntax_check() {
    let tf = SharedMoe::tiny(2).taskflow().unwrap();
    let cost = TaskflowCost::new(&tf, CostProfile::ascend_a3_die());
    let compiled = hpmoe_core::compile(&tf, &cost).unwrap_or_else(|d| panic!("{}", d.render(&tf.sources)));
    let kernel = hpmoe_ascendc::emit_with(&tf, &compiled, &op::emit_options()).unwrap();
    assert_eq!(kernel.name, "moe_ffn_shared");
    assert!(kernel.cpp.contains(&format!("#include \"{}\"", op::DEVICE_HEADER_NAME)), "{}", kernel.cpp);
    assert!(kernel.cpp.contains("shared_expert_ops::WeightedSumShared(vec,"), "{}", kernel.cpp);

    let dir = temp_dir("shared-kernel");
    kernel.write_to(&dir).unwrap();
    let check = SyntaxCheck::new();
    if !check.available() {
        eprintln!("note: g++ not found; skipping the C++ syntax check of moe_ffn_shared.cpp");
        return;
    }
    let cpp = dir.join("moe_ffn_shared.cpp");
    let (good, bad) = (dir.join("good"), dir.join("bad"));
    std::fs::create_dir_all(&good).unwrap();
    std::fs::create_dir_all(&bad).unwrap();
    std::fs::write(good.join(op::DEVICE_HEADER_NAME), op::DEVICE_HEADER).unwrap();
    check.clone().include(&dir).include(&good).run(&cpp).unwrap_or_else(|e| panic!("moe_ffn_shared.cpp:\n{e}"));

    // The check reads the user op's body: a call the devkit does not declare is an error.
    std::fs::write(bad.join(op::DEVICE_HEADER_NAME), op::DEVICE_HEADER.replace("AscendC::Muls(", "AscendC::Mulz("))
        .unwrap();
    let err = check.include(&dir).include(&bad).run(&cpp).unwrap_err();
    let hpmoe_ascendc::error::ToolkitError::CompileFailed { output, .. } = &err else { panic!("{err}") };
    assert!(output.contains("Mulz"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
