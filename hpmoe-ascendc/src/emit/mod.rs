//! Emission: a compiled taskflow → the files of its AscendC kernel.
//!
//! [`emit`] returns a [`KernelFiles`]: `NAME.cpp` (the kernel, `kernel.rs`), `NAME_schedule.h`
//! (table layout and constants, `header.rs`), `NAME_schedule.bin` (the kernel's schedule table),
//! `NAME_flags.bin` (its hardware-flag plan, [`crate::flags`]) and `NAME_launch.cpp` (its host
//! launcher for the NPU and the CPU emulator, `launcher.rs`). Output is deterministic: the
//! same taskflow and schedule give byte-identical files.
//!
//! The kernel's table and flag plan are the compiled ones ([`hpmoe_core::Compiled::table`],
//! [`hpmoe_core::Compiled::flags`]): flag planning is part of compilation, so the table a kernel
//! walks is the table the host executor and the emulator run.

mod expr;
mod header;
mod kernel;
mod launcher;
pub(crate) mod names;
mod ops;
mod order;
mod region;
mod slots;

use crate::error::{EmitError, EmitErrorKind, EmitErrors};
use crate::flags::FlagPlan;
use crate::write::{WriteOutcome, write_if_changed};
use hpmoe_core::Compiled;
use hpmoe_core::model::{CoreKind, Taskflow};
use hpmoe_core::table::ScheduleTable;
use std::path::Path;

pub use ops::MatmulGroup;

/// Elements of one UB tile of the vector runtime (`hpmoe::kTileElems`).
pub const TILE_ELEMS: u32 = 4096;
/// Per-row scalars one tile of the vector runtime holds (`hpmoe::kRowScalars`): the most choices
/// per row `scale_rows_repeat` and `row_dot_topk` take.
pub const ROW_SCALARS: u32 = 512;
/// Default bound of a counter wait: 5 s.
pub const DEFAULT_WAIT_TIMEOUT_US: u64 = 5_000_000;

/// `count` and the noun that agrees with it, for generated comments and messages: `one` for 1,
/// `many` otherwise (`1 block`, `2 blocks`).
fn counted(count: impl Into<u64>, one: &str, many: &str) -> String {
    let count = count.into();
    format!("{count} {}", if count == 1 { one } else { many })
}

/// How to emit. (Which dependencies use hardware flags is decided when the taskflow is compiled:
/// [`hpmoe_core::CompileOptions`].)
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EmitOptions {
    /// Bound of every counter wait, µs (`HPMOE_<NAME>_WAIT_TIMEOUT_US`, overridable at compile time).
    pub wait_timeout_us: u64,
    /// Headers the kernel includes after the runtime: where user ops' device functions live.
    pub includes: Vec<String>,
}

impl Default for EmitOptions {
    fn default() -> Self {
        EmitOptions { wait_timeout_us: DEFAULT_WAIT_TIMEOUT_US, includes: Vec::new() }
    }
}

/// The generated files of one taskflow.
#[derive(Clone, Debug)]
pub struct KernelFiles {
    /// The kernel's name (a C identifier; the taskflow's name, sanitised) and file stem.
    pub name: String,
    /// `NAME.cpp`.
    pub cpp: String,
    /// `NAME_schedule.h`.
    pub header: String,
    /// The kernel's schedule table (`NAME_schedule.bin` is its `to_bytes()`).
    pub table: ScheduleTable,
    /// `NAME_schedule.bin`.
    pub table_bin: Vec<u8>,
    /// `NAME_flags.bin`.
    pub flags_bin: Vec<u8>,
    /// `NAME_launch.cpp`: the host launcher, for the NPU and for the CPU emulator.
    pub launcher: String,
    /// Which dependencies the hardware flag carries.
    pub flags: FlagPlan,
    /// The Matmul objects of the AIC and the tile shapes their tilings must cover.
    pub matmul_groups: Vec<MatmulGroup>,
}

impl KernelFiles {
    /// `(file name, contents)` of the five files, in a fixed order.
    pub fn files(&self) -> [(String, &[u8]); 5] {
        [
            (format!("{}.cpp", self.name), self.cpp.as_bytes()),
            (format!("{}_schedule.h", self.name), self.header.as_bytes()),
            (format!("{}_schedule.bin", self.name), &self.table_bin),
            (format!("{}_flags.bin", self.name), &self.flags_bin),
            (format!("{}_launch.cpp", self.name), self.launcher.as_bytes()),
        ]
    }

    /// Writes the five files into `dir`, touching only those whose content changed.
    pub fn write_to(&self, dir: &Path) -> std::io::Result<Vec<WriteOutcome>> {
        self.files().iter().map(|(name, bytes)| write_if_changed(&dir.join(name), bytes)).collect()
    }
}

/// Emits the kernel of a compiled taskflow with the default options.
pub fn emit(tf: &Taskflow, compiled: &Compiled) -> Result<KernelFiles, EmitErrors> {
    emit_with(tf, compiled, &EmitOptions::default())
}

/// The kernel's C++ source alone, as [`emit`] writes it to `NAME.cpp` (for a macro that embeds
/// it as a `&'static str`).
pub fn kernel_source(tf: &Taskflow, compiled: &Compiled) -> Result<String, EmitErrors> {
    emit(tf, compiled).map(|k| k.cpp)
}

/// Emits the kernel of a compiled taskflow; on failure, every error of every tile.
pub fn emit_with(tf: &Taskflow, compiled: &Compiled, options: &EmitOptions) -> Result<KernelFiles, EmitErrors> {
    let name = names::identifier(&tf.name);
    let prefix = format!("{}_", names::constant_name(&tf.name));
    let mut errors = EmitErrors { errors: aic_remote_signals(tf, compiled) };
    let tensor_params = names::distinct_identifiers(tf.tensors.iter().map(|t| t.name.as_str()), &kernel::FIXED_PARAMS);

    // The table and its flag plan come from compilation (hpmoe_core::compile_with): one table per
    // taskflow, which the kernel, the host executor and the CPU emulator all run.
    let plan = &compiled.flags;
    let table = compiled.table.clone();
    let table_bin = table.to_bytes();
    let flags_bin = compiled.flags_bin.clone();

    let parts = kernel::KernelParts { tf, name: &name, prefix: &prefix, tensor_params: &tensor_params, plan, options };
    let (cpp, matmul_groups) = match kernel::render(&parts) {
        Ok(rendered) if errors.errors.is_empty() => rendered,
        Ok(_) => return Err(errors),
        Err(more) => {
            errors.errors.extend(more.errors);
            return Err(errors);
        }
    };
    let header = header::render(&header::HeaderParts {
        tf,
        name: &name,
        prefix: &prefix,
        table: &table,
        tensor_params: &tensor_params,
        groups: &matmul_groups,
        flag_id: plan.flag_id,
        flagged_edges: plan.edges.len(),
        flags_bytes: &flags_bin,
        wait_timeout_us: options.wait_timeout_us,
    });
    let launcher = launcher::render(&launcher::LauncherParts {
        tf,
        name: &name,
        prefix: &prefix,
        tensor_params: &tensor_params,
        groups: &matmul_groups,
    });
    Ok(KernelFiles { name, cpp, header, table, table_bin, flags_bin, launcher, flags: plan.clone(), matmul_groups })
}

/// AIC tiles never write another rank's memory, so they never signal another rank: the runtime
/// sends their signals with a local atomic only. A table that says otherwise is refused, once
/// per offending family.
fn aic_remote_signals(tf: &Taskflow, compiled: &Compiled) -> Vec<EmitError> {
    let exp = &compiled.expanded;
    let mut families: Vec<usize> = exp
        .space
        .node_ids()
        .filter(|&n| {
            exp.core_kind(n) == CoreKind::Aic && compiled.sync.signals(n).iter().any(|s| s.rank != exp.space.rank_of(n))
        })
        .map(|n| exp.space.family_of(n))
        .collect();
    families.sort_unstable();
    families.dedup();
    families
        .into_iter()
        .map(|fi| {
            let family = &tf.families[fi];
            EmitError {
                kind: EmitErrorKind::RemoteSignalFromAic,
                taskflow: tf.name.clone(),
                family: Some(family.name.clone()),
                loc: family.loc,
                message: "an AIC tile signals another rank; only puts (AIV) may".into(),
            }
        })
        .collect()
}
