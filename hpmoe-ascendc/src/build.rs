//! The build-script API, in the manner of `cxx_build`:
//!
//! ```no_run
//! // In build.rs, inside `fn main()`:
//! hpmoe_ascendc::Build::new().file("src/moe.rs").compile("moe");
//! ```
//!
//! [`Build::compile`] reads every `#[taskflow]` function of the given files with the shared
//! front-end (`hpmoe_core::syntax`), plus any taskflow built with the builder API
//! ([`Build::taskflow`]); checks and schedules each; emits its kernel files; and writes them, with
//! the runtime headers, under `$OUT_DIR/hpmoe/NAME/` (or [`Build::out_dir`]), touching only files
//! whose content changed. It prints `cargo:rerun-if-changed` for every source file (and every
//! file a taskflow body `include!`s, [`hpmoe_core::syntax::include`]), and
//! `cargo:rustc-env=HPMOE_<NAME>_DIR=<folder>` so the crate can find the files
//! (`include_bytes!(concat!(env!("HPMOE_MOE_DIR"), "/moe_ffn_schedule.bin"))`).
//!
//! Every planned table is certified ([`hpmoe_core::certify`]) before any file is written; one
//! that fails is an internal error of hpmoe, reported as a build error
//! ([`BuildFailure::Uncertified`]), never written. A taskflow error is a build error at its
//! `file:line:column`. When `ASCEND_HOME_PATH` names a
//! CANN toolkit, each kernel is also compiled for `dav-2201` into `NAME.o` beside its source,
//! and a compiler error fails the build; without a toolkit only sources are written, with no
//! warning. (The toolkit path is untested against a real toolkit: see [`crate::toolchain`].)

use crate::emit::{EmitOptions, KernelFiles};
use crate::error::{BuildError, BuildFailure, EmitErrors};
use crate::flags::FlagPolicy;
use crate::runtime::write_runtime;
use crate::toolchain::{ASCEND_HOME_ENV, SHMEM_HOME_ENV, Toolkit};
use crate::write::WriteOutcome;
use hpmoe_core::Compiled;
use hpmoe_core::certify::certify_compiled;
use hpmoe_core::cost::CostProfile;
use hpmoe_core::model::{SourceMap, SourcePos, Taskflow};
use hpmoe_core::syntax;
use hpmoe_core::{CompileOptions, PlanOptions};
use std::path::{Path, PathBuf};

/// Which toolkit compiles the kernels.
#[derive(Clone, Debug, PartialEq, Eq)]
enum ToolkitChoice {
    /// The one `ASCEND_HOME_PATH` names, if any.
    FromEnv,
    /// Sources only.
    None,
    /// The toolkit at this root.
    At(PathBuf),
}

/// A kernel build: sources and taskflows in, kernel files (and objects) out.
#[derive(Clone, Debug)]
pub struct Build {
    files: Vec<PathBuf>,
    taskflows: Vec<Taskflow>,
    out_dir: Option<PathBuf>,
    options: EmitOptions,
    flags: FlagPolicy,
    include_dirs: Vec<PathBuf>,
    cost_profile: Option<CostProfile>,
    toolkit: ToolkitChoice,
    cargo_metadata: bool,
}

/// The files of one generated kernel.
#[derive(Clone, Debug)]
pub struct BuiltKernel {
    /// The kernel's name: its taskflow's name as a C identifier, the stem of its files.
    pub name: String,
    /// What happened to each of its four files.
    pub files: Vec<WriteOutcome>,
    /// `NAME.o`, when a toolkit compiled it.
    pub object: Option<PathBuf>,
    /// The generated files themselves, as [`crate::emit()`] returns them.
    pub kernel: KernelFiles,
}

/// What [`Build::try_compile`] produced.
#[derive(Clone, Debug)]
pub struct BuildOutput {
    /// The folder holding the kernels; the runtime headers are in its `include/`.
    pub dir: PathBuf,
    /// One entry per taskflow built, in the order the files and taskflows were given.
    pub kernels: Vec<BuiltKernel>,
    /// The toolkit that compiled them, if any.
    pub toolkit: Option<Toolkit>,
    /// The runtime headers' write outcomes.
    pub runtime: Vec<WriteOutcome>,
}

/// The certificate check of a planned taskflow (of source `file`, if from one), before its
/// kernel is emitted: the failure, if it fails.
fn certify_planned(tf: &Taskflow, c: &Compiled, file: Option<&Path>) -> Option<BuildFailure> {
    certify_compiled(tf, c).err().map(|error| BuildFailure::Uncertified {
        file: file.map(Path::to_path_buf),
        taskflow: tf.name.clone(),
        error,
    })
}

/// Each message of a front-end error ([`syntax::error_positions`]) as a failure at its
/// `file:line:column`.
fn source_failures(messages: Vec<(SourcePos, String)>) -> impl Iterator<Item = BuildFailure> {
    messages.into_iter().map(|(at, message)| BuildFailure::Source { at, message })
}

/// Each emission error, at the place `position` gives it.
fn emit_failures(
    errors: EmitErrors,
    position: impl Fn(&crate::error::EmitError) -> Option<SourcePos>,
) -> impl Iterator<Item = BuildFailure> {
    errors.errors.into_iter().map(move |error| BuildFailure::Emit { at: position(&error), error })
}

/// Each diagnostic of a builder taskflow, at the Rust code its source map names.
fn taskflow_failures(tf: &Taskflow, d: hpmoe_core::Diagnostics) -> impl Iterator<Item = BuildFailure> {
    d.errors.into_iter().map(|diagnostic| BuildFailure::Taskflow {
        taskflow: tf.name.clone(),
        at: tf.sources.get(diagnostic.loc).cloned(),
        diagnostic,
    })
}

/// Where a builder taskflow's source map puts `loc`.
fn builder_position(sources: &SourceMap, loc: hpmoe_core::model::Loc) -> Option<SourcePos> {
    sources.get(loc).cloned()
}

impl Default for Build {
    fn default() -> Self {
        Self::new()
    }
}

impl Build {
    /// A build with nothing to compile yet: no files or taskflows, the output folder
    /// `$OUT_DIR/hpmoe/` ([`Build::out_dir`] to change it), default emission options and flag
    /// policy, the toolkit from `ASCEND_HOME_PATH` if set, and `cargo:` lines printed (a build
    /// script's defaults).
    pub fn new() -> Self {
        Build {
            files: Vec::new(),
            taskflows: Vec::new(),
            out_dir: None,
            options: EmitOptions::default(),
            flags: FlagPolicy::default(),
            include_dirs: Vec::new(),
            cost_profile: None,
            toolkit: ToolkitChoice::FromEnv,
            cargo_metadata: true,
        }
    }

    /// A Rust source file whose `#[taskflow]` functions (also inside inline modules) to build.
    pub fn file(&mut self, path: impl AsRef<Path>) -> &mut Self {
        self.files.push(path.as_ref().to_path_buf());
        self
    }

    /// A taskflow built with the builder API (`hpmoe_core::model::Taskflow`).
    pub fn taskflow(&mut self, tf: Taskflow) -> &mut Self {
        self.taskflows.push(tf);
        self
    }

    /// Writes the kernels into `dir` instead of `$OUT_DIR/hpmoe/NAME/`.
    pub fn out_dir(&mut self, dir: impl AsRef<Path>) -> &mut Self {
        self.out_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// A header the kernels `#include` (where user ops' device functions live), as written in
    /// the include line.
    pub fn include(&mut self, header: impl Into<String>) -> &mut Self {
        self.options.includes.push(header.into());
        self
    }

    /// A folder on the toolkit compiler's include path (for the headers of [`Build::include`]).
    pub fn include_dir(&mut self, dir: impl AsRef<Path>) -> &mut Self {
        self.include_dirs.push(dir.as_ref().to_path_buf());
        self
    }

    /// The hardware-flag policy (on, flag 15, by default).
    pub fn flags(&mut self, policy: FlagPolicy) -> &mut Self {
        self.flags = policy;
        self
    }

    /// The bound of every counter wait, in microseconds (default 5 s).
    pub fn wait_timeout_us(&mut self, us: u64) -> &mut Self {
        self.options.wait_timeout_us = us;
        self
    }

    /// The cost profile the scheduler prices tiles with (default: the preset named like the
    /// taskflow's machine profile, else the Ascend 910B one — [`hpmoe_core::plan_cost_profile`]).
    pub fn cost_profile(&mut self, profile: CostProfile) -> &mut Self {
        self.cost_profile = Some(profile);
        self
    }

    /// Compiles with the toolkit at `root` whatever `ASCEND_HOME_PATH` says.
    pub fn toolkit(&mut self, root: impl AsRef<Path>) -> &mut Self {
        self.toolkit = ToolkitChoice::At(root.as_ref().to_path_buf());
        self
    }

    /// Writes sources only, whatever `ASCEND_HOME_PATH` says.
    pub fn no_toolkit(&mut self) -> &mut Self {
        self.toolkit = ToolkitChoice::None;
        self
    }

    /// Whether to print `cargo:` lines (on by default; off outside build scripts).
    pub fn cargo_metadata(&mut self, on: bool) -> &mut Self {
        self.cargo_metadata = on;
        self
    }

    /// Builds everything; on any error, reports each as a build error (`cargo::error=`, which
    /// Cargo shows as `error: <crate>: src/moe.rs:12:5: ...`) and panics, failing the build as
    /// `cc` and `cxx_build` do.
    pub fn compile(&mut self, name: &str) -> BuildOutput {
        match self.try_compile(name) {
            Ok(out) => out,
            Err(e) => {
                for failure in &e.failures {
                    let error = failure.to_string();
                    if self.cargo_metadata {
                        for line in error.lines().filter(|l| !l.trim().is_empty()) {
                            println!("cargo::error={}", line.replacen(": error: ", ": ", 1));
                        }
                    } else {
                        eprintln!("{error}");
                    }
                }
                panic!("hpmoe: {} error(s) building kernels `{name}`", e.failures.len());
            }
        }
    }

    /// Builds everything, returning every error instead of failing the build.
    pub fn try_compile(&mut self, name: &str) -> Result<BuildOutput, BuildError> {
        let dir = match (&self.out_dir, std::env::var_os("OUT_DIR")) {
            (Some(d), _) => d.clone(),
            (None, Some(out)) => PathBuf::from(out).join("hpmoe").join(name),
            (None, None) => return Err(BuildError::of(BuildFailure::NoOutDir)),
        };
        let mut failed = BuildError::default();
        let mut kernels: Vec<KernelFiles> = Vec::new();
        for path in &self.files {
            self.metadata(&format!("rerun-if-changed={}", path.display()));
            self.build_file(path, &mut kernels, &mut failed);
        }
        for tf in &self.taskflows {
            match hpmoe_core::plan_with(tf, &self.plan_options()) {
                Err(d) => failed.failures.extend(taskflow_failures(tf, d)),
                Ok(c) => match certify_planned(tf, &c, None) {
                    Some(f) => failed.failures.push(f),
                    None => match crate::emit::emit_with(tf, &c, &self.options) {
                        Ok(k) => kernels.push(k),
                        Err(e) => failed.failures.extend(emit_failures(e, |e| builder_position(&tf.sources, e.loc))),
                    },
                },
            }
        }
        let mut seen = std::collections::BTreeSet::new();
        for k in &kernels {
            if !seen.insert(k.name.clone()) {
                failed.failures.push(BuildFailure::DuplicateKernel { name: k.name.clone() });
            }
        }
        if !failed.failures.is_empty() {
            return Err(failed);
        }
        let io = |e: std::io::Error| BuildError::of(BuildFailure::Write { dir: dir.clone(), reason: e.to_string() });
        let runtime = write_runtime(&dir.join("include")).map_err(io)?;
        let toolkit = self.resolve_toolkit()?;
        let mut built = Vec::new();
        for kernel in kernels {
            let files = kernel.write_to(&dir).map_err(io)?;
            let mut object = None;
            if let Some(tk) = &toolkit {
                // Always: the build script reruns only when an input changed, and the user
                // headers of include_dir are inputs whose changes the files here do not show.
                let obj = dir.join(format!("{}.o", kernel.name));
                let source = dir.join(format!("{}.cpp", kernel.name));
                tk.compile(&source, &obj, &self.include_dirs).map_err(|e| BuildError::of(BuildFailure::Toolkit(e)))?;
                object = Some(obj);
            }
            built.push(BuiltKernel { name: kernel.name.clone(), files, object, kernel });
        }
        for d in &self.include_dirs {
            self.metadata(&format!("rerun-if-changed={}", d.display()));
        }
        self.metadata(&format!("rerun-if-env-changed={ASCEND_HOME_ENV}"));
        self.metadata(&format!("rerun-if-env-changed={SHMEM_HOME_ENV}"));
        self.metadata(&format!("rustc-env=HPMOE_{}_DIR={}", crate::emit::names::constant_name(name), dir.display()));
        Ok(BuildOutput { dir, kernels: built, toolkit, runtime })
    }

    fn metadata(&self, line: &str) {
        if self.cargo_metadata {
            println!("cargo:{line}");
        }
    }

    fn resolve_toolkit(&self) -> Result<Option<Toolkit>, BuildError> {
        let err = |e| BuildError::of(BuildFailure::Toolkit(e));
        match &self.toolkit {
            ToolkitChoice::None => Ok(None),
            ToolkitChoice::At(root) => Toolkit::at(root).map(Some).map_err(err),
            ToolkitChoice::FromEnv => Toolkit::from_env().transpose().map_err(err),
        }
    }

    /// How every taskflow of this build is planned: [`hpmoe_core::plan_with`], as the
    /// `#[taskflow]` macro and the main job plan it, with this build's cost profile and flags.
    fn plan_options(&self) -> PlanOptions {
        PlanOptions { cost_profile: self.cost_profile.clone(), compile: CompileOptions { flags: self.flags.clone() } }
    }

    /// Every `#[taskflow]` of one file: its kernel, or its errors at `file:line:column`.
    fn build_file(&self, path: &Path, kernels: &mut Vec<KernelFiles>, failed: &mut BuildError) {
        let shown = path.display().to_string();
        let src = match std::fs::read_to_string(path) {
            Ok(s) => s,
            Err(e) => {
                failed
                    .failures
                    .push(BuildFailure::UnreadableSource { file: path.to_path_buf(), reason: e.to_string() });
                return;
            }
        };
        let frontends = match syntax::parse_file_in(&src, path.parent()) {
            Ok(f) => f,
            Err(e) => {
                failed.failures.extend(source_failures(syntax::error_positions(&e, &shown)));
                return;
            }
        };
        for fe in frontends {
            for included in &fe.includes {
                self.metadata(&format!("rerun-if-changed={}", included.display()));
            }
            match fe.plan(&self.plan_options()) {
                Err(e) => failed.failures.extend(source_failures(syntax::error_positions(&e, &shown))),
                Ok(c) => match certify_planned(&fe.taskflow, &c, Some(path)) {
                    Some(f) => failed.failures.push(f),
                    None => match crate::emit::emit_with(&fe.taskflow, &c, &self.options) {
                        Ok(k) => kernels.push(k),
                        Err(e) => failed
                            .failures
                            .extend(emit_failures(e, |e| Some(syntax::position(&shown, fe.spans.get(e.loc).start)))),
                    },
                },
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hpmoe_core::certify::CertFault;
    use hpmoe_core::table::{NO_WAIT, TableView};

    #[test]
    fn a_planned_table_passes_the_guard_and_one_with_a_deleted_wait_fails_it() {
        let tf = hpmoe_host::moe::MoeShape::tiny(2).taskflow().unwrap();
        let mut c = hpmoe_core::plan(&tf).unwrap();
        assert!(certify_planned(&tf, &c, None).is_none());
        let view = c.table.view();
        let mut entries = view.entries.to_vec();
        let i = entries.iter().position(|e| e.wait().is_some()).unwrap();
        entries[i].wait_counter = NO_WAIT;
        entries[i].wait_target = 0;
        c.table = TableView { entries: &entries, ..view }.to_owned();
        let failure = certify_planned(&tf, &c, Some(Path::new("src/moe.rs"))).unwrap();
        let message = failure.to_string();
        let BuildFailure::Uncertified { error: e, .. } = failure else { panic!("{message}") };
        assert!(matches!(e.fault, CertFault::Unenforced | CertFault::Target), "{e}");
        assert!(
            message.starts_with("src/moe.rs: error: internal error: the planned schedule table of `moe_ffn`"),
            "{message}"
        );
        assert!(message.contains(&e.detail.to_string()), "{message}");
    }
}
