//! Running a generated kernel on the CPU: hpmoe's strict emulation of the AscendC and SHMEM device
//! API (`emulator/`, C++), the kernel's generated launcher (`NAME_launch.cpp`), and the system g++.
//!
//! ```no_run
//! use hpmoe_host::exec::{Executor, Inputs, OpImpls, RunOptions};
//! use hpmoe_host::moe::MoeShape;
//!
//! let tf = MoeShape::tiny(2).taskflow().unwrap();
//! let compiled = hpmoe_core::plan(&tf).unwrap();
//! let kernel = hpmoe_ascendc::emit(&tf, &compiled).unwrap();
//! let inputs = Inputs::random(&tf, 7);
//! let run = hpmoe_ascendc::emulate(&tf, &kernel, &inputs, &Default::default()).unwrap();
//! // Every tensor of every rank, bit for bit as the host executor leaves them.
//! let host = Executor::for_compiled(&tf, &compiled, &OpImpls::builtin()).unwrap();
//! let host = host.run(&inputs, &RunOptions::default()).unwrap();
//! assert_eq!(run.first_difference(&host.snapshot), None);
//! ```
//!
//! [`emulate`] compiles the kernel and its launcher with g++ against the emulation (cached by
//! content hash, so a second run of the same kernel costs only the run), writes every tensor of
//! every rank, runs the launcher — every AIC and AIV of every block of every rank as a thread, the
//! whole run bounded in time — and reads back every tensor, the kernel's diagnostics area of each
//! rank and the emulator's findings. A launch that does not complete is an
//! [`EmulateError::Failed`]: the emulator's findings (which API call broke which rule, on which
//! rank and core) with the tile instance each failing core was running, and the kernel's own
//! diagnostics records decoded with the table (a timed-out wait names its counter, expected and
//! seen values).
//!
//! User ops: a user op's `emit` template calls a device function in a header the kernel includes
//! ([`crate::EmitOptions::includes`]); put that header's folder in
//! [`EmulateOptions::include_dirs`]. The same header serves the NPU build (bisheng, with
//! [`crate::Build::include_dir`]) and the emulator, so write it against the public AscendC API only
//! (`kernel_operator.h`), never against the emulator's internals.
//!
//! Before every launch, the table and flag plan about to be uploaded are decoded and certified
//! against the taskflow ([`hpmoe_core::certify::certify_blobs`]): a table that leaves a
//! dependency unenforced is refused with [`EmulateError::Uncertified`] and never runs.
//! [`EmulateOptions::uncertified_for_fault_injection`] turns that off, for tests of what the
//! device itself does with a bad table.
//!
//! What the emulation checks and what only hardware can confirm: `emulator/README.md`.

mod build;
mod data;
mod outcome;

pub use build::{CXX_FLAGS, emulator_dir};
pub use outcome::{EmulateError, EmulatedRun, EmulatorFailure, Finding, InputProblem};

use crate::emit::KernelFiles;
use hpmoe_core::model::Taskflow;
use hpmoe_core::table::ScheduleTable;
use hpmoe_host::exec::Inputs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How to build and run an emulated kernel.
#[derive(Clone, Debug)]
pub struct EmulateOptions {
    /// Folders of the headers the kernel includes for its user ops.
    pub include_dirs: Vec<PathBuf>,
    /// Extra `-D` definitions for the kernel and launcher (e.g. a shorter
    /// `HPMOE_<NAME>_WAIT_TIMEOUT_US`).
    pub defines: Vec<String>,
    /// The C++ compiler (default `g++`).
    pub compiler: String,
    /// Where compiled emulators and kernels are kept (default: `$HPMOE_EMU_CACHE`, else
    /// `hpmoe-emu` in the system's temporary folder).
    pub cache_dir: Option<PathBuf>,
    /// Wall-clock bound of one run (the emulator also bounds itself, and reports which core waits
    /// on what; this bound is the last resort that kills the process).
    pub timeout: Duration,
    /// Environment variables for the run (the emulator reads `HPMOE_EMU_*`). The default sets
    /// `HPMOE_EMU_STRICT_PIPE_V=1`: dependent vector instructions must be separated by
    /// `PipeBarrier<PIPE_V>` (hpmoe's runtime does not lean on the compiler's automatic
    /// synchronisation); remove it for device code that does.
    pub env: Vec<(String, String)>,
    /// The kernel's bound of every counter wait, in microseconds of the emulator's clock, compiled
    /// in unless `defines` sets `HPMOE_<NAME>_WAIT_TIMEOUT_US` itself. The emulation runs far
    /// slower than the device (hundreds of cores on a few host threads), so the generated bound
    /// (5 s) could expire while producers are still working; a real hang is found anyway, within
    /// milliseconds, because the emulator's clock jumps ahead while every core waits. `None`: the
    /// kernel's own bound.
    pub kernel_wait_timeout_us: Option<u64>,
    /// Runtime headers to use instead of the shipped ones: `(path under include/, contents)`,
    /// e.g. `("hpmoe/context.h", patched)`. For fault-injection tests of the runtime itself.
    pub runtime_overrides: Vec<(String, String)>,
    /// **For fault-injection tests only** (default `false`): launch without certifying the table
    /// and flag plan first, to test what the kernel and the emulator say about a tampered table
    /// (a corrupted blob, a wrong target). Such a run may hang until a bound or complete with a
    /// wrong answer; nothing else should set it.
    pub uncertified_for_fault_injection: bool,
}

impl Default for EmulateOptions {
    fn default() -> Self {
        EmulateOptions {
            include_dirs: Vec::new(),
            defines: Vec::new(),
            compiler: "g++".into(),
            cache_dir: None,
            timeout: Duration::from_secs(300),
            env: vec![("HPMOE_EMU_STRICT_PIPE_V".into(), "1".into())],
            kernel_wait_timeout_us: Some(600_000_000),
            runtime_overrides: Vec::new(),
            uncertified_for_fault_injection: false,
        }
    }
}

impl EmulateOptions {
    fn cache(&self) -> PathBuf {
        self.cache_dir
            .clone()
            .or_else(|| std::env::var_os("HPMOE_EMU_CACHE").map(PathBuf::from))
            .unwrap_or_else(|| std::env::temp_dir().join("hpmoe-emu"))
    }
}

/// Whether the compiler of `options` can be run (the emulator needs it).
pub fn compiler_available(options: &EmulateOptions) -> bool {
    Command::new(&options.compiler).arg("--version").output().is_ok_and(|o| o.status.success())
}

/// The files of one kernel the emulator needs: what [`crate::emit()`] returns, or what
/// [`crate::Build`] wrote to a folder.
#[derive(Clone, Debug)]
pub struct KernelSources {
    /// The kernel's name (file stem and entry point).
    pub name: String,
    /// `NAME.cpp`: the kernel.
    pub cpp: String,
    /// `NAME_schedule.h`: the table's layout and the kernel's constants.
    pub header: String,
    /// `NAME_launch.cpp`: the host launcher the emulator runs.
    pub launcher: String,
    /// `NAME_schedule.bin`: the schedule table blob.
    pub table_bin: Vec<u8>,
    /// `NAME_flags.bin`: the hardware-flag plan, passed as the kernel's `flags` argument.
    pub flags_bin: Vec<u8>,
    /// The table, decoded (to name the tiles of a failure).
    pub table: ScheduleTable,
}

impl KernelSources {
    /// The sources of emitted kernel files.
    pub fn of(kernel: &KernelFiles) -> Self {
        KernelSources {
            name: kernel.name.clone(),
            cpp: kernel.cpp.clone(),
            header: kernel.header.clone(),
            launcher: kernel.launcher.clone(),
            table_bin: kernel.table_bin.clone(),
            flags_bin: kernel.flags_bin.clone(),
            table: kernel.table.clone(),
        }
    }

    /// The kernel a `#[taskflow]` function embedded: `kernel_source`, `kernel_header`,
    /// `kernel_launcher`, `table_bytes()` and `flags_bytes` of its [`Program`](hpmoe_core::dsl::Program).
    pub fn of_program(program: &hpmoe_core::dsl::Program) -> Result<Self, EmulateError> {
        let cpp = program
            .kernel_source
            .map_err(|why| EmulateError::Input(InputProblem::NoKernel { program: program.name.to_string(), why }))?;
        // Unpacked once: the blob the launcher uploads, and decoded from it the table.
        let table_bin = program.table_bytes().map_err(|e| EmulateError::Input(InputProblem::Program(e)))?;
        let table = ScheduleTable::from_bytes(&table_bin)
            .map_err(|e| EmulateError::Input(InputProblem::Program(hpmoe_core::dsl::ProgramError::Table(e))))?;
        Ok(KernelSources {
            name: crate::emit::names::identifier(program.name),
            cpp: cpp.to_string(),
            header: program.kernel_header.to_string(),
            launcher: program.kernel_launcher.to_string(),
            table_bin,
            flags_bin: program.flags_bytes.to_vec(),
            table,
        })
    }

    /// Reads kernel `name`'s five files from `dir` (a [`crate::Build`] output folder).
    pub fn read_dir(dir: &Path, name: &str) -> Result<Self, EmulateError> {
        let text = |suffix: &str| {
            let path = dir.join(format!("{name}{suffix}"));
            std::fs::read_to_string(&path).map_err(|e| EmulateError::io(&path, e))
        };
        let bytes = |suffix: &str| {
            let path = dir.join(format!("{name}{suffix}"));
            std::fs::read(&path).map_err(|e| EmulateError::io(&path, e))
        };
        let table_bin = bytes("_schedule.bin")?;
        let table = ScheduleTable::from_bytes(&table_bin)
            .map_err(|error| EmulateError::Input(InputProblem::Table { name: name.to_string(), error }))?;
        Ok(KernelSources {
            name: name.to_string(),
            cpp: text(".cpp")?,
            header: text("_schedule.h")?,
            launcher: text("_launch.cpp")?,
            table_bin,
            flags_bin: bytes("_flags.bin")?,
            table,
        })
    }

    /// `(file name, contents)` of the five files.
    pub fn files(&self) -> [(String, &[u8]); 5] {
        [
            (format!("{}.cpp", self.name), self.cpp.as_bytes()),
            (format!("{}_schedule.h", self.name), self.header.as_bytes()),
            (format!("{}_schedule.bin", self.name), &self.table_bin),
            (format!("{}_flags.bin", self.name), &self.flags_bin),
            (format!("{}_launch.cpp", self.name), self.launcher.as_bytes()),
        ]
    }
}

impl From<&KernelFiles> for KernelSources {
    fn from(kernel: &KernelFiles) -> Self {
        KernelSources::of(kernel)
    }
}

/// A kernel compiled against the emulation, ready to run.
#[derive(Clone, Debug)]
pub struct Emulation {
    kernel: KernelSources,
    binary: PathBuf,
    options: EmulateOptions,
}

impl Emulation {
    /// Compiles `kernel` and its launcher (or finds them in the cache).
    pub fn build(kernel: impl Into<KernelSources>, options: &EmulateOptions) -> Result<Emulation, EmulateError> {
        let kernel = kernel.into();
        let cache = options.cache();
        std::fs::create_dir_all(&cache).map_err(|e| EmulateError::io(&cache, e))?;
        let binary = build::launcher_binary(&cache, options, &kernel)?;
        Ok(Emulation { kernel, binary, options: options.clone() })
    }

    /// The kernel this emulation runs.
    pub fn kernel(&self) -> &KernelSources {
        &self.kernel
    }

    /// Runs the kernel with its own table and flag plan on `inputs` (non-input tensors start as
    /// the host executor's do: poisoned, see [`hpmoe_host::exec::tensor::poison`]), once they are
    /// certified against `tf` ([`EmulateError::Uncertified`] if not).
    pub fn run(&self, tf: &Taskflow, inputs: &Inputs) -> Result<EmulatedRun, EmulateError> {
        self.run_with_blobs(tf, inputs, &self.kernel.table_bin, &self.kernel.flags_bin)
    }

    /// Runs the kernel with another table and flag plan (a fault-injection test's, or a table a
    /// user wants to try): they are certified against `tf` first ([`EmulateError::Uncertified`]
    /// if not, unless [`EmulateOptions::uncertified_for_fault_injection`]), and the kernel checks
    /// them against the constants it was generated with.
    pub fn run_with_blobs(
        &self,
        tf: &Taskflow,
        inputs: &Inputs,
        table: &[u8],
        flags: &[u8],
    ) -> Result<EmulatedRun, EmulateError> {
        if !self.options.uncertified_for_fault_injection {
            hpmoe_core::certify::certify_blobs(tf, table, Some(flags)).map_err(EmulateError::Uncertified)?;
        }
        let dir = data::RunDir::new(&self.options.cache(), &self.kernel.name)?;
        data::write_tensors(&dir.data(), tf, inputs)?;
        let (table_path, flags_path) = (dir.root().join("table.bin"), dir.root().join("flags.bin"));
        std::fs::write(&table_path, table).map_err(|e| EmulateError::io(&table_path, e))?;
        std::fs::write(&flags_path, flags).map_err(|e| EmulateError::io(&flags_path, e))?;
        let mut cmd = Command::new(&self.binary);
        cmd.arg("--data")
            .arg(dir.data())
            .arg("--out")
            .arg(dir.out())
            .arg("--table")
            .arg(&table_path)
            .arg("--flags")
            .arg(&flags_path)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in &self.options.env {
            cmd.env(k, v);
        }
        let started = Instant::now();
        let status = outcome::run_bounded(&mut cmd, self.options.timeout)?;
        let wall = started.elapsed();
        let result = outcome::collect(tf, &self.kernel, &dir.out(), status, wall);
        drop(dir);
        result
    }
}

/// Builds (or finds in the cache) and runs `kernel` on `inputs`: every tensor of every rank after
/// the launch, or why it did not complete.
pub fn emulate(
    tf: &Taskflow,
    kernel: impl Into<KernelSources>,
    inputs: &Inputs,
    options: &EmulateOptions,
) -> Result<EmulatedRun, EmulateError> {
    Emulation::build(kernel, options)?.run(tf, inputs)
}
