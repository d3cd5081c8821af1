//! Helpers shared by the integration tests.
#![allow(dead_code)]

pub mod decl_cases;
pub mod emulated;
pub mod taskflows;

use hpmoe_ascendc::check::SyntaxCheck;
use std::path::PathBuf;

/// A fresh temporary folder for one test.
pub fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hpmoe-ascendc-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The syntax check, or `None` (with a printed note) where g++ is missing.
pub fn gxx() -> Option<SyntaxCheck> {
    let check = SyntaxCheck::new();
    if check.available() {
        Some(check)
    } else {
        eprintln!("note: g++ not found; skipping this C++ check");
        None
    }
}

/// Writes the kernel into `dir` and syntax-checks its .cpp and its launcher's NPU build
/// (`g++ -fsyntax-only` against the declaration-only devkit and the test user ops' headers in
/// `tests/cpp`, the launcher against declarations of exactly the host APIs it calls); skipped
/// without g++.
pub fn syntax_check(k: &hpmoe_ascendc::KernelFiles, dir: &std::path::Path) {
    k.write_to(dir).unwrap();
    let Some(check) = gxx() else { return };
    let check = check.include(dir).include(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cpp"));
    check.run(&dir.join(format!("{}.cpp", k.name))).unwrap_or_else(|e| panic!("{}.cpp:\n{e}", k.name));
    let kernel_args = kernel_arg_count(&k.cpp, &k.name);
    std::fs::write(
        dir.join(format!("aclrtlaunch_{}.h", k.name)),
        hpmoe_ascendc::check::aclrtlaunch_decl(&k.name, kernel_args),
    )
    .unwrap();
    check.run(&dir.join(format!("{}_launch.cpp", k.name))).unwrap_or_else(|e| panic!("{}_launch.cpp:\n{e}", k.name));
}

/// The number of arguments of the kernel's entry point in `cpp`.
pub fn kernel_arg_count(cpp: &str, name: &str) -> usize {
    let sig = format!("__aicore__ void {name}(");
    let start = cpp.find(&sig).expect("the kernel's entry point") + sig.len();
    cpp[start..cpp[start..].find(')').unwrap() + start].matches("GM_ADDR").count()
}

/// Asserts that the check rejects `file` with a message containing `expected`.
pub fn assert_rejected(check: &SyntaxCheck, file: &std::path::Path, expected: &str) {
    match check.run(file) {
        Ok(()) => panic!("{} was accepted, expected an error containing {expected:?}", file.display()),
        Err(hpmoe_ascendc::error::ToolkitError::CompileFailed { output, .. }) => {
            assert!(output.contains(expected), "expected {expected:?} in:\n{output}")
        }
        Err(other) => panic!("{} was not checked: {other}", file.display()),
    }
}

/// Emulator options with the test user ops' header folder (`tests/cpp`), or `None` (with a printed
/// note) where no C++ compiler is installed.
pub fn emulator_options() -> Option<hpmoe_ascendc::EmulateOptions> {
    let options = hpmoe_ascendc::EmulateOptions {
        include_dirs: vec![std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cpp")],
        ..hpmoe_ascendc::EmulateOptions::default()
    };
    if hpmoe_ascendc::emulator::compiler_available(&options) {
        Some(options)
    } else {
        eprintln!("note: g++ not found; skipping this emulator test");
        None
    }
}

/// CRC-32 (IEEE), written out independently of the crates' own.
pub fn crc32_independent(bytes: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = (crc >> 1) ^ (0xEDB8_8320 & 0u32.wrapping_sub(crc & 1));
        }
    }
    !crc
}
