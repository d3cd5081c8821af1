//! Hardware cross-core flags between an AIC and its own two AIVs: the planner and the flag plan
//! live in hpmoe-core ([`hpmoe_core::schedule::flags`]), since flag planning is part of
//! compilation (one table and one flag plan per taskflow); this module re-exports them for the
//! backend's users. The device side is `include/hpmoe/flags.h`.

pub use hpmoe_core::schedule::flags::*;
