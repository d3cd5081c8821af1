//! # hpmoe-ascendc
//!
//! The AscendC backend of hpmoe. For a compiled taskflow it emits one mixed AIC/AIV kernel and
//! the data it walks:
//!
//! | file | what |
//! |---|---|
//! | `NAME.cpp` | the kernel (`emit/kernel.rs`): AIC and AIV worker loops over per-family tile code |
//! | `NAME_schedule.h` | the table's layout and constants, then the kernel's (`emit/header.rs`) |
//! | `NAME_schedule.bin` | the schedule table (hpmoe-core's binary form) |
//! | `NAME_flags.bin` | which dependencies use the AIC → own-AIV hardware flag ([`flags`]) |
//! | `NAME_launch.cpp` | the host launcher, for an NPU and for the CPU emulator (`emit/launcher.rs`) |
//!
//! It ships the device runtime those kernels include ([`runtime`], `include/hpmoe/*.h`), a
//! build-script API in the manner of `cxx_build` ([`Build`]), the CANN toolkit command
//! ([`toolchain`]), a reader of the diagnostics a launch leaves behind ([`diag`]), host syntax
//! checks against declaration-only AscendC, SHMEM and ACL headers ([`check`], `devkit-decl/`),
//! and a strict CPU emulation of the device API that runs the kernels with their launchers
//! ([`emulator`], `emulator/`), since no toolkit is needed to develop or test it. Its errors
//! are data, in one module every other imports ([`error`]).
//!
//! Data flows from hpmoe-core's `Compiled` (a checked table and its flag plan) through [`emit`](mod@emit),
//! whose per-file parts (kernel, header, launcher, op calls, regions as views, C names) are
//! private: callers use [`emit()`], [`emit_with`] or [`kernel_source`], and get [`KernelFiles`].
//! [`Build`] runs the same plan and emission for every taskflow of a build script's sources and
//! writes the files with [`write`](mod@write); [`emulate`] compiles them against the emulation and runs
//! them; [`diag`] reads what a launch left behind.
//!
//! ```
//! use hpmoe_host::moe::MoeShape;
//!
//! let tf = MoeShape::tiny(2).taskflow().unwrap();
//! let compiled = hpmoe_core::compile(&tf, &hpmoe_core::schedule::SimpleCost::default()).unwrap();
//! let kernel = hpmoe_ascendc::emit(&tf, &compiled).unwrap();
//! assert_eq!(kernel.name, "moe_ffn");
//! assert!(kernel.cpp.contains("KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);"));
//! assert!(kernel.cpp.contains("if ASCEND_IS_AIC {") && kernel.cpp.contains("if ASCEND_IS_AIV {"));
//! let names: Vec<String> = kernel.files().iter().map(|(name, _)| name.clone()).collect();
//! assert_eq!(names, ["moe_ffn.cpp", "moe_ffn_schedule.h", "moe_ffn_schedule.bin", "moe_ffn_flags.bin", "moe_ffn_launch.cpp"]);
//! // What the `#[taskflow]` macro will embed beside the schedule consts:
//! assert_eq!(hpmoe_ascendc::kernel_source(&tf, &compiled).unwrap(), kernel.cpp);
//! ```
//!
//! # Features
//!
//! - `emulator` (default): [`emulator`] and [`emulate`]. The emulator reads and writes every
//!   tensor of a run as the host executor's data (`hpmoe_host::exec::{Inputs, Snapshot}`), so that
//!   a kernel's result compares bit for bit with the executor's; it is the one part of this crate
//!   that depends on hpmoe-host. The `#[taskflow]` proc-macro only emits, and turns it off, so
//!   compiling a taskflow never builds the host crate (`cargo tree -p hpmoe-macros -e normal`).
//!   The emulator stays here rather than in hpmoe-host because what it checks is this crate's
//!   output: the kernel text, the runtime headers and the launcher.
//!
//! Every generated kernel runs on the emulator bitwise like the host executor; nothing here has
//! been compiled with a CANN toolkit or run on an NPU yet. See the README's "AscendC kernels from
//! `cargo build`" and "Running a kernel on the CPU" for what is checked and how.

#![warn(missing_docs)]

pub mod build;
pub mod check;
pub mod diag;
pub mod emit;
#[cfg(feature = "emulator")]
pub mod emulator;
pub mod error;
pub mod flags;
pub mod runtime;
pub mod toolchain;
pub mod write;

pub use build::{Build, BuildOutput};
pub use emit::{EmitOptions, KernelFiles, emit, emit_with, kernel_source};
#[cfg(feature = "emulator")]
pub use emulator::{EmulateError, EmulateOptions, EmulatedRun, Emulation, emulate};
pub use error::{BuildError, BuildErrorKind, BuildFailure, EmitError, EmitErrorKind, EmitErrors};
pub use flags::{FlagPlan, FlagPolicy};
