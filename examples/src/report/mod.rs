//! The job both MoE examples run, parameterised by the layer: for EP 8, 16, 32, 64 and 128,
//! schedule the layer's taskflow, simulate it against the kernel-by-kernel baseline, write its
//! AscendC kernel and schedule blobs to `OUT/epN/` (and a Chrome trace and an SVG timeline at
//! EP 8), simulate the all-to-all alone at each EP to print its effective bandwidth beside the
//! measured A3 table, then run the scaled-down host checks and print the results tables (or
//! `--json`). A job with a [`Training`] also measures the layer's backward and training step,
//! on a second thread that then simulates the all-to-all alone and runs the emulator checks.
//!
//! `moe_ffn` (the main job) and `moe_ffn_shared` (the custom variant) differ only in their
//! [`Job`]: the taskflow, the emission options (a user op's header), and the host checks.
//! Progress goes to stderr, results to stdout; [`main`] returns a failing exit code when a
//! host check fails or the job cannot run.

mod measure;
mod network;
mod print;
mod timeline;

pub use measure::{EpRun, Figures, PassRow, RoutedRow, Row, Setup, TRACE_EP, VariantRow, measure, measure_passes};
pub use network::AllToAllRow;
pub use print::{Results, json, text};
pub use timeline::{ASSETS, README_SETTINGS, TIMELINE_RANK, asset_name, timeline_svg, write_timeline};

use crate::cli::Options;
use crate::{ExampleError, HostCheck};
use hpmoe_ascendc::EmitOptions;
use hpmoe_core::cost::{Activity, CostProfile};
use hpmoe_core::expand::InstanceSpace;
use hpmoe_core::model::Taskflow;
use hpmoe_host::moe::{MoeShape, Pass};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

/// The reference system's reported speedup over kernel-by-kernel execution.
pub const REFERENCE_SPEEDUP: (f64, f64) = (1.49, 1.58);

/// The natural routing the main job prices (its seed), with the host and emulator checks.
pub const ROUTING_SEED: u64 = 42;

/// How many other routings of the same distribution the main job plans natural routing on.
pub const PLAN_SAMPLES: u64 = 8;

/// The expert-parallel sizes of the table.
pub const EPS: [u32; 5] = [8, 16, 32, 64, 128];

/// The taskflow of a job at expert parallelism `ep` with `tokens` tokens per rank.
pub type TaskflowFn<'a> = dyn Fn(u32, u64) -> Result<Taskflow, ExampleError> + 'a;

/// The taskflow of one pass of a job's layer at `(ep, tokens)`; `Sync`: the passes are measured
/// on a thread of their own beside the forward sweep.
pub type PassFn<'a> = dyn Fn(Pass, u32, u64) -> Result<Taskflow, ExampleError> + Sync + 'a;

/// Runs one host check under a cost profile (it decides the schedule the executor walks).
pub type HostCheckFn<'a> = dyn Fn(&CostProfile) -> Result<HostCheck, ExampleError> + 'a;

/// Runs one emulator check under a cost profile: `Ok(None)` when the emulator cannot run here
/// (no C++ compiler). `Sync`: they run on the job's second thread, beside the forward sweep.
pub type EmulatorCheckFn<'a> = dyn Fn(&CostProfile) -> Result<Option<HostCheck>, ExampleError> + Sync + 'a;

/// One scaled-down configuration a check runs, `F` the check ([`HostCheckFn`] or
/// [`EmulatorCheckFn`]).
pub struct CheckConfig<F: ?Sized> {
    /// Its short name, in JSON and failure messages: `tiny(2)`.
    pub name: String,
    /// How the progress line and the verdict name it: `MoeShape::tiny(2)`.
    pub description: String,
    /// The check itself, run once per cost profile the job is priced with.
    pub run: Box<F>,
}

impl<F: ?Sized> std::fmt::Debug for CheckConfig<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CheckConfig").field("name", &self.name).finish_non_exhaustive()
    }
}

/// One scaled-down configuration run on the host executor.
pub type HostConfig<'a> = CheckConfig<HostCheckFn<'a>>;

/// One scaled-down configuration whose generated kernel runs on the CPU emulator.
pub type EmulatorConfig<'a> = CheckConfig<EmulatorCheckFn<'a>>;

/// One row of a job's extra table for one EP's run (a line of text, without newline).
pub type RowFn<'a> = dyn Fn(&EpRun<'_>) -> Result<String, ExampleError> + 'a;

/// A table a job prints after the two common ones, one row per EP: figures only that job
/// has (the variant's: what the shared expert adds and when it runs). Text output only; the
/// JSON keeps the common keys.
pub struct ExtraTable<'a> {
    /// Shown on stderr while the row is computed (`comparing with the routed layer`).
    pub progress: &'a str,
    /// Lines before the rows: a title and the column headings.
    pub header: &'a [&'a str],
    /// Computes the row of one EP's run.
    pub row: &'a RowFn<'a>,
    /// Lines after the rows: what the columns mean.
    pub footer: &'a [&'a str],
}

impl std::fmt::Debug for ExtraTable<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExtraTable").field("header", &self.header).finish_non_exhaustive()
    }
}

/// A layer whose tiles past run-time counts skip their work (natural MoE routing), ready to
/// measure: its taskflow, the schedule's plan and one run.
#[derive(Clone, Debug)]
pub struct RoutedLayer {
    /// The routed layer's taskflow (guarded tiles, capacity padding).
    pub taskflow: Taskflow,
    /// Per instance, the probability it runs its body, from the routing distribution: what
    /// the schedule is planned on (`TaskflowCost::with_expected_activity`).
    pub plan: Vec<f32>,
    /// The run priced: which instances skip their body under one routing.
    pub run: Activity,
    /// Share of token choices that routing dropped for lack of capacity.
    pub dropped_share: f64,
}

impl RoutedLayer {
    /// `shape` (a naturally routed layer) with its schedule planned on the expected activity
    /// of `plan_samples` routings drawn from its distribution (seeds other than
    /// `routing_seed`, see `MoeShape::expected_activity`) and run under routing `routing_seed`.
    ///
    /// # Errors
    /// When the shape's taskflow cannot be built or expanded.
    pub fn natural(shape: &MoeShape, routing_seed: u64, plan_samples: u64) -> Result<Self, ExampleError> {
        Self::natural_pass(shape, Pass::Forward, routing_seed, plan_samples)
    }

    /// [`RoutedLayer::natural`] for `pass` of the layer (the backward's guards read the counts
    /// the forward announced, an input of the backward alone).
    ///
    /// # Errors
    /// As [`RoutedLayer::natural`].
    pub fn natural_pass(
        shape: &MoeShape,
        pass: Pass,
        routing_seed: u64,
        plan_samples: u64,
    ) -> Result<Self, ExampleError> {
        let taskflow = shape.pass_taskflow(pass).map_err(ExampleError::Shape)?;
        let space = InstanceSpace::of(&taskflow).map_err(ExampleError::Numbering)?;
        let plan = shape.expected_activity(&taskflow, &space, plan_samples).map_err(ExampleError::Routing)?;
        let routing = shape.route(routing_seed);
        let run = routing.activity(shape, &taskflow, &space).map_err(ExampleError::Routing)?;
        let choices = u64::from(shape.ranks) * shape.tokens_per_rank * shape.top_k;
        let dropped_share = routing.dropped() as f64 / choices.max(1) as f64;
        Ok(RoutedLayer { taskflow, plan, run, dropped_share })
    }
}

/// The layer at expert parallelism `ep` with `tokens` tokens per rank, under run-time routing.
pub type RoutedFn<'a> = dyn Fn(u32, u64) -> Result<RoutedLayer, ExampleError> + 'a;

/// The same layer again under run-time routing, measured at every EP beside the job's own
/// and printed as a table of its own.
pub struct Routed<'a> {
    /// Its name in progress lines and JSON (`natural`).
    pub name: &'a str,
    /// Lines before its table: what the routing and its capacity are.
    pub header: &'a [&'a str],
    /// Builds the routed layer at an EP and a token count.
    pub layer: &'a RoutedFn<'a>,
    /// The EPs measured by default (every EP with `--routed-all`): the routed layer has
    /// several times the instances, so the full sweep takes a few times longer.
    pub eps: &'a [u32],
}

impl std::fmt::Debug for Routed<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Routed").field("name", &self.name).finish_non_exhaustive()
    }
}

/// The same layer with another option (the main job's INT8 dispatch), measured at every EP
/// beside the job's own under the same costs and printed as a table of its own, with what it
/// puts on the network beside the job's layer.
pub struct Variant<'a> {
    /// Its name in progress lines and JSON (`int8`).
    pub name: &'a str,
    /// Lines before its table: what the option is.
    pub header: &'a [&'a str],
    /// Builds the variant's taskflow at `(ep, tokens)`.
    pub taskflow: &'a TaskflowFn<'a>,
}

impl std::fmt::Debug for Variant<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Variant").field("name", &self.name).finish_non_exhaustive()
    }
}

/// The layer's backward and training step (forward and backward as one taskflow), measured at
/// its EPs beside its forward, each against its own kernel-by-kernel baseline and bound, and
/// printed as a table of their own. They are measured on a second thread (which then simulates
/// the all-to-all alone and runs the emulator checks) while the first measures the forward sweep
/// and runs the host checks: the two share nothing but the output folder.
pub struct Training<'a> {
    /// Lines before its table: what the passes are.
    pub header: &'a [&'a str],
    /// Builds the taskflow of [`Pass::Backward`] or [`Pass::TrainingStep`] at `(ep, tokens)`.
    pub taskflow: &'a PassFn<'a>,
    /// The EPs measured by default (every EP with `--training-all`): the training step has
    /// three times the forward's instances, and EP 128's backward and training step cost more
    /// CPU than EP 8–64's together.
    pub eps: &'a [u32],
}

impl std::fmt::Debug for Training<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Training").field("header", &self.header).finish_non_exhaustive()
    }
}

/// A layer the report measures.
pub struct Job<'a> {
    /// What the first lines call it: `DeepSeek-V3 MoE-FFN layer`.
    pub title: &'a str,
    /// The default output folder, under `target/hpmoe/`.
    pub folder: &'a str,
    /// Builds the layer's taskflow at an EP and a token count.
    pub taskflow: &'a TaskflowFn<'a>,
    /// How to emit the kernel (e.g. the headers of user ops' device functions).
    pub emit: EmitOptions,
    /// Headers written to `OUT/include/` beside the runtime's: `(file name, contents)`.
    pub headers: &'a [(&'a str, &'a str)],
    /// Lines printed after the list of files written.
    pub notes: &'a [&'a str],
    /// A third table, after the schedules table (none for the main job).
    pub extra: Option<ExtraTable<'a>>,
    /// The layer under run-time routing, measured beside it (the main job's natural routing).
    pub routed: Option<Routed<'a>>,
    /// The layer with another option, measured at every EP (the main job's INT8 dispatch).
    pub variant: Option<Variant<'a>>,
    /// The layer's backward and training step, measured at their EPs (the main job's: 8–64).
    pub training: Option<Training<'a>>,
    /// Whether the job's EP 8 timelines are the README's images (the main job's only): run with
    /// [`README_SETTINGS`], it refreshes their committed copies under [`ASSETS`].
    pub readme_timelines: bool,
    /// Scaled-down configurations run on the host executor against a plain-Rust reference.
    pub host_checks: Vec<HostConfig<'a>>,
    /// Scaled-down configurations whose generated kernels run on the CPU emulator.
    pub emulator_checks: Vec<EmulatorConfig<'a>>,
}

impl std::fmt::Debug for Job<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Job").field("title", &self.title).field("folder", &self.folder).finish_non_exhaustive()
    }
}

/// The verdict of all host checks of a job.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HostOutcome {
    /// Short names of the configurations, in order.
    pub names: Vec<String>,
    /// How the progress lines name them (`MoeShape::tiny(2)`), in the same order.
    pub descriptions: Vec<String>,
    /// The first failure (`tiny(2): rank 0 out: …`), `None` when all passed.
    pub failure: Option<String>,
    /// Output values compared, all configurations.
    pub elements: usize,
    /// Why the checks could not run at all (no C++ compiler for the emulator), if so.
    pub not_run: Option<String>,
}

/// What one check of a configuration gave: a comparison, or nothing because it cannot run here.
type CheckResult = Result<Option<HostCheck>, ExampleError>;

/// Runs `configs` (name, description, check) with progress on stderr, `what` naming where.
fn run_checks<'c>(
    what: &str,
    configs: impl Iterator<Item = (&'c str, &'c str, Box<dyn FnOnce() -> CheckResult + 'c>)>,
) -> HostOutcome {
    let mut outcome = HostOutcome::default();
    for (name, description, run) in configs {
        outcome.names.push(name.to_string());
        outcome.descriptions.push(description.to_string());
        let check = run();
        let verdict = match &check {
            Ok(Some(c)) if c.passed() => "ok",
            Ok(None) => "not run",
            _ => "FAILED",
        };
        // One whole line per check: the backward may be printing from another thread.
        eprintln!("[{what}] {description}: {verdict}");
        let failure = match &check {
            Ok(None) => {
                outcome.not_run.get_or_insert_with(|| "no C++ compiler (g++) to build the emulated kernel".into());
                None
            }
            Ok(Some(c)) if c.passed() => None,
            Ok(Some(c)) => Some(format!(
                "{name}: {} (max abs error {:.3e})",
                c.first_difference.as_deref().unwrap_or(""),
                c.max_abs_err
            )),
            Err(e) => Some(format!("{name}: {e}")),
        };
        if outcome.failure.is_none() {
            outcome.failure = failure;
        }
        outcome.elements += check.as_ref().ok().and_then(Option::as_ref).map_or(0, |c| c.elements);
    }
    outcome
}

/// Runs every host check of `job`, with progress on stderr.
pub fn host_checks(job: &Job<'_>, profile: &CostProfile) -> HostOutcome {
    run_checks(
        "host",
        job.host_checks.iter().map(|c| {
            let run: Box<dyn FnOnce() -> CheckResult> = Box::new(move || (c.run)(profile).map(Some));
            (c.name.as_str(), c.description.as_str(), run)
        }),
    )
}

/// Runs every emulator check of `job` (the generated kernels on the CPU emulator), with
/// progress on stderr.
pub fn emulator_checks(job: &Job<'_>, profile: &CostProfile) -> HostOutcome {
    run_emulator_checks(&job.emulator_checks, profile)
}

/// Runs `checks` (a job's emulator checks), with progress on stderr.
fn run_emulator_checks(checks: &[EmulatorConfig<'_>], profile: &CostProfile) -> HostOutcome {
    run_checks(
        "emulator",
        checks.iter().map(|c| {
            let run: Box<dyn FnOnce() -> CheckResult> = Box::new(move || (c.run)(profile));
            (c.name.as_str(), c.description.as_str(), run)
        }),
    )
}

/// Parses the command line's options, runs `job` and prints its results; `Ok(false)` when
/// a host check or an emulator check failed.
pub fn run(job: &Job<'_>) -> Result<bool, ExampleError> {
    run_with(job, std::env::args().skip(1).collect())
}

/// [`run`] with the options `args` (without the program name).
pub fn run_with(job: &Job<'_>, args: Vec<String>) -> Result<bool, ExampleError> {
    let opts = Options::parse(
        args,
        &["--out", "--tokens", "--json", "--json-tables", "--profile", "--routed-all", "--training-all"],
        "--out DIR, --tokens N, --json, --json-tables, --profile NAME|FILE, --routed-all, --training-all",
    )?;
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("examples/ sits in the workspace");
    let out_dir = opts
        .value("--out")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace.join("target").join("hpmoe").join(job.folder));
    let tokens = opts.number("--tokens", 4096)?;
    let json_tables = opts.flag("--json-tables");
    let profile = opts.profile()?;
    let started = Instant::now();
    eprintln!(
        "hpmoe: {}, {tokens} tokens per rank, cost profile {}, writing to {}",
        job.title,
        profile.name,
        out_dir.display()
    );
    let include = out_dir.join("include");
    hpmoe_ascendc::runtime::write_runtime(&include)
        .map_err(|e| ExampleError::io("write the runtime headers under", &out_dir, e))?;
    for (name, contents) in job.headers {
        std::fs::write(include.join(name), contents).map_err(|e| ExampleError::io("write", include.join(name), e))?;
    }

    let routed_all = opts.flag("--routed-all");
    let readme = job.readme_timelines && (tokens, profile.name.as_str()) == README_SETTINGS;
    let readme_assets = readme.then_some(workspace);
    let setup = Setup { tokens, profile: &profile, out_dir: &out_dir, json_tables, routed_all, started, readme_assets };
    let training_all = opts.flag("--training-all");
    // Two threads (the schedulers and simulators are single-threaded): the backward and the
    // training step, the network and the emulator checks on one; the forward sweep and the host
    // checks on the other (the longer: about as long as the whole job was without the backward).
    let (rows, network, passes, host, emulator) = std::thread::scope(|scope| {
        let second = {
            let (training, emit, checks) = (job.training.as_ref(), &job.emit, &job.emulator_checks);
            let (setup, profile) = (&setup, &profile);
            scope.spawn(move || {
                let passes = training.map(|training| {
                    let eps = EPS.iter().filter(|ep| training_all || training.eps.contains(ep));
                    eps.map(|&ep| Ok((ep, measure_passes(emit, training, ep, setup)?)))
                        .collect::<Result<Vec<_>, ExampleError>>()
                });
                let network =
                    EPS.iter().map(|&ep| AllToAllRow::measure(ep, tokens, profile)).collect::<Result<Vec<_>, _>>();
                eprintln!(
                    "[network] simulated the all-to-all alone at every EP ({:.1} s)",
                    started.elapsed().as_secs_f64()
                );
                let emulator = run_emulator_checks(checks, profile);
                (passes, network, emulator, thread_cpu_s())
            })
        };
        let forward = EPS.iter().map(|&ep| measure(job, ep, &setup)).collect::<Result<Vec<_>, _>>();
        let host = host_checks(job, &profile);
        let first_cpu = thread_cpu_s();
        let (passes, network, emulator, second_cpu) =
            second.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (forward, network, passes.map(|p| (p, [first_cpu, second_cpu])), host, emulator)
    });
    let mut rows = rows?;
    let network = network?;
    let mut cpu = String::new();
    if let Some((passes, [first, second])) = passes {
        for (ep, passes) in passes? {
            if let Some(row) = rows.iter_mut().find(|row| row.ep == ep) {
                row.passes = passes;
            }
        }
        if let (Some(first), Some(second)) = (first, second) {
            cpu = format!(
                " (CPU time of the forward sweep and host checks' thread {first:.1} s, of the backward, network \
                 and emulator checks' {second:.1} s, g++ not included: on two free cores the job takes about the \
                 longer)"
            );
        }
    }
    eprintln!("done in {:.1} s{cpu}", started.elapsed().as_secs_f64());

    let results = Results {
        title: job.title,
        tokens,
        profile: &profile.name,
        out_dir: &out_dir,
        json_tables,
        notes: job.notes,
        rows: &rows,
        network: &network,
        profile_figures: &profile,
        extra: job.extra.as_ref().map(|x| (x.header, x.footer)),
        routed: job.routed.as_ref().map(|r| (r.name, r.header)),
        variant: job.variant.as_ref().map(|v| (v.name, v.header)),
        training: job.training.as_ref().map(|t| t.header),
        host: &host,
        emulator: &emulator,
    };
    if opts.flag("--json") {
        println!("{}", json(&results)?);
    } else {
        print!("{}", text(&results));
    }
    Ok(host.failure.is_none() && emulator.failure.is_none())
}

/// CPU time the calling thread has run, in seconds (Linux's `/proc/thread-self/schedstat`;
/// `None` elsewhere): what the job's two threads each cost, whatever else the machine runs.
fn thread_cpu_s() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = stat.split_whitespace().next()?.parse().ok()?;
    Some(ns as f64 / 1e9)
}

/// [`run`] as a process's exit code: success when every host check passed, failure (1) for a
/// failed check or an error (which goes to stderr).
pub fn main(job: &Job<'_>) -> ExitCode {
    exit_code(run(job))
}

/// The exit status of a job that ended with `outcome` (an error goes to stderr).
pub fn exit_code(outcome: Result<bool, ExampleError>) -> ExitCode {
    match outcome {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
