//! # hpmoe-ascendc
//!
//! The AscendC backend of hpmoe: turns a scheduled taskflow into one mixed AIC/AIV kernel
//! (`NAME.cpp`), its schedule header (`NAME_schedule.h`), its schedule table
//! (`NAME_schedule.bin`) and its hardware-flag plan (`NAME_flags.bin`); ships the device
//! runtime headers those kernels include (`include/hpmoe/*.h`); and offers a build-script API.

pub mod build;
pub mod check;
pub mod diag;
pub mod emit;
pub mod flags;
pub mod runtime;
pub mod toolchain;
pub mod write;

pub use build::{Build, BuildError, BuildOutput};
pub use emit::{EmitError, EmitOptions, KernelFiles, emit, emit_with, kernel_source};
pub use flags::{FlagPlan, FlagPolicy};
