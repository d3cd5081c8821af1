//! The backend's integration tests, one module per area (one test binary for the crate: linking
//! one binary instead of one per file is most of what it saves the test build): emission and its
//! snapshots, the build-script API, the devkit and runtime headers, the CPU emulator (its own API,
//! faults, the generated kernels bitwise against the host executor), the hardware-flag rule, and
//! the random taskflows of `hpmoe_core::testing` through the whole backend. `common` holds the
//! helpers and taskflows the modules share; `snapshots/` the reviewed generated sources.

mod accumulation;
mod backward_ops;
mod build_api;
mod common;
mod devkit_decl;
mod emit;
mod emulator;
mod emulator_api;
mod emulator_faults;
mod flags;
mod moe_backward;
mod random;
mod runtime;
