//! The AscendC kernels: where `cargo build` put the ones of `kernels/mini_moe.rs` and of the
//! flagship `examples/moe_ffn_dsl.rs` (this crate's build script), and the DeepSeek-V3 layer's
//! kernel at EP 8 built from the builder API with the same `Build` API.
//!
//! ```sh
//! cargo run --release -p hpmoe-examples --example ascendc [-- --out DIR]
//! ```
//!
//! Without a CANN toolkit these are sources only (and have not run on an NPU); with one
//! (`ASCEND_HOME_PATH`), the build script also compiled each kernel to `NAME.o`.

use hpmoe_host::moe::MoeShape;
use std::path::{Path, PathBuf};

fn main() {
    let mut args = std::env::args().skip(1);
    let mut out = PathBuf::from("target/hpmoe/ascendc");
    while let Some(a) = args.next() {
        match (a.as_str(), args.next()) {
            ("--out", Some(dir)) => out = PathBuf::from(dir),
            _ => {
                eprintln!("usage: ascendc [--out DIR]");
                std::process::exit(2);
            }
        }
    }
    let built = Path::new(env!("HPMOE_EXAMPLES_DIR"));
    println!(
        "cargo build wrote the kernels of kernels/mini_moe.rs and examples/moe_ffn_dsl.rs to {}:",
        built.display()
    );
    list(built);

    let tf = MoeShape::deepseek_v3(8, 4096).taskflow().expect("the DeepSeek-V3 shape is valid");
    let result = hpmoe_ascendc::Build::new().cargo_metadata(false).out_dir(&out).taskflow(tf).try_compile("ascendc");
    match result {
        Ok(r) => {
            let k = &r.kernels[0].kernel;
            println!(
                "\nDeepSeek-V3 MoE-FFN layer, EP 8: {} ({} dependencies on the AIC -> own-AIV flag, {} Matmul group(s)):",
                r.dir.display(),
                k.flags.edges.len(),
                k.matmul_groups.len()
            );
            list(&r.dir);
        }
        Err(e) => {
            eprint!("{e}");
            std::process::exit(1);
        }
    }
}

fn list(dir: &Path) {
    let mut files: Vec<_> = std::fs::read_dir(dir).map(|d| d.flatten().collect()).unwrap_or_default();
    files.sort_by_key(|e| e.file_name());
    for f in files {
        let meta = f.metadata().ok();
        if meta.as_ref().is_some_and(|m| m.is_file()) {
            println!("  {:<28} {:>9} bytes", f.file_name().to_string_lossy(), meta.map_or(0, |m| m.len()));
        }
    }
}
