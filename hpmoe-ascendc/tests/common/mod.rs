//! Helpers shared by the integration tests.
#![allow(dead_code)]

pub mod decl_cases;
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

/// Asserts that the check rejects `file` with a message containing `expected`.
pub fn assert_rejected(check: &SyntaxCheck, file: &std::path::Path, expected: &str) {
    match check.run(file) {
        Ok(()) => panic!("{} was accepted, expected an error containing {expected:?}", file.display()),
        Err(out) => assert!(out.contains(expected), "expected {expected:?} in:\n{out}"),
    }
}
