//! The sequential reference runner: the same tiles and op bodies as the [`Executor`], run
//! one after another on the calling thread in a topological order of the instance DAG —
//! no schedule, no cores, no counters. A correct schedule must give bitwise the same
//! tensors, since every tile reads only what its predecessors in the DAG wrote.
//!
//! [`Executor`]: super::Executor

use super::diagnostics::{ExecError, FailureCause, RunFailure, TileError, TileFailure};
use super::memory::{Inputs, Memory};
use super::ops::OpImpls;
use super::options::RunOptions;
use super::program::{Program, TileRun};
use super::setup::SetupError;
use super::workers::panic_message;
use super::{RunOutput, RunStats};
use hpmoe_core::ids::NodeId;
use hpmoe_core::model::Taskflow;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Instant;

/// Runs a taskflow's tiles one at a time in a topological order (all ranks interleaved as
/// the order has them; Kahn's algorithm over node ids, so deterministic). A tile whose
/// `run_if_above` guard does not hold runs no op, as on the executor.
#[derive(Debug)]
pub struct SequentialRunner {
    program: Program,
    order: Vec<NodeId>,
}

impl SequentialRunner {
    /// Checks and expands `tf` and resolves its ops in `impls`.
    pub fn new(tf: &Taskflow, impls: &OpImpls) -> Result<SequentialRunner, ExecError> {
        let program = Program::new(tf, impls).map_err(ExecError::Setup)?;
        let expanded = hpmoe_core::analyse(tf).map_err(|diagnostics| {
            ExecError::setup(SetupError::Checks { taskflow: tf.name.clone(), diagnostics, sources: tf.sources.clone() })
        })?;
        let order = expanded.dag.topo_order().map_err(|_| ExecError::setup(SetupError::Cycle))?;
        Ok(SequentialRunner { program, order })
    }

    /// The order tiles run in (global node ids).
    pub fn order(&self) -> &[NodeId] {
        &self.order
    }

    /// Runs every tile once, in [`order`](Self::order), on fresh tensors (as
    /// [`Executor::run`](super::Executor::run) prepares them, with the default memory
    /// limit). A panicking or failing tile ends the run with an error naming it. There is
    /// nothing to wait for, so no timeout: a tile whose body never returns blocks the
    /// caller (use the [`Executor`](super::Executor) to bound that).
    pub fn run(&self, inputs: &Inputs) -> Result<RunOutput, ExecError> {
        let tf = &self.program.tf;
        let limit = RunOptions::default().max_host_bytes;
        let memory = Memory::new(&tf.tensors, tf.profile.ranks, inputs, limit)
            .map_err(|e| ExecError::setup(SetupError::Memory(e)))?;
        let started = Instant::now();
        let mut skipped = 0u64;
        for &node in &self.order {
            let fail = |cause: fn(TileFailure) -> FailureCause, op: Option<String>, error: TileError| {
                let tile = self.program.node_name(node);
                let failure = TileFailure { core: "sequential".into(), tile, op, error };
                ExecError::Run(Box::new(RunFailure { cause: cause(failure), abandoned: Vec::new() }))
            };
            match catch_unwind(AssertUnwindSafe(|| self.program.run_tile(&memory, node))) {
                Ok(Ok(TileRun::Ran)) => {}
                Ok(Ok(TileRun::Skipped)) => skipped += 1,
                Ok(Err(fault)) => return Err(fail(FailureCause::OpFailed, Some(fault.op), fault.error)),
                Err(payload) => {
                    return Err(fail(
                        FailureCause::TilePanicked,
                        None,
                        TileError::Panicked(panic_message(payload.as_ref())),
                    ));
                }
            }
        }
        let elapsed = started.elapsed();
        let stats = RunStats {
            elapsed,
            startup: std::time::Duration::ZERO,
            tiles: self.order.len() as u64,
            skipped,
            threads: 1,
        };
        Ok(RunOutput { snapshot: memory.snapshot(&tf.tensors), stats })
    }
}
