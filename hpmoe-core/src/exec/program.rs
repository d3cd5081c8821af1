//! A taskflow resolved against an [`OpImpls`] registry: for every tile family, the
//! reference body and the argument descriptions of each op call, checked before any run.
//! Running one tile instance evaluates its regions for its grid coordinates and rank
//! ([`eval_region`]) and calls the bodies in order.

use super::memory::Memory;
use super::ops::{Arg, ArgDesc, OpImpls, RefOp};
use crate::check;
use crate::expand::{InstanceSpace, eval_region};
use crate::model::{Region, Taskflow};
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

/// Why a tile instance failed (not a panic: those are caught by the caller).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TileFault {
    pub op: String,
    pub message: String,
}

/// The resolved taskflow.
pub(crate) struct Program {
    pub tf: Taskflow,
    pub space: InstanceSpace,
    /// Per family, per op call.
    calls: Vec<Vec<CallPlan>>,
}

impl std::fmt::Debug for Program {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Program").field("taskflow", &self.tf.name).field("nodes", &self.space.len()).finish()
    }
}

impl Program {
    /// Resolves `tf` (which must pass the structural checks) against `impls`. Every op
    /// without a body and every argument list a body rejects is reported, all together.
    pub(crate) fn new(tf: &Taskflow, impls: &OpImpls) -> Result<Program, String> {
        let resolved = check::check_structure(tf)
            .map_err(|d| format!("taskflow `{}` does not pass the checks:\n{}", tf.name, d.render(&tf.sources)))?;
        let mut errors = Vec::new();
        let mut calls = Vec::with_capacity(tf.families.len());
        for (f, family_calls) in tf.families.iter().zip(&resolved.calls) {
            let mut plans = Vec::with_capacity(f.body.len());
            for (call, rc) in f.body.iter().zip(family_calls) {
                let Some(body) = impls.get(&call.op) else {
                    errors.push(format!(
                        "op `{}` (called in tile `{}`) has no reference implementation; register one in OpImpls",
                        call.op, f.name
                    ));
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
                if let Err(e) = body.check(&descs) {
                    let shown: Vec<String> = descs.iter().map(ArgDesc::describe).collect();
                    errors.push(format!(
                        "op `{}` in tile `{}` rejects its arguments ({}): {e}",
                        call.op,
                        f.name,
                        shown.join(", ")
                    ));
                }
                plans.push(CallPlan { op: call.op.clone(), body: body.clone(), args });
            }
            calls.push(plans);
        }
        if !errors.is_empty() {
            return Err(errors.join("\n"));
        }
        let space = InstanceSpace::new(
            tf.profile.ranks,
            tf.families.iter().map(|f| f.grid.iter().map(|g| g.extent as u32).collect()),
        );
        Ok(Program { tf: tf.clone(), space, calls })
    }

    /// `gmm1(e=0, m=3) on rank 2`.
    pub(crate) fn node_name(&self, node: u32) -> String {
        check::node_name(&self.tf, &self.space, node)
    }

    /// Family index and grid coordinates of a node.
    pub(crate) fn locate(&self, node: u32) -> (usize, SmallVec<[u64; 4]>) {
        let local = self.space.local_of(node);
        (self.space.family_of_local(local), self.space.coords_of_local(local))
    }

    /// Runs tile instance `node`: each op call of its body, in order.
    pub(crate) fn run_tile(&self, memory: &Memory, node: u32) -> Result<(), TileFault> {
        let rank = self.space.rank_of(node);
        let (family, coords) = self.locate(node);
        let ranks = self.tf.profile.ranks;
        for call in &self.calls[family] {
            let mut args: SmallVec<[Arg<'_>; 4]> = SmallVec::new();
            for a in &call.args {
                let decl = &self.tf.tensors[a.tensor];
                let (dest, ext) =
                    eval_region(&a.region, &decl.shape, &coords, rank, ranks).map_err(|fault| TileFault {
                        op: call.op.clone(),
                        message: format!("region {} cannot be evaluated: {fault:?}", a.desc.param),
                    })?;
                args.push(Arg::new(&a.desc, memory.store(dest, a.tensor), ext, dest));
            }
            call.body.run(&args).map_err(|message| TileFault { op: call.op.clone(), message })?;
        }
        Ok(())
    }
}
