//! The threads of a run: one worker per core that has entries, walking the core's list in
//! order — wait, run the tile, signal — and a supervisor (the calling thread) that watches
//! for tiles running too long and collects the workers with bounded waits.
//!
//! Threads are plain `std::thread`s sharing the run's state through an `Arc`, not scoped
//! threads: a scope joins every thread without a time limit, and a tile that never returns
//! would hang the caller. Here the supervisor waits for each worker's completion message
//! with a deadline and, after a stop, abandons (detaches) threads still inside a tile one
//! timeout later, naming their cores in the error.
//!
//! Any failure — a wait timing out, a tile panicking or failing, a tile running too long —
//! is recorded once (the first wins), sets the stop flag and unparks every worker; waiting
//! workers see the flag and return, running ones return after their tile.

use super::counters::{Counters, WaitOutcome};
use super::diagnostics::{TileError, WorkerFailure};
use super::flags::FlagState;
use super::memory::Memory;
use super::options::{RunOptions, TileInfo};
use super::program::{Program, TileRun};
use hpmoe_core::ids::{CoreId, CounterId, IdVec, NodeId, RankId};
use hpmoe_core::table::ScheduleTable;
use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU32, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::thread::{self, JoinHandle, Thread};
use std::time::{Duration, Instant};

/// What a core is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Not started yet.
    Idle,
    /// Waiting on the counter of its current entry.
    Waiting,
    /// Running the tile of its current entry.
    Running,
    /// Saw the stop flag before running its current entry.
    Stopped,
    /// Ran every entry.
    Done,
}

impl Phase {
    fn code(self) -> u8 {
        self as u8
    }

    fn from_code(code: u8) -> Phase {
        [Phase::Idle, Phase::Waiting, Phase::Running, Phase::Stopped, Phase::Done][code as usize]
    }
}

/// A core's progress, published by its worker for the supervisor and the reports.
#[derive(Debug)]
pub(crate) struct CoreProgress {
    entry: AtomicU32,
    phase: AtomicU8,
    /// When the phase was entered, in ns since the run started.
    since_ns: AtomicU64,
}

/// A consistent-enough reading of a [`CoreProgress`] (exact once the worker has stopped).
#[derive(Clone, Copy, Debug)]
pub(crate) struct ProgressView {
    pub entry: u32,
    pub phase: Phase,
    pub since_ns: u64,
}

impl CoreProgress {
    fn new() -> Self {
        CoreProgress { entry: AtomicU32::new(0), phase: AtomicU8::new(Phase::Idle.code()), since_ns: AtomicU64::new(0) }
    }

    fn set(&self, entry: u32, phase: Phase, since_ns: u64) {
        self.entry.store(entry, Ordering::Relaxed);
        self.since_ns.store(since_ns, Ordering::Relaxed);
        self.phase.store(phase.code(), Ordering::Release);
    }

    pub(crate) fn get(&self) -> ProgressView {
        let phase = Phase::from_code(self.phase.load(Ordering::Acquire));
        ProgressView {
            entry: self.entry.load(Ordering::Relaxed),
            phase,
            since_ns: self.since_ns.load(Ordering::Relaxed),
        }
    }
}

/// The first failure of a run, in terms of cores and entries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Failure {
    Timeout { core: CoreId, entry: u32, seen: u32 },
    Panicked { core: CoreId, entry: u32, message: String },
    OpFailed { core: CoreId, entry: u32, op: String, error: TileError },
    TooSlow { core: CoreId, entry: u32, running_for: Duration },
    Worker(WorkerFailure),
}

/// Per (rank, counter): the (core, entry) pairs that signal it.
type ProducerMap = HashMap<(RankId, CounterId), Vec<(CoreId, u32)>>;

/// Everything the workers of one run share.
#[derive(Debug)]
pub(crate) struct RunState {
    pub program: Arc<Program>,
    pub table: Arc<ScheduleTable>,
    pub memory: Memory,
    pub counters: Counters,
    /// The hardware flag, when the table's plan carries dependencies on it.
    pub(crate) flags: Option<Arc<FlagState>>,
    /// Per global core.
    pub progress: IdVec<CoreId, CoreProgress>,
    pub options: RunOptions,
    /// Sorted node ids whose signals are dropped.
    dropped: Vec<NodeId>,
    /// Per (rank, counter): the (core, entry) pairs that signal it; built on first use.
    producers: OnceLock<ProducerMap>,
    stop: AtomicBool,
    /// Tile instances whose guard did not hold (they waited and signalled, ran no op).
    skipped: AtomicU64,
    failure: Mutex<Option<Failure>>,
    /// Per global core, the worker's thread (`None` for cores without entries).
    threads: OnceLock<IdVec<CoreId, Option<Thread>>>,
    start: Instant,
}

impl RunState {
    pub(crate) fn new(
        program: Arc<Program>,
        table: Arc<ScheduleTable>,
        flags: Option<Arc<FlagState>>,
        memory: Memory,
        options: RunOptions,
    ) -> Self {
        let counters = Counters::new(&table);
        let progress = (0..table.cores().len()).map(|_| CoreProgress::new()).collect();
        let mut dropped = options.drop_signals_of.clone();
        dropped.sort_unstable();
        RunState {
            program,
            table,
            memory,
            counters,
            flags,
            progress,
            options,
            dropped,
            producers: OnceLock::new(),
            stop: AtomicBool::new(false),
            skipped: AtomicU64::new(0),
            failure: Mutex::new(None),
            threads: OnceLock::new(),
            start: Instant::now(),
        }
    }

    fn now_ns(&self) -> u64 {
        self.start.elapsed().as_nanos() as u64
    }

    /// Global node id of entry `entry` of `core`.
    pub(crate) fn node_of(&self, core: CoreId, entry: u32) -> NodeId {
        let rank = self.table.view().rank_of_core(core.raw());
        let instance = self.table.core_entries(core.raw())[entry as usize].instance;
        self.program.space.node(RankId::new(rank), instance)
    }

    pub(crate) fn drops_signals_of(&self, node: NodeId) -> bool {
        self.dropped.binary_search(&node).is_ok()
    }

    /// The (core, entry) pairs that signal counter `counter` of `rank`, per the table.
    pub(crate) fn producers(&self, rank: RankId, counter: CounterId) -> &[(CoreId, u32)] {
        let map = self.producers.get_or_init(|| {
            let mut map = ProducerMap::new();
            for core in self.progress.keys() {
                for (i, e) in self.table.core_entries(core.raw()).iter().enumerate() {
                    for s in self.table.entry_signals(e) {
                        let s = s.signal();
                        map.entry((s.rank, s.counter)).or_default().push((core, i as u32));
                    }
                }
            }
            map
        });
        map.get(&(rank, counter)).map_or(&[], Vec::as_slice)
    }

    pub(crate) fn stopped(&self) -> bool {
        self.stop.load(Ordering::Acquire)
    }

    /// Records `failure` unless one is recorded already, then stops every worker.
    pub(crate) fn fail(&self, failure: Failure) {
        self.failure.lock().unwrap_or_else(PoisonError::into_inner).get_or_insert(failure);
        self.stop.store(true, Ordering::Release);
        if let Some(threads) = self.threads.get() {
            threads.values().flatten().for_each(Thread::unpark);
        }
    }

    /// Tile instances so far whose guard did not hold (exact once the workers are joined).
    pub(crate) fn skipped(&self) -> u64 {
        self.skipped.load(Ordering::Relaxed)
    }

    pub(crate) fn take_failure(&self) -> Option<Failure> {
        self.failure.lock().unwrap_or_else(PoisonError::into_inner).take()
    }

    fn wake(&self, core: CoreId) {
        if let Some(Some(t)) = self.threads.get().and_then(|t| t.get(core)) {
            t.unpark();
        }
    }

    /// Blocks (bounded by the timeout) until the thread list is published.
    fn await_start(&self) -> bool {
        let deadline = Instant::now() + self.options.timeout;
        while self.threads.get().is_none() {
            if self.stopped() {
                return false;
            }
            let now = Instant::now();
            if now >= deadline {
                self.fail(Failure::Worker(WorkerFailure::NotStarted));
                return false;
            }
            thread::park_timeout((deadline - now).min(Duration::from_millis(20)));
        }
        true
    }
}

/// `core`'s worker: every entry in order — wait, run, signal.
fn worker(state: &RunState, core: CoreId) {
    if !state.await_start() {
        return;
    }
    let entries = state.table.core_entries(core.raw());
    let rank = RankId::new(state.table.view().rank_of_core(core.raw()));
    let progress = &state.progress[core];
    for (i, e) in entries.iter().enumerate() {
        let i = i as u32;
        if let Some(flags) = &state.flags
            && !wait_for_flag(state, flags, core, i)
        {
            return;
        }
        if let Some(w) = e.wait() {
            progress.set(i, Phase::Waiting, state.now_ns());
            let deadline = Instant::now() + state.options.timeout;
            match state.counters.wait(rank, w.counter, w.target, state.options.spin, deadline, &state.stop) {
                WaitOutcome::Reached => {}
                WaitOutcome::Stopped => return,
                WaitOutcome::TimedOut { seen } => {
                    state.fail(Failure::Timeout { core, entry: i, seen });
                    return;
                }
            }
        }
        if state.stopped() {
            progress.set(i, Phase::Stopped, state.now_ns());
            return;
        }
        progress.set(i, Phase::Running, state.now_ns());
        let node = state.program.space.node(rank, e.instance);
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            if let Some(hook) = &state.options.tile_hook {
                let (family, coords) = state.program.locate(node);
                let family = &state.program.tf.families[family].name;
                hook(&TileInfo { node, rank, core, family, coords: &coords });
            }
            state.program.run_tile(&state.memory, node)
        }));
        match outcome {
            Ok(Ok(TileRun::Ran)) => {}
            // A guarded tile past its count: no work, but it signals like any other.
            Ok(Ok(TileRun::Skipped)) => {
                state.skipped.fetch_add(1, Ordering::Relaxed);
            }
            Ok(Err(fault)) => {
                state.fail(Failure::OpFailed { core, entry: i, op: fault.op, error: fault.error });
                return;
            }
            Err(payload) => {
                state.fail(Failure::Panicked { core, entry: i, message: panic_message(payload.as_ref()) });
                return;
            }
        }
        if !state.drops_signals_of(node) {
            if let Some(aivs) = state.flags.as_ref().and_then(|f| f.set_after(core, i)) {
                aivs.into_iter().for_each(|v| state.wake(v));
            }
            for s in state.table.entry_signals(e) {
                let s = s.signal();
                if let Some(waiter) = state.counters.signal(s.rank, s.counter) {
                    state.wake(waiter);
                }
            }
        }
    }
    progress.set(entries.len() as u32, Phase::Done, state.now_ns());
}

/// On an AIV, before entry `entry`: waits (bounded) until its AIC has set the flag as often as the
/// plan's waits up to this entry. False when the run stops or the wait times out (a failure).
fn wait_for_flag(state: &RunState, flags: &FlagState, core: CoreId, entry: u32) -> bool {
    let need = flags.needed(core, entry);
    if need == 0 || flags.received(core) >= need {
        return true;
    }
    state.progress[core].set(entry, Phase::Waiting, state.now_ns());
    let deadline = Instant::now() + state.options.timeout;
    loop {
        if flags.received(core) >= need {
            return true;
        }
        if state.stopped() {
            return false;
        }
        let now = Instant::now();
        if now >= deadline {
            let view = state.table.view();
            state.fail(Failure::Worker(WorkerFailure::FlagTimeout {
                core: view.core_name(core.raw()),
                entry,
                need,
                received: flags.received(core),
            }));
            return false;
        }
        thread::park_timeout((deadline - now).min(Duration::from_millis(2)));
    }
}

/// The text of a panic payload.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic with a non-string payload".to_string()
    }
}

/// Sends the core id when the worker's thread is done, even if it unwinds.
struct DoneGuard {
    core: CoreId,
    done: mpsc::Sender<CoreId>,
}

impl Drop for DoneGuard {
    fn drop(&mut self) {
        // The supervisor may have given up on this worker already.
        let _ = self.done.send(self.core);
    }
}

/// How the threads of a run ended.
#[derive(Debug)]
pub(crate) struct Finished {
    /// Worker threads started.
    pub threads: usize,
    /// Cores whose threads were abandoned.
    pub abandoned: Vec<CoreId>,
    /// Time to start every thread and publish their handles (the workers then start).
    pub startup: Duration,
}

/// Starts one worker per core with entries, supervises them and collects them; the first
/// failure, if any, is left in `state`.
pub(crate) fn run_workers(state: &Arc<RunState>) -> Finished {
    let started = Instant::now();
    let (done_tx, done_rx) = mpsc::channel();
    let mut handles: Vec<(CoreId, JoinHandle<()>)> = Vec::new();
    let mut threads: IdVec<CoreId, Option<Thread>> = IdVec::filled(state.progress.len(), None);
    for core in state.progress.keys().filter(|&c| !state.table.core_entries(c.raw()).is_empty()) {
        let (s, done) = (Arc::clone(state), done_tx.clone());
        let spawned = thread::Builder::new()
            .name(format!("hpmoe {}", state.table.view().core_name(core.raw())))
            .stack_size(state.options.stack_bytes)
            .spawn(move || {
                let _guard = DoneGuard { core, done };
                worker(&s, core);
            });
        match spawned {
            Ok(h) => {
                threads[core] = Some(h.thread().clone());
                handles.push((core, h));
            }
            Err(e) => {
                state.fail(Failure::Worker(WorkerFailure::Spawn { core, error: Arc::new(e) }));
                break;
            }
        }
    }
    drop(done_tx);
    let _ = state.threads.set(threads);
    state.threads.get().into_iter().flat_map(IdVec::values).flatten().for_each(Thread::unpark);
    let startup = started.elapsed();

    let finished = supervise(state, &done_rx, handles.len());
    let mut abandoned = Vec::new();
    let handles_started = handles.len();
    for (core, handle) in handles {
        if !finished[core] {
            abandoned.push(core);
            continue; // dropping the handle detaches the thread
        }
        // The worker has sent its message, so it is returning: this join is immediate.
        if let Err(payload) = handle.join() {
            state.fail(Failure::Worker(WorkerFailure::Panicked { core, message: panic_message(payload.as_ref()) }));
        }
    }
    Finished { threads: handles_started, abandoned, startup }
}

/// Waits for `workers` completion messages. Meanwhile stops the run if a tile runs longer
/// than the timeout, and after a stop waits at most one more timeout. Returns, per core,
/// whether its worker finished.
fn supervise(state: &RunState, done: &mpsc::Receiver<CoreId>, workers: usize) -> IdVec<CoreId, bool> {
    let timeout = state.options.timeout;
    let poll = (timeout / 4).clamp(Duration::from_millis(1), Duration::from_millis(20));
    let mut finished = IdVec::filled(state.progress.len(), false);
    let mut remaining = workers;
    let mut stopped_at: Option<Instant> = None;
    while remaining > 0 {
        match done.recv_timeout(poll) {
            Ok(core) => {
                finished[core] = true;
                remaining -= 1;
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
        let now_ns = state.now_ns();
        for (core, p) in state.progress.iter() {
            let p = p.get();
            let running_for = Duration::from_nanos(now_ns.saturating_sub(p.since_ns));
            if p.phase == Phase::Running && running_for > timeout && !finished[core] {
                state.fail(Failure::TooSlow { core, entry: p.entry, running_for });
            }
        }
        if state.stopped() && stopped_at.get_or_insert_with(Instant::now).elapsed() > timeout {
            break;
        }
    }
    finished
}
