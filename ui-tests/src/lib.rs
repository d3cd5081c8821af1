//! Compile-pass and compile-fail cases of the hpmoe macros, run by `tests/ui.rs` with
//! trybuild: `ui/pass/*.rs` must build and run, `ui/fail/*.rs` must fail with exactly the
//! errors pinned in the `.stderr` beside each.

#![warn(missing_docs)]
