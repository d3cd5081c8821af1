//! What an emulated run produced: every tensor, each rank's diagnostics area, the emulator's
//! findings; and the errors of building or running it.

use super::KernelSources;
use super::data;
use crate::diag::{self, DiagStatus, Diagnostics};
use hpmoe_core::dsl::ProgramError;
use hpmoe_core::model::DType;
use hpmoe_core::model::Taskflow;
use hpmoe_core::table::TableError;
use hpmoe_host::exec::{HostTensor, Snapshot};
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A completed launch: every tensor of every rank, and the kernel's diagnostics.
#[derive(Clone, Debug)]
pub struct EmulatedRun {
    names: Vec<String>,
    /// `[rank][tensor]`, declaration order.
    tensors: Vec<Vec<HostTensor>>,
    /// Each rank's diagnostics area, decoded.
    pub diagnostics: Vec<Diagnostics>,
    /// Wall time of the launcher process (build excluded).
    pub wall: Duration,
}

impl EmulatedRun {
    /// Tensor `name` on `rank` after the launch.
    pub fn get(&self, rank: u32, name: &str) -> Option<&HostTensor> {
        let t = self.names.iter().position(|n| n == name)?;
        self.tensors.get(rank as usize).map(|r| &r[t])
    }

    /// The first tensor (rank-major, declaration order) whose bits differ from the host
    /// executor's `snapshot`, described; `None` when every tensor of every rank is bitwise equal.
    pub fn first_difference(&self, snapshot: &Snapshot) -> Option<String> {
        if snapshot.names() != self.names.as_slice() || snapshot.ranks() as usize != self.tensors.len() {
            return Some(format!(
                "different tensors: {:?} on {} ranks vs {:?} on {} ranks",
                self.names,
                self.tensors.len(),
                snapshot.names(),
                snapshot.ranks()
            ));
        }
        for (rank, tensors) in self.tensors.iter().enumerate() {
            for (name, mine) in self.names.iter().zip(tensors) {
                let theirs = snapshot.get(rank as u32, name).expect("same names");
                if let Some(d) = mine.first_difference(theirs) {
                    return Some(format!("rank {rank} `{name}`: {d}"));
                }
            }
        }
        None
    }
}

/// One finding of the emulator: a rule of the device API the kernel broke (or a hang), on one
/// rank and core, in one API call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// The rule, e.g. `gm_out_of_bounds`, `unsynchronised_read`, `deadlock`.
    pub kind: String,
    /// The rank the finding is on, when the emulator knows it (a hang of the whole launch has none).
    pub rank: Option<u32>,
    /// The core as the emulator names it (`aic0`, `aiv3`).
    pub core: Option<String>,
    /// The API call (`DataCopyPad`, `CrossCoreSetFlag`, ...).
    pub call: Option<String>,
    /// The tile instance the core was running, from its diagnostics record and the table
    /// (`r1.aiv3 entry 4: swiglu(0, 1)`), when the record says.
    pub tile: Option<String>,
    /// The emulator's whole line.
    pub line: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.line)?;
        if let Some(t) = &self.tile {
            write!(f, " [tile: {t}]")?;
        }
        Ok(())
    }
}

/// A launch that did not complete.
#[derive(Clone, Debug)]
pub struct EmulatorFailure {
    /// The emulator's findings, first error first.
    pub findings: Vec<Finding>,
    /// The kernel's diagnostics records of cores that did not finish, described with the table
    /// (e.g. a timed-out counter wait with its counter, expected and seen values).
    pub records: Vec<String>,
    /// Each rank's diagnostics area, decoded (empty where it could not be read back).
    pub diagnostics: Vec<Diagnostics>,
    /// The launcher's exit status and the end of its standard error.
    pub exit: String,
    /// The launcher's whole standard error, for when no finding or record explains the failure.
    pub stderr: String,
}

impl fmt::Display for EmulatorFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "the emulated launch did not complete ({})", self.exit)?;
        for x in &self.findings {
            writeln!(f, "  emulator: {x}")?;
        }
        for r in &self.records {
            writeln!(f, "  kernel: {r}")?;
        }
        if self.findings.is_empty() && self.records.is_empty() && !self.stderr.is_empty() {
            writeln!(f, "  stderr: {}", self.stderr.trim_end())?;
        }
        Ok(())
    }
}

/// Why an emulated run produced no result.
#[derive(Clone, Debug)]
pub enum EmulateError {
    /// The compiler (or `ar`, or the launcher) cannot be run.
    NoCompiler {
        /// The command line.
        command: String,
        /// The system's error.
        error: Arc<std::io::Error>,
    },
    /// The kernel, its launcher or the emulator did not compile.
    Compile {
        /// The command line that failed.
        command: String,
        /// What it printed (stdout, then stderr).
        output: String,
    },
    /// Inputs that do not fit the taskflow.
    Input(InputProblem),
    /// Reading or writing one of the run's files.
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The system's error.
        error: Arc<std::io::Error>,
    },
    /// A tensor file the launcher wrote back has another size than its tensor.
    TensorFile {
        /// The file.
        path: PathBuf,
        /// Its bytes.
        bytes: usize,
        /// The tensor.
        tensor: String,
    },
    /// Waiting for the launcher failed.
    Wait(Arc<std::io::Error>),
    /// The launcher did not finish within [`super::EmulateOptions::timeout`] and was killed.
    Killed {
        /// How long the launcher ran before it was killed.
        after: Duration,
        /// Its standard error up to then.
        stderr: String,
    },
    /// The launch did not complete: what the emulator and the kernel say.
    Failed(Box<EmulatorFailure>),
    /// Nothing was launched: the table and flag plan about to be uploaded are not certified to
    /// enforce every dependency of the taskflow ([`hpmoe_core::certify`]).
    Uncertified(hpmoe_core::certify::CertError),
}

impl EmulateError {
    pub(crate) fn io(path: &Path, e: std::io::Error) -> Self {
        EmulateError::Io { path: path.to_path_buf(), error: Arc::new(e) }
    }

    /// The certificate check's error, if the table was refused before the launch.
    pub fn certificate(&self) -> Option<&hpmoe_core::certify::CertError> {
        match self {
            EmulateError::Uncertified(e) => Some(e),
            _ => None,
        }
    }

    /// The failure's findings, if the launch ran and failed.
    pub fn failure(&self) -> Option<&EmulatorFailure> {
        match self {
            EmulateError::Failed(f) => Some(f),
            _ => None,
        }
    }
}

impl fmt::Display for EmulateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EmulateError::NoCompiler { command, error } => {
                write!(f, "no C++ compiler for the emulator: cannot run {command}: {error}")
            }
            EmulateError::Compile { command, output } => {
                write!(f, "compiling for the emulator failed: {command}\n{output}")
            }
            EmulateError::Input(e) => write!(f, "emulator inputs: {e}"),
            EmulateError::Io { path, error } => write!(f, "emulator files: {}: {error}", path.display()),
            EmulateError::TensorFile { path, bytes, tensor } => {
                write!(f, "emulator files: {} holds {bytes} bytes, not tensor `{tensor}`'s", path.display())
            }
            EmulateError::Wait(e) => write!(f, "emulator files: waiting for the launcher: {e}"),
            EmulateError::Killed { after, stderr } => {
                write!(f, "the emulated launch was killed after {after:?} (no result, no report)\n{stderr}")
            }
            EmulateError::Failed(x) => x.fmt(f),
            EmulateError::Uncertified(e) => write!(f, "the emulated kernel was not launched: {e}"),
        }
    }
}

/// The message includes a wrapped error's, so [`source`](std::error::Error::source) is `None`;
/// the wrapped error is the variant's field.
impl std::error::Error for EmulateError {}

/// Inputs or a kernel the emulator cannot run ([`EmulateError::Input`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InputProblem {
    /// An input has no data for a rank.
    Missing {
        /// The input.
        tensor: String,
        /// The rank.
        rank: u32,
    },
    /// An input's type or shape is not the declared one.
    Shape {
        /// The input.
        tensor: String,
        /// The rank.
        rank: u32,
        /// Its type and shape.
        got: (DType, Vec<u64>),
        /// The taskflow's.
        declared: (DType, Vec<u64>),
    },
    /// A tensor's element count does not fit the host's `usize`.
    TooLarge {
        /// The tensor.
        tensor: String,
    },
    /// A `#[taskflow]` program has no kernel.
    NoKernel {
        /// The program.
        program: String,
        /// Why (the macro's message).
        why: &'static str,
    },
    /// A `#[taskflow]` program's table does not unpack or decode.
    Program(ProgramError),
    /// A kernel folder's `NAME_schedule.bin` does not decode.
    Table {
        /// The kernel's name.
        name: String,
        /// Why.
        error: TableError,
    },
}

impl fmt::Display for InputProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InputProblem::Missing { tensor, rank } => write!(f, "input `{tensor}` has no data for rank {rank}"),
            InputProblem::Shape { tensor, rank, got, declared } => write!(
                f,
                "input `{tensor}` on rank {rank} is {} {:?}, but the taskflow declares {} {:?}",
                got.0.name(),
                got.1,
                declared.0.name(),
                declared.1
            ),
            InputProblem::TooLarge { tensor } => write!(f, "tensor `{tensor}` is too large"),
            InputProblem::NoKernel { program, why } => write!(f, "`{program}` has no kernel: {why}"),
            InputProblem::Program(e) => write!(f, "{e}"),
            InputProblem::Table { name, error } => write!(f, "{name}_schedule.bin does not decode: {error}"),
        }
    }
}

/// Runs `cmd` to completion or until `timeout`, then kills it. Returns its status and stderr.
pub(crate) fn run_bounded(cmd: &mut Command, timeout: Duration) -> Result<(ExitStatus, String), EmulateError> {
    let mut child =
        cmd.spawn().map_err(|e| EmulateError::NoCompiler { command: format!("{cmd:?}"), error: Arc::new(e) })?;
    // Drain the pipes on threads so a chatty launcher never blocks on a full pipe.
    let mut stderr = child.stderr.take();
    let mut stdout = child.stdout.take();
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(e) = stderr.as_mut() {
            let _ = e.read_to_string(&mut s);
        }
        s
    });
    let out_reader = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(o) = stdout.as_mut() {
            let _ = o.read_to_string(&mut s);
        }
        s
    });
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                let _ = out_reader.join();
                return Ok((status, err_reader.join().unwrap_or_default()));
            }
            Ok(None) if started.elapsed() < timeout => std::thread::sleep(Duration::from_millis(5)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                let _ = out_reader.join();
                return Err(EmulateError::Killed {
                    after: started.elapsed(),
                    stderr: err_reader.join().unwrap_or_default(),
                });
            }
            Err(e) => return Err(EmulateError::Wait(Arc::new(e))),
        }
    }
}

/// Parses one line of the emulator's report (`error KIND rank=R core=C call=NAME ...`).
fn parse_finding(line: &str) -> Finding {
    let mut words = line.split_whitespace();
    let first = words.next().unwrap_or_default();
    let kind = if matches!(first, "error" | "warning" | "note") { words.next().unwrap_or(first) } else { first };
    let field = |key: &str| {
        line.split_whitespace().find_map(|w| w.strip_prefix(key).and_then(|v| v.strip_prefix('='))).map(str::to_string)
    };
    Finding {
        kind: kind.to_string(),
        rank: field("rank").and_then(|r| r.parse().ok()),
        core: field("core"),
        call: field("call"),
        tile: None,
        line: line.to_string(),
    }
}

/// The local core id of an emulator core name (`aic1` → 1, `aiv3` → AICs + 3).
fn local_core(name: &str, aic_per_rank: u32) -> Option<u32> {
    if let Some(i) = name.strip_prefix("aic") {
        i.parse().ok()
    } else {
        name.strip_prefix("aiv").and_then(|i| i.parse::<u32>().ok()).map(|i| aic_per_rank + i)
    }
}

/// The tile a core was at when it stopped: the entry after its last completed one.
fn tile_of(kernel: &KernelSources, diags: &[Diagnostics], rank: u32, local: u32) -> Option<String> {
    let view = kernel.table.view();
    let cores_per_rank = kernel.table.header().cores_per_rank;
    let record = diags.get(rank as usize)?.records.get(local as usize)?;
    let global = rank * cores_per_rank + local;
    let position = match record.status {
        DiagStatus::Done | DiagStatus::NotRun => return None,
        DiagStatus::Running => record.tiles_done,
        _ => record.entry,
    };
    let entry = view.core_entries(global).get(position as usize)?;
    let (fam, coords) = view.coords_of_instance(entry.instance)?;
    let c: Vec<String> = coords.iter().map(u32::to_string).collect();
    Some(format!("{} entry {position}: {}({})", view.core_name(global), view.family_name(fam), c.join(", ")))
}

/// Reads a finished launch's files.
pub(crate) fn collect(
    tf: &Taskflow,
    kernel: &KernelSources,
    out: &Path,
    (status, stderr): (ExitStatus, String),
    wall: Duration,
) -> Result<EmulatedRun, EmulateError> {
    let header = kernel.table.header();
    let cores_per_rank = header.cores_per_rank as usize;
    let diagnostics: Vec<Diagnostics> = (0..tf.profile.ranks)
        .filter_map(|r| {
            let bytes = std::fs::read(out.join(format!("rank{r}")).join("diag.bin")).ok()?;
            diag::decode(&bytes, cores_per_rank).ok()
        })
        .collect();
    let report = std::fs::read_to_string(out.join("emulator.txt")).unwrap_or_default();
    let unfinished = diagnostics.iter().any(|d| d.records.iter().any(|r| r.status != DiagStatus::Done));
    if status.success() && report.trim().is_empty() && !unfinished && diagnostics.len() == tf.profile.ranks as usize {
        let tensors = data::read_tensors(out, tf)?;
        let names = tf.tensors.iter().map(|t| t.name.clone()).collect();
        return Ok(EmulatedRun { names, tensors, diagnostics, wall });
    }
    let findings = report
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let mut f = parse_finding(l);
            if let (Some(rank), Some(core)) = (f.rank, f.core.as_deref()) {
                f.tile = local_core(core, header.aic_per_rank).and_then(|c| tile_of(kernel, &diagnostics, rank, c));
            }
            f
        })
        .collect();
    let records = diagnostics
        .iter()
        .flat_map(|d| d.records.iter())
        .filter(|r| r.status != DiagStatus::Done)
        .map(|r| diag::describe(r, &kernel.table))
        .collect();
    let tail: String =
        stderr.lines().rev().take(20).collect::<Vec<_>>().into_iter().rev().collect::<Vec<_>>().join("\n");
    Err(EmulateError::Failed(Box::new(EmulatorFailure {
        findings,
        records,
        diagnostics,
        exit: format!("{status}"),
        stderr: tail,
    })))
}
