//! What a failed run reports: the public error types, and how a timeout report is put
//! together from the state the workers left behind.
//!
//! A timeout names the core and tile that waited, the counter, the value it expected and
//! the value it saw, and every producer tile that had not signalled, with what that
//! producer was doing. Since a wait usually times out because *its* producers wait in turn,
//! the report follows the chain of waits — through producers whose cores were themselves
//! waiting — down to the wait that started it: the [`root`](TimeoutReport::root), whose
//! missing producers were running, finished without signalling, or were never reached.

use super::ops::OpError;
use super::workers::{Phase, RunState};
use hpmoe_core::expand::RegionFault;
use hpmoe_core::ids::{CoreId, CounterId, IdVec, RankId};
use hpmoe_core::model::Affine;
use std::fmt;
use std::time::Duration;

/// Why a run failed or never started.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExecError {
    /// The run did not start: the taskflow fails its checks, an op has no reference body or
    /// rejects its arguments, the table belongs to another taskflow, an input is missing or
    /// mis-shaped, or the tensors exceed the host-memory limit.
    Setup(Box<super::SetupError>),
    /// The run did not start: the table is not certified to enforce every dependency of the
    /// taskflow ([`hpmoe_core::certify`]); running it could deadlock or give a wrong answer silently.
    Certificate(hpmoe_core::certify::CertError),
    /// The run started and was stopped.
    Run(Box<RunFailure>),
}

impl ExecError {
    /// [`ExecError::Setup`] of `e` (boxed: a setup error carries diagnostics and names).
    pub fn setup(e: super::SetupError) -> Self {
        ExecError::Setup(Box::new(e))
    }

    /// The timeout report, if a wait timed out.
    pub fn timeout(&self) -> Option<&TimeoutReport> {
        match self {
            ExecError::Run(f) => match &f.cause {
                FailureCause::Timeout(t) => Some(t),
                _ => None,
            },
            ExecError::Setup(_) | ExecError::Certificate(_) => None,
        }
    }

    /// The failing tile, if a tile panicked, returned an error, or ran too long.
    pub fn tile_failure(&self) -> Option<&TileFailure> {
        match self {
            ExecError::Run(f) => match &f.cause {
                FailureCause::TilePanicked(t) | FailureCause::OpFailed(t) | FailureCause::TileTooSlow(t) => Some(t),
                _ => None,
            },
            ExecError::Setup(_) | ExecError::Certificate(_) => None,
        }
    }

    /// The certificate check's error, if the table was refused.
    pub fn certificate(&self) -> Option<&hpmoe_core::certify::CertError> {
        match self {
            ExecError::Certificate(e) => Some(e),
            _ => None,
        }
    }
}

/// A run that was stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunFailure {
    /// What stopped the run: the first failure (a timed-out wait, a panicking tile, …); later
    /// failures are consequences of the stop and are not reported.
    pub cause: FailureCause,
    /// Cores whose threads were still busy (in a tile) a full timeout after the stop; they
    /// were left to finish on their own. Empty unless a tile hangs.
    pub abandoned: Vec<String>,
}

/// The first failure of a run (later ones are consequences of the stop).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FailureCause {
    /// A wait did not reach its target in time.
    Timeout(TimeoutReport),
    /// A tile (or the tile hook) panicked.
    TilePanicked(TileFailure),
    /// An op's reference body returned an error.
    OpFailed(TileFailure),
    /// A tile ran longer than the timeout.
    TileTooSlow(TileFailure),
    /// A worker thread could not be started, or failed outside any tile (an executor bug).
    Worker(WorkerFailure),
}

/// How a worker failed outside any tile.
#[derive(Clone, Debug)]
pub enum WorkerFailure {
    /// The worker threads were not all started within the timeout.
    NotStarted,
    /// The system refused to start a core's thread.
    Spawn {
        /// The global core.
        core: CoreId,
        /// The system's error.
        error: std::sync::Arc<std::io::Error>,
    },
    /// An AIV waited past the timeout for a hardware-flag set of its AIC.
    FlagTimeout {
        /// The AIV's name (`r0.aiv3`).
        core: String,
        /// The entry it was about to run.
        entry: u32,
        /// The sets it needed.
        need: u32,
        /// The sets it had received.
        received: u32,
    },
    /// A worker panicked outside a tile.
    Panicked {
        /// The global core.
        core: CoreId,
        /// The panic's message.
        message: String,
    },
}

/// Equal when the kind and data are; a spawn error's system error by its kind and message.
impl PartialEq for WorkerFailure {
    fn eq(&self, other: &Self) -> bool {
        use WorkerFailure as W;
        match (self, other) {
            (W::NotStarted, W::NotStarted) => true,
            (W::Spawn { core: a, error: e }, W::Spawn { core: b, error: f }) => {
                a == b && e.kind() == f.kind() && e.to_string() == f.to_string()
            }
            (
                W::FlagTimeout { core, entry, need, received },
                W::FlagTimeout { core: c, entry: e, need: n, received: r },
            ) => (core, entry, need, received) == (c, e, n, r),
            (W::Panicked { core, message }, W::Panicked { core: c, message: m }) => (core, message) == (c, m),
            _ => false,
        }
    }
}

impl Eq for WorkerFailure {}

impl fmt::Display for WorkerFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WorkerFailure::NotStarted => f.write_str("the worker threads were not all started in time"),
            WorkerFailure::Spawn { core, error } => write!(f, "cannot start the worker thread of core {core}: {error}"),
            WorkerFailure::FlagTimeout { core, entry, need, received } => write!(
                f,
                "{core} timed out before entry {entry} waiting for hardware flag set {need} of its AIC; it had received {received}"
            ),
            WorkerFailure::Panicked { core, message } => {
                write!(f, "the worker of core {core} panicked outside a tile: {message}")
            }
        }
    }
}

/// A tile that failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TileFailure {
    /// Core name (`r0.aiv3`), or `sequential` for the sequential runner.
    pub core: String,
    /// Tile instance (`swiglu(e=0, m=1, n=0) on rank 1`).
    pub tile: String,
    /// The op that failed, when known.
    pub op: Option<String>,
    /// What went wrong.
    pub error: TileError,
}

/// What went wrong in a tile ([`TileFailure::error`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TileError {
    /// The tile (or the tile hook) panicked: the payload's text.
    Panicked(String),
    /// An op's reference body returned an error.
    Op(OpError),
    /// An argument's region cannot be evaluated for this instance.
    Region {
        /// The op's parameter.
        param: String,
        /// Why.
        fault: RegionFault,
    },
    /// The guard's count region cannot be evaluated for this instance.
    GuardCount {
        /// The count's tensor.
        tensor: String,
        /// Why.
        fault: RegionFault,
    },
    /// The guard's count region covers other than one element.
    GuardCountElements {
        /// The count's tensor.
        tensor: String,
        /// Elements it covers.
        elements: usize,
    },
    /// The guard's threshold overflows `i64` for this instance.
    GuardOverflow {
        /// The threshold expression (boxed: it is rare and large).
        above: Box<Affine>,
        /// The tile family's grid index names, to print `above` as written (`9 * i + 1`).
        index_names: Vec<String>,
    },
    /// The tile ran past the timeout.
    TooSlow {
        /// How long it had run when the supervisor gave up.
        running_for: Duration,
        /// The timeout.
        timeout: Duration,
    },
}

impl fmt::Display for TileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TileError::Panicked(message) => f.write_str(message),
            TileError::Op(e) => write!(f, "{e}"),
            TileError::Region { param, fault } => write!(f, "region {param} cannot be evaluated: {fault}"),
            TileError::GuardCount { tensor, fault } => {
                write!(f, "the count region of `{tensor}` cannot be evaluated: {fault}")
            }
            TileError::GuardCountElements { tensor, elements } => {
                write!(f, "the count covers {elements} elements of `{tensor}`, not one")
            }
            TileError::GuardOverflow { above, index_names } => {
                write!(f, "`above = {}` overflows i64 for this instance", above.display(index_names))
            }
            TileError::TooSlow { running_for, timeout } => {
                write!(f, "still running after {running_for:?} (timeout {timeout:?})")
            }
        }
    }
}

/// A wait that timed out, and the chain of waits behind it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimeoutReport {
    /// The timeout that expired.
    pub timeout: Duration,
    /// `chain[0]` is the wait that timed out; each next one is the wait of a core holding
    /// a producer of the previous one; the last is the root.
    pub chain: Vec<StuckWait>,
}

impl TimeoutReport {
    /// The wait at the end of the chain: its missing producers are not themselves waiting.
    pub fn root(&self) -> &StuckWait {
        self.chain.last().expect("a timeout report has at least the wait that timed out")
    }
}

/// A core stuck before a tile, waiting on a counter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StuckWait {
    /// Core name, e.g. `r0.aic1`.
    pub core: String,
    /// Position of the entry in the core's list.
    pub entry: u32,
    /// The tile the core waits to run.
    pub tile: String,
    /// The rank of the counter waited on (the core's own: a core only waits on its rank's
    /// counters).
    pub rank: RankId,
    /// The counter's id on that rank.
    pub counter: CounterId,
    /// The value the wait needed: the number of signals its producers send.
    pub expected: u32,
    /// The value the counter held when the wait timed out (`expected - seen` signals were missing).
    pub seen: u32,
    /// Producers (per the table) whose signals had not arrived.
    pub missing: Vec<MissingSignal>,
}

/// A producer whose signal never arrived.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MissingSignal {
    /// The producer tile instance and its rank, e.g. `gmm1(3, 0) on rank 1`.
    pub tile: String,
    /// The core the table places it on, e.g. `r1.aic0`.
    pub core: String,
    /// How far the producer got when the run stopped.
    pub state: ProducerState,
}

/// What a producer that never signalled was doing when the run stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProducerState {
    /// Its core was waiting, at this producer's entry or an earlier one.
    Waiting,
    /// Its core never reached it (it was busy with, or stopped at, an earlier entry).
    NotReached,
    /// It had started and not finished.
    Running,
    /// It finished, but its signals were dropped ([`RunOptions::drop_signals_of`](super::RunOptions::drop_signals_of)).
    SignalsDropped,
}

impl ProducerState {
    fn describe(self) -> &'static str {
        match self {
            ProducerState::Waiting => "not started: its core is waiting",
            ProducerState::NotReached => "not started: its core never reached it",
            ProducerState::Running => "started but never finished",
            ProducerState::SignalsDropped => "finished, but its signals were dropped",
        }
    }
}

impl fmt::Display for StuckWait {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "core {} (entry {}) waits to run {}: counter {} of rank {} is {}, expected {}",
            self.core, self.entry, self.tile, self.counter, self.rank, self.seen, self.expected
        )?;
        if self.missing.is_empty() {
            f.write_str("; no producer is left to signal it (the table's target exceeds its signals)")?;
        }
        for m in &self.missing {
            write!(f, "\n      never signalled: {} on core {} ({})", m.tile, m.core, m.state.describe())?;
        }
        Ok(())
    }
}

impl fmt::Display for TileFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "tile {} on core {}", self.tile, self.core)?;
        if let Some(op) = &self.op {
            write!(f, ", op `{op}`")?;
        }
        write!(f, ": {}", self.error)
    }
}

impl fmt::Display for ExecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let failure = match self {
            ExecError::Setup(msg) => return write!(f, "the run cannot start: {msg}"),
            ExecError::Certificate(e) => return write!(f, "the run cannot start: {e}"),
            ExecError::Run(failure) => failure,
        };
        match &failure.cause {
            FailureCause::Timeout(t) => {
                write!(f, "a wait timed out after {:?}; the run was stopped", t.timeout)?;
                write!(f, "\n  root: {}", t.root())?;
                if t.chain.len() > 1 {
                    f.write_str("\n  chain of waits, from the one that timed out:")?;
                    for w in &t.chain {
                        write!(f, "\n    {w}")?;
                    }
                }
            }
            FailureCause::TilePanicked(t) => write!(f, "a tile panicked; the run was stopped: {t}")?,
            FailureCause::OpFailed(t) => write!(f, "an op failed; the run was stopped: {t}")?,
            FailureCause::TileTooSlow(t) => write!(f, "a tile ran past the timeout; the run was stopped: {t}")?,
            FailureCause::Worker(msg) => write!(f, "a worker failed; the run was stopped: {msg}")?,
        }
        if !failure.abandoned.is_empty() {
            write!(f, "\n  threads still busy after the stop, abandoned: {}", failure.abandoned.join(", "))?;
        }
        Ok(())
    }
}

/// The message includes the wrapped error's, so [`source`](std::error::Error::source) is `None`
/// (the Rust API guidelines' rule: one or the other, so a printer walking the chain shows each
/// message once); the wrapped error is the variant's field, typed.
impl std::error::Error for ExecError {}

/// The wait of `core` at entry `entry`, with its missing producers (and, in the same
/// order, the global cores they are queued on); `seen` overrides the counter's current
/// value (the value the timed-out wait saw).
fn stuck_wait(state: &RunState, core: CoreId, entry: u32, seen: Option<u32>) -> Option<(StuckWait, Vec<CoreId>)> {
    let view = state.table.view();
    let e = view.core_entries(core.raw()).get(entry as usize)?;
    let wait = e.wait()?;
    let rank = RankId::new(view.rank_of_core(core.raw()));
    let mut missing = Vec::new();
    let mut cores = Vec::new();
    for &(pcore, pentry) in state.producers(rank, wait.counter) {
        let node = state.node_of(pcore, pentry);
        let progress = state.progress[pcore].get();
        let finished = progress.phase == Phase::Done || progress.entry > pentry;
        let producer_state = if finished {
            if !state.drops_signals_of(node) {
                continue;
            }
            ProducerState::SignalsDropped
        } else if progress.phase == Phase::Waiting {
            ProducerState::Waiting
        } else if progress.entry == pentry && progress.phase == Phase::Running {
            ProducerState::Running
        } else {
            ProducerState::NotReached
        };
        missing.push(MissingSignal {
            tile: state.program.node_name(node),
            core: view.core_name(pcore.raw()),
            state: producer_state,
        });
        cores.push(pcore);
    }
    let wait = StuckWait {
        core: view.core_name(core.raw()),
        entry,
        tile: state.program.node_name(state.node_of(core, entry)),
        rank,
        counter: wait.counter,
        expected: wait.target,
        seen: seen.unwrap_or_else(|| state.counters.load(rank, wait.counter)),
        missing,
    };
    Some((wait, cores))
}

/// The report of the wait of `core` at `entry` that timed out having seen `seen`, with
/// the chain of waits behind it.
pub(crate) fn timeout_report(state: &RunState, core: CoreId, entry: u32, seen: u32) -> TimeoutReport {
    let mut chain = Vec::new();
    let mut visited: IdVec<CoreId, bool> = IdVec::filled(state.progress.len(), false);
    let mut next = Some((core, entry, Some(seen)));
    while let Some((core, entry, seen)) = next.take() {
        if std::mem::replace(&mut visited[core], true) {
            break;
        }
        let Some((wait, cores)) = stuck_wait(state, core, entry, seen) else { break };
        // Follow the first missing producer whose core is itself waiting.
        if let Some(i) = wait.missing.iter().position(|m| m.state == ProducerState::Waiting) {
            let pcore = cores[i];
            next = Some((pcore, state.progress[pcore].get().entry, None));
        }
        chain.push(wait);
    }
    TimeoutReport { timeout: state.options.timeout, chain }
}
