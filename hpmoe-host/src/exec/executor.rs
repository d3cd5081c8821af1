//! [`Executor`]: a schedule table run on host threads with real data.

use super::diagnostics::{ExecError, FailureCause, RunFailure, TileError, TileFailure, timeout_report};
use super::flags::FlagState;
use super::memory::{Inputs, Memory, Snapshot};
use super::ops::OpImpls;
use super::options::RunOptions;
use super::program::Program;
use super::setup::{FamilyShape, SetupError, TableDifference, TableMismatch};
use super::workers::{Failure, RunState, run_workers};
use hpmoe_core::ids::{CoreId, NodeId};
use hpmoe_core::model::Taskflow;
use hpmoe_core::schedule::FlagPlan;
use hpmoe_core::table::ScheduleTable;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What a successful run leaves behind.
#[derive(Clone, Debug)]
pub struct RunOutput {
    /// Every tensor of every rank (inputs, outputs, scratch and symmetric ones).
    pub snapshot: Snapshot,
    /// Timings and counts of the run (wall time, thread start-up, tiles run and skipped).
    pub stats: RunStats,
}

/// Facts about a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunStats {
    /// From starting the first worker thread to the last worker's end (allocating the
    /// tensors and copying them out excluded).
    pub elapsed: Duration,
    /// The part of `elapsed` spent starting the worker threads (zero for the sequential
    /// runner).
    pub startup: Duration,
    /// Tile instances run: every instance of every rank, each having waited and signalled.
    pub tiles: u64,
    /// Of `tiles`, those whose `run_if_above` guard did not hold, so that they ran no op
    /// (see [`Guard`](hpmoe_core::model::Guard)). `tiles - skipped` instances ran their body.
    pub skipped: u64,
    /// Worker threads (one per core with entries).
    pub threads: usize,
}

impl RunStats {
    /// Tile instances that ran their body: `tiles - skipped`.
    pub fn bodies_run(&self) -> u64 {
        self.tiles - self.skipped
    }
}

/// Runs the schedule table of a taskflow on host threads: one worker thread per core,
/// every rank in this process with its own tensors, the table's counters as atomics.
///
/// ```
/// use hpmoe_host::exec::{Executor, Inputs, OpImpls, RunOptions, SequentialRunner};
/// use hpmoe_core::model::{CoreKind, DType, MachineProfile, Taskflow};
///
/// let mut tf = Taskflow::new("double", MachineProfile::small(1, 2));
/// let x = tf.input("x", DType::Bf16, &[8, 4]);
/// let y = tf.scratch("y", DType::Bf16, &[8, 4]);
/// let z = tf.output("z", DType::Bf16, &[8, 4]);
/// tf.tile("copy", CoreKind::Aiv, |t| {
///     let b = t.grid("b", 2);
///     t.op("copy", [x.slice(b.clone() * 4, 4), y.slice(b * 4, 4)]);
/// });
/// tf.tile("sum", CoreKind::Aiv, |t| {
///     let b = t.grid("b", 2);
///     t.op("copy", [x.slice(b.clone() * 4, 4), z.slice(b.clone() * 4, 4)]);
///     t.op("accumulate", [y.slice(b.clone() * 4, 4), z.slice(b * 4, 4)]);
/// });
/// let compiled = hpmoe_core::compile(&tf, &hpmoe_core::schedule::SimpleCost::default()).unwrap();
/// let impls = OpImpls::builtin();
/// let inputs = Inputs::random(&tf, 7);
///
/// let exec = Executor::new(&tf, &compiled.table, &impls).unwrap();
/// let out = exec.run(&inputs, &RunOptions::default()).unwrap();
/// let x0 = inputs.get("x", 0).unwrap();
/// let z0 = out.snapshot.get(0, "z").unwrap();
/// assert_eq!(z0.get(5), x0.get(5) * 2.0);
/// // The same tiles in a topological order on one thread give the same bits.
/// let seq = SequentialRunner::new(&tf, &impls).unwrap().run(&inputs).unwrap();
/// assert_eq!(seq.snapshot, out.snapshot);
/// ```
#[derive(Debug)]
pub struct Executor {
    program: Arc<Program>,
    table: Arc<ScheduleTable>,
    flags: Option<Arc<FlagState>>,
}

impl Executor {
    /// Prepares runs of `table`, the schedule table of `tf`, with the op bodies of `impls`.
    /// Fails if the taskflow does not pass its structural checks, an op has no body or
    /// rejects its argument shapes, or the table was built for another taskflow
    /// ([`ExecError::Setup`]), or if the table is not certified to enforce every dependency of
    /// `tf` ([`ExecError::Certificate`], see [`hpmoe_core::certify::certify`]).
    ///
    /// The table must carry every dependency on its counters: one compiled with hardware flags
    /// (the default of [`hpmoe_core::plan`]) runs with [`Executor::with_flags`] and its flag plan.
    pub fn new(tf: &Taskflow, table: &ScheduleTable, impls: &OpImpls) -> Result<Executor, ExecError> {
        Executor::certified(tf, table, None, impls)
    }

    /// [`Executor::new`] for a table with a hardware-flag plan ([`hpmoe_core::Compiled::flags`],
    /// or [`hpmoe_core::dsl::Program::flag_plan`]): the dependencies the plan carries are kept the
    /// way the device keeps them (an AIC's sets release its own AIVs' waits, in order). The
    /// table is certified with the plan.
    pub fn with_flags(
        tf: &Taskflow,
        table: &ScheduleTable,
        flags: &FlagPlan,
        impls: &OpImpls,
    ) -> Result<Executor, ExecError> {
        Executor::certified(tf, table, Some(flags), impls)
    }

    /// **For fault-injection tests only.** [`Executor::new`] (with `flags`, as
    /// [`Executor::with_flags`]) *without* the certificate check: runs a table that may leave
    /// dependencies unenforced, to test what the executor's own run-time diagnostics (timeouts,
    /// stuck waits) say about it. Such a run may deadlock until the timeout or, worse, complete
    /// with a wrong answer and no error; nothing else should use this.
    pub fn uncertified_for_fault_injection(
        tf: &Taskflow,
        table: &ScheduleTable,
        flags: Option<&FlagPlan>,
        impls: &OpImpls,
    ) -> Result<Executor, ExecError> {
        Executor::prepare(tf, table, flags, impls)
    }

    /// The executor of `table` with `flags`, once the table is certified.
    fn certified(
        tf: &Taskflow,
        table: &ScheduleTable,
        flags: Option<&FlagPlan>,
        impls: &OpImpls,
    ) -> Result<Executor, ExecError> {
        let exec = Executor::prepare(tf, table, flags, impls)?;
        hpmoe_core::certify::certify(tf, table, flags).map_err(ExecError::Certificate)?;
        Ok(exec)
    }

    /// The executor of `table` with `flags`, the table not certified.
    fn prepare(
        tf: &Taskflow,
        table: &ScheduleTable,
        flags: Option<&FlagPlan>,
        impls: &OpImpls,
    ) -> Result<Executor, ExecError> {
        let program = Program::new(tf, impls).map_err(ExecError::Setup)?;
        check_table(&program, table).map_err(|e| ExecError::setup(SetupError::Table(e)))?;
        let flags = match flags {
            Some(plan) => {
                FlagState::new(table, plan).map_err(|e| ExecError::setup(SetupError::Flags(e)))?.map(Arc::new)
            }
            None => None,
        };
        Ok(Executor { program: Arc::new(program), table: Arc::new(table.clone()), flags })
    }

    /// Runs a `#[taskflow]` program's table with its flag plan: the table and plan the macro
    /// embedded (`table_bytes()`, `flags_bytes`), its IR, and the op bodies of `impls` (usually
    /// [`OpImpls::for_program`]).
    pub fn for_program(program: &hpmoe_core::dsl::Program, impls: &OpImpls) -> Result<Executor, ExecError> {
        let setup = |e: hpmoe_core::dsl::ProgramError| ExecError::setup(SetupError::Program(e));
        let tf = program.taskflow().map_err(setup)?;
        let table = program.table().map_err(setup)?;
        let flags = program.flag_plan_of(&table).map_err(setup)?;
        Executor::with_flags(&tf, &table, &flags, impls)
    }

    /// Runs `compiled`'s table with its flag plan (see [`Executor::with_flags`]).
    pub fn for_compiled(
        tf: &Taskflow,
        compiled: &hpmoe_core::Compiled,
        impls: &OpImpls,
    ) -> Result<Executor, ExecError> {
        Executor::with_flags(tf, &compiled.table, &compiled.flags, impls)
    }

    /// The schedule table this executor runs (CRC-checked and certified when it was built).
    pub fn table(&self) -> &ScheduleTable {
        &self.table
    }

    /// `gmm1(e=0, m=3) on rank 2`: the name errors use for a global node id.
    pub fn node_name(&self, node: NodeId) -> String {
        self.program.node_name(node)
    }

    /// Runs every core's entries to the end on host threads.
    ///
    /// Every rank gets fresh tensors: the inputs copied from `inputs`, everything else
    /// poisoned (see [`super::tensor::poison`]). Errors: [`ExecError::Setup`] if an input is
    /// missing or mis-shaped or the tensors exceed `options.max_host_bytes`;
    /// [`ExecError::Run`] if a wait times out, a tile panics or fails, or a tile runs past
    /// the timeout — every worker is then stopped, and the call returns within about two
    /// timeouts of the failure.
    pub fn run(&self, inputs: &Inputs, options: &RunOptions) -> Result<RunOutput, ExecError> {
        let tf = &self.program.tf;
        let memory = Memory::new(&tf.tensors, tf.profile.ranks, inputs, options.max_host_bytes)
            .map_err(|e| ExecError::setup(SetupError::Memory(e)))?;
        let state = Arc::new(RunState::new(
            Arc::clone(&self.program),
            Arc::clone(&self.table),
            self.flags.as_ref().map(|f| Arc::new(f.for_run())),
            memory,
            options.clone(),
        ));
        let started = Instant::now();
        let finished = run_workers(&state);
        let elapsed = started.elapsed();
        if let Some(failure) = state.take_failure() {
            let cause = failure_cause(&state, failure);
            let view = self.table.view();
            let abandoned = finished.abandoned.iter().map(|&c| view.core_name(c.raw())).collect();
            return Err(ExecError::Run(Box::new(RunFailure { cause, abandoned })));
        }
        let snapshot = state.memory.snapshot(&tf.tensors);
        let stats = RunStats {
            elapsed,
            startup: finished.startup,
            tiles: self.table.entries().len() as u64,
            skipped: state.skipped(),
            threads: finished.threads,
        };
        Ok(RunOutput { snapshot, stats })
    }
}

/// The public form of a failure.
fn failure_cause(state: &RunState, failure: Failure) -> FailureCause {
    let view = state.table.view();
    let tile = |core: CoreId, entry: u32, op: Option<String>, error: TileError| TileFailure {
        core: view.core_name(core.raw()),
        tile: state.program.node_name(state.node_of(core, entry)),
        op,
        error,
    };
    match failure {
        Failure::Timeout { core, entry, seen } => FailureCause::Timeout(timeout_report(state, core, entry, seen)),
        Failure::Panicked { core, entry, message } => {
            FailureCause::TilePanicked(tile(core, entry, None, TileError::Panicked(message)))
        }
        Failure::OpFailed { core, entry, op, error } => FailureCause::OpFailed(tile(core, entry, Some(op), error)),
        Failure::TooSlow { core, entry, running_for } => FailureCause::TileTooSlow(tile(
            core,
            entry,
            None,
            TileError::TooSlow { running_for, timeout: state.options.timeout },
        )),
        Failure::Worker(message) => FailureCause::Worker(message),
    }
}

/// Checks that `table` was built for the taskflow of `program`: same machine, same
/// families (names, core kinds, grids) and so the same instances.
fn check_table(program: &Program, table: &ScheduleTable) -> Result<(), Box<TableMismatch>> {
    let tf = &program.tf;
    let p = &tf.profile;
    let h = table.header();
    let mismatch = |difference| {
        Err(Box::new(TableMismatch { table: table.name().to_string(), taskflow: tf.name.clone(), difference }))
    };
    let (in_table, in_tf) = ([h.ranks, h.aic_per_rank, h.aiv_per_aic], [p.ranks, p.aic_per_rank, p.aiv_per_aic]);
    if in_table != in_tf {
        return mismatch(TableDifference::Machine { table: in_table, taskflow: in_tf });
    }
    if table.families().len() != tf.families.len() {
        return mismatch(TableDifference::FamilyCount { table: table.families().len(), taskflow: tf.families.len() });
    }
    for (i, (rec, f)) in table.families().iter().zip(&tf.families).enumerate() {
        let grid: Vec<u32> = f.grid.iter().map(|g| g.extent as u32).collect();
        let (name, kind) = (table.family_name(i), rec.kind());
        if name != f.name || kind != Some(f.core) || rec.grid() != grid.as_slice() {
            return mismatch(TableDifference::Family {
                index: i,
                table: FamilyShape { name: name.to_string(), kind, grid: rec.grid().to_vec() },
                taskflow: FamilyShape { name: f.name.clone(), kind: Some(f.core), grid },
            });
        }
    }
    Ok(())
}
