//! `#[taskflow]` and `#[tile]`: the kernel author's front door to hpmoe.
//!
//! This crate is deliberately thin: parsing, checking and scheduling live in
//! `hpmoe-core` (its `syntax` feature holds the shared front-end), so that the macro and
//! the build-script API of `hpmoe-ascendc` read taskflows the same way. The attribute
//! macros themselves are not written yet (see the DSL issue); until then taskflows are
//! built with `hpmoe_core::model::Taskflow`'s builder API.
