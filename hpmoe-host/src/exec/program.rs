//! A taskflow resolved against an [`OpImpls`] registry: for every tile family, the
//! reference body and the argument descriptions of each op call, checked before any run,
//! and its `run_if_above` guard, if any. Running one tile instance evaluates the guard, then
//! (if it holds) its regions for its grid coordinates and rank ([`eval_region`]) and calls
//! the bodies in order.

use super::diagnostics::TileError;
use super::memory::Memory;
use super::ops::{Arg, ArgDesc, OpImpls, RefOp};
use super::setup::{OpProblem, SetupError};
use hpmoe_core::expand::{InstanceSpace, eval_region};
use hpmoe_core::ids::NodeId;
use hpmoe_core::model::{Affine, DType, Guard, Region, Taskflow};
use hpmoe_core::{check, resolve};
use smallvec::SmallVec;
use std::sync::Arc;

/// One region argument of an op call.
struct ArgPlan {
    tensor: usize,
    region: Region,
    desc: ArgDesc,
}

/// One op call of a tile body.
struct CallPlan {
    op: String,
    body: Arc<dyn RefOp>,
    args: Vec<ArgPlan>,
}

/// A family's `run_if_above` guard, resolved like a call argument.
struct GuardPlan {
    tensor: usize,
    count: Region,
    above: Affine,
}

/// What running a tile instance did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TileRun {
    /// The body ran (the tile has no guard, or its guard held).
    Ran,
    /// The guard's count was not above its threshold: no op ran.
    Skipped,
}

/// Why a tile instance failed (not a panic: those are caught by the caller).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TileFault {
    pub op: String,
    pub error: TileError,
}

/// The resolved taskflow.
pub(crate) struct Program {
    pub tf: Taskflow,
    pub space: InstanceSpace,
    /// Per family, per op call.
    calls: Vec<Vec<CallPlan>>,
    /// Per family, its guard.
    guards: Vec<Option<GuardPlan>>,
}

impl std::fmt::Debug for Program {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Program").field("taskflow", &self.tf.name).field("nodes", &self.space.len()).finish()
    }
}

impl Program {
    /// Resolves `tf` (which must pass the structural checks) against `impls`. Every op
    /// without a body and every argument list a body rejects is reported, all together.
    pub(crate) fn new(tf: &Taskflow, impls: &OpImpls) -> Result<Program, Box<SetupError>> {
        let resolved = resolve::check_structure(tf).map_err(|diagnostics| {
            Box::new(SetupError::Checks { taskflow: tf.name.clone(), diagnostics, sources: tf.sources.clone() })
        })?;
        let mut errors = Vec::new();
        let mut calls = Vec::with_capacity(tf.families.len());
        for (f, family_calls) in tf.families.iter().zip(&resolved.calls) {
            let mut plans = Vec::with_capacity(f.body.len());
            for (call, rc) in f.body.iter().zip(family_calls) {
                let Some(body) = impls.get(&call.op) else {
                    errors.push(OpProblem::NoBody { op: call.op.clone(), tile: f.name.clone() });
                    continue;
                };
                let args: Vec<ArgPlan> = call
                    .args
                    .iter()
                    .zip(&rc.tensors)
                    .zip(&rc.spec.params)
                    .map(|((region, &tensor), param)| {
                        let decl = &tf.tensors[tensor];
                        let shape = decl
                            .shape
                            .iter()
                            .enumerate()
                            .map(|(k, &extent)| region.dims.get(k).map_or(extent, |d| d.len) as u32)
                            .collect();
                        let desc =
                            ArgDesc { param: param.name.clone(), access: param.access, dtype: decl.dtype, shape };
                        ArgPlan { tensor, region: region.clone(), desc }
                    })
                    .collect();
                let descs: Vec<ArgDesc> = args.iter().map(|a| a.desc.clone()).collect();
                if let Err(reason) = body.check(&descs) {
                    errors.push(OpProblem::Rejected {
                        op: call.op.clone(),
                        tile: f.name.clone(),
                        args: descs.iter().map(ArgDesc::describe).collect(),
                        reason,
                    });
                }
                plans.push(CallPlan { op: call.op.clone(), body: body.clone(), args });
            }
            calls.push(plans);
        }
        // The structural checks passed, so every guard resolved: one local i32 element.
        let guards = tf
            .families
            .iter()
            .zip(&resolved.guards)
            .map(|(f, resolved)| {
                let (g, resolved) = (f.guard.as_ref()?, resolved.as_ref()?);
                let tensor = resolved.tensors[0];
                debug_assert_eq!(tf.tensors[tensor].dtype, DType::I32);
                Some(GuardPlan { tensor, count: g.count.clone(), above: g.above.clone() })
            })
            .collect();
        if !errors.is_empty() {
            return Err(Box::new(SetupError::Ops(errors)));
        }
        let space = InstanceSpace::new(
            tf.profile.ranks,
            tf.families.iter().map(|f| f.grid.iter().map(|g| g.extent as u32).collect()),
        );
        Ok(Program { tf: tf.clone(), space, calls, guards })
    }

    /// `gmm1(e=0, m=3) on rank 2`.
    pub(crate) fn node_name(&self, node: NodeId) -> String {
        check::node_name(&self.tf, &self.space, node)
    }

    /// Family index and grid coordinates of a node.
    pub(crate) fn locate(&self, node: NodeId) -> (usize, SmallVec<[u64; 4]>) {
        let local = self.space.local_of(node);
        (self.space.family_of_local(local), self.space.coords_of_local(local))
    }

    /// Whether the guard of tile instance `family(coords)` on `rank` holds (`true` without
    /// a guard). Reads the count from `rank`'s memory: the caller has waited for its
    /// writer (expansion makes the count a read of the tile, so the wait covers it).
    fn guard_holds(&self, memory: &Memory, family: usize, coords: &[u64], rank: u32) -> Result<bool, TileFault> {
        let Some(g) = &self.guards[family] else { return Ok(true) };
        let fault = |error: TileError| TileFault { op: Guard::OP.to_string(), error };
        let decl = &self.tf.tensors[g.tensor];
        let (dest, ext) = eval_region(&g.count, &decl.shape, coords, rank, self.tf.profile.ranks)
            .map_err(|f| fault(TileError::GuardCount { tensor: decl.name.clone(), fault: f }))?;
        let bits = memory.store(dest, g.tensor).load_box(&ext);
        let [count] = bits[..] else {
            return Err(fault(TileError::GuardCountElements { tensor: decl.name.clone(), elements: bits.len() }));
        };
        let count = i64::from(count as i32);
        let above = g.above.eval(coords, u64::from(rank)).map_err(|_| {
            let index_names = self.tf.families[family].index_names();
            fault(TileError::GuardOverflow { above: Box::new(g.above.clone()), index_names })
        })?;
        Ok(Guard::runs(count, above))
    }

    /// Runs tile instance `node`: its guard, then (if the guard holds) each op call of its
    /// body, in order.
    pub(crate) fn run_tile(&self, memory: &Memory, node: NodeId) -> Result<TileRun, TileFault> {
        let rank = self.space.rank_of(node).raw();
        let (family, coords) = self.locate(node);
        if !self.guard_holds(memory, family, &coords, rank)? {
            return Ok(TileRun::Skipped);
        }
        let ranks = self.tf.profile.ranks;
        for call in &self.calls[family] {
            let mut args: SmallVec<[Arg<'_>; 4]> = SmallVec::new();
            for a in &call.args {
                let decl = &self.tf.tensors[a.tensor];
                let (dest, ext) = eval_region(&a.region, &decl.shape, &coords, rank, ranks).map_err(|fault| {
                    TileFault { op: call.op.clone(), error: TileError::Region { param: a.desc.param.clone(), fault } }
                })?;
                args.push(Arg::new(&a.desc, memory.store(dest, a.tensor), ext, dest));
            }
            call.body.run(&args).map_err(|e| TileFault { op: call.op.clone(), error: TileError::Op(e) })?;
        }
        Ok(TileRun::Ran)
    }
}
