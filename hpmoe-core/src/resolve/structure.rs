//! Checks on the taskflow as written, before any grid is expanded: names, arities, core
//! kinds, remote/local arguments, shapes, grid sizes and the instance and edge limits.
//! On success it returns the taskflow with every name resolved to an index.

use super::names::suggestion;
use crate::error::{Diagnostic, Diagnostics, ErrorKind as K};
use crate::limits;
use crate::model::{
    Affine, CoreKind, DType, Guard, IndexSel, Loc, OpSpec, RankSel, Region, Taskflow, TensorKind, TileFamily,
};
use smallvec::SmallVec;
use std::collections::HashMap;

/// An op call with its spec and the tensor index of each argument.
#[derive(Clone, Debug)]
pub struct ResolvedCall<'a> {
    /// The op's signature, from the taskflow's registry.
    pub spec: &'a OpSpec,
    /// Per argument, the index of its tensor in `tf.tensors`.
    pub tensors: SmallVec<[usize; 4]>,
}

/// The taskflow with names resolved. Only built when the structural checks pass.
#[derive(Clone, Debug)]
pub struct Resolved<'a> {
    /// The taskflow the names were resolved in.
    pub tf: &'a Taskflow,
    /// Per family, per op call.
    pub calls: Vec<Vec<ResolvedCall<'a>>>,
    /// Per family, per `after` entry: the target family.
    pub afters: Vec<Vec<usize>>,
    /// Per family, its `run_if_above` guard's read as a call of [`Guard::spec`], if any.
    pub guards: Vec<Option<ResolvedCall<'a>>>,
}

/// Runs every structural check; all errors are collected.
pub fn check_structure(tf: &Taskflow) -> Result<Resolved<'_>, Diagnostics> {
    let mut d = Diagnostics::default();
    check_profile(tf, &mut d);
    let tensors = check_tensors(tf, &mut d);
    let families = check_families(tf, &mut d);
    let mut calls = Vec::with_capacity(tf.families.len());
    let mut afters = Vec::with_capacity(tf.families.len());
    let mut guards = Vec::with_capacity(tf.families.len());
    for f in &tf.families {
        calls.push(check_body(tf, f, &tensors, &mut d));
        afters.push(check_afters(tf, f, &families, &mut d));
        guards.push(check_guard(tf, f, &tensors, &mut d));
    }
    check_totals(tf, &mut d);
    d.into_result(Resolved { tf, calls, afters, guards })
}

fn check_profile(tf: &Taskflow, d: &mut Diagnostics) {
    let p = &tf.profile;
    let bad = |msg: String| Diagnostic::new(K::BadProfile, tf.loc, msg);
    if p.ranks == 0 || p.ranks > limits::MAX_RANKS {
        d.push(bad(format!("taskflow `{}` has {} ranks; allowed: 1..={}", tf.name, p.ranks, limits::MAX_RANKS)));
    }
    if p.aic_per_rank == 0 || p.aiv_per_aic == 0 {
        d.push(bad(format!(
            "profile `{}` has {} AIC and {} AIV per AIC; both must be at least 1",
            p.name, p.aic_per_rank, p.aiv_per_aic
        )));
    } else if u64::from(p.aic_per_rank) * (1 + u64::from(p.aiv_per_aic)) > u64::from(limits::MAX_CORES_PER_RANK) {
        d.push(bad(format!("profile `{}` has more than {} cores per rank", p.name, limits::MAX_CORES_PER_RANK)));
    }
}

fn check_tensors<'a>(tf: &'a Taskflow, d: &mut Diagnostics) -> HashMap<&'a str, usize> {
    let mut index = HashMap::new();
    for (i, t) in tf.tensors.iter().enumerate() {
        if let Some(&first) = index.get(t.name.as_str()) {
            let first: &crate::model::TensorDecl = &tf.tensors[first];
            d.push(
                Diagnostic::new(K::DuplicateName, t.loc, format!("tensor `{}` is declared twice", t.name))
                    .note(first.loc, "first declared here"),
            );
            continue;
        }
        index.insert(t.name.as_str(), i);
        let bad = |msg: String| Diagnostic::new(K::BadShape, t.loc, msg);
        if t.shape.is_empty() {
            d.push(bad(format!("tensor `{}` has no dimensions", t.name)));
        } else if t.shape.len() > limits::MAX_TENSOR_DIMS {
            d.push(bad(format!(
                "tensor `{}` has {} dimensions; at most {} are supported",
                t.name,
                t.shape.len(),
                limits::MAX_TENSOR_DIMS
            )));
        } else if let Some((k, &e)) = t.shape.iter().enumerate().find(|(_, e)| **e == 0 || **e > limits::MAX_DIM_EXTENT)
        {
            d.push(bad(format!(
                "tensor `{}` has extent {e} in dimension {k}; extents must be in 1..={}",
                t.name,
                limits::MAX_DIM_EXTENT
            )));
        } else if t.bytes().is_none() {
            d.push(bad(format!("tensor `{}` is larger than 2^64 bytes", t.name)));
        }
    }
    index
}

fn check_families<'a>(tf: &'a Taskflow, d: &mut Diagnostics) -> HashMap<&'a str, usize> {
    let mut index = HashMap::new();
    for (i, f) in tf.families.iter().enumerate() {
        if let Some(&first) = index.get(f.name.as_str()) {
            let first: &crate::model::TileFamily = &tf.families[first];
            d.push(
                Diagnostic::new(K::DuplicateName, f.loc, format!("tile `{}` is declared twice", f.name))
                    .note(first.loc, "first declared here"),
            );
        } else {
            index.insert(f.name.as_str(), i);
        }
        if f.grid.len() > limits::MAX_GRID_DIMS {
            d.push(Diagnostic::new(
                K::GridTooLarge,
                f.grid[limits::MAX_GRID_DIMS].loc,
                format!(
                    "tile `{}` has {} grid dimensions; at most {} are supported",
                    f.name,
                    f.grid.len(),
                    limits::MAX_GRID_DIMS
                ),
            ));
        }
        let mut seen: HashMap<&str, Loc> = HashMap::new();
        for g in &f.grid {
            if let Some(&first) = seen.get(g.name.as_str()) {
                d.push(
                    Diagnostic::new(
                        K::DuplicateName,
                        g.loc,
                        format!("grid index `{}` appears twice in tile `{}`", g.name, f.name),
                    )
                    .note(first, "first used here"),
                );
            }
            seen.insert(&g.name, g.loc);
            if g.extent == 0 {
                d.push(
                    Diagnostic::new(
                        K::EmptyGrid,
                        g.loc,
                        format!(
                            "grid index `{}` of tile `{}` ranges over 0..0: the tile would never run",
                            g.name, f.name
                        ),
                    )
                    .help("give the range at least one value, or remove the tile"),
                );
            }
        }
        match f.instances() {
            Some(n) if n <= limits::MAX_FAMILY_INSTANCES => {}
            n => {
                let shown = n.map_or_else(|| "more than 2^64".to_string(), |n| n.to_string());
                d.push(
                    Diagnostic::new(
                        K::GridTooLarge,
                        f.loc,
                        format!(
                            "tile `{}` has {shown} instances per rank; the limit is {} (MAX_FAMILY_INSTANCES)",
                            f.name,
                            limits::MAX_FAMILY_INSTANCES
                        ),
                    )
                    .help("use larger tiles (fewer grid points)"),
                );
            }
        }
        if f.body.len() > limits::MAX_OPS_PER_TILE {
            d.push(Diagnostic::new(
                K::TileTooLarge,
                f.loc,
                format!(
                    "tile `{}` calls {} ops; at most {} are allowed",
                    f.name,
                    f.body.len(),
                    limits::MAX_OPS_PER_TILE
                ),
            ));
        }
    }
    index
}

fn check_body<'a>(
    tf: &'a Taskflow,
    f: &'a crate::model::TileFamily,
    tensors: &HashMap<&str, usize>,
    d: &mut Diagnostics,
) -> Vec<ResolvedCall<'a>> {
    let mut out = Vec::new();
    for call in &f.body {
        let Some(spec) = tf.ops.get(&call.op) else {
            d.push(
                Diagnostic::new(K::UnknownOp, call.loc, format!("unknown op `{}` in tile `{}`", call.op, f.name))
                    .help(suggestion("op", &call.op, tf.ops.iter().map(|o| o.name.as_str()))),
            );
            continue;
        };
        if spec.core != f.core {
            d.push(
                Diagnostic::new(
                    K::WrongCoreKind,
                    call.loc,
                    format!("`{}` runs on {} cores, but tile `{}` is an {} tile", spec.name, spec.core, f.name, f.core),
                )
                .help(format!("move the call into a `#[tile({})]` function", spec.core)),
            );
        }
        if call.args.len() != spec.params.len() || call.args.len() > limits::MAX_ARGS_PER_OP {
            let names: Vec<&str> = spec.params.iter().map(|p| p.name.as_str()).collect();
            d.push(Diagnostic::new(
                K::ArityMismatch,
                call.loc,
                format!(
                    "`{}` takes {} region arguments ({}), but {} were given",
                    spec.name,
                    spec.params.len(),
                    names.join(", "),
                    call.args.len()
                ),
            ));
            continue;
        }
        let mut ids = SmallVec::new();
        for (region, param) in call.args.iter().zip(&spec.params) {
            let Some(t) = resolve_tensor(tf, f, region, tensors, d) else { continue };
            ids.push(t);
            check_region(tf, f, spec, param, region, t, d);
        }
        if ids.len() == call.args.len() {
            out.push(ResolvedCall { spec, tensors: ids });
        }
    }
    out
}

/// The index of the tensor `region` names, or an error at the region.
fn resolve_tensor(
    tf: &Taskflow,
    f: &TileFamily,
    region: &Region,
    tensors: &HashMap<&str, usize>,
    d: &mut Diagnostics,
) -> Option<usize> {
    let t = tensors.get(region.tensor.as_str()).copied();
    if t.is_none() {
        d.push(
            Diagnostic::new(
                K::UnknownTensor,
                region.loc,
                format!("unknown tensor `{}` in tile `{}`", region.tensor, f.name),
            )
            .help(suggestion("tensor", &region.tensor, tf.tensors.iter().map(|t| t.name.as_str()))),
        );
    }
    t
}

/// A guard reads one `i32` element of a local tensor that the tile itself does not write.
fn check_guard<'a>(
    tf: &'a Taskflow,
    f: &'a TileFamily,
    tensors: &HashMap<&str, usize>,
    d: &mut Diagnostics,
) -> Option<ResolvedCall<'a>> {
    let g = f.guard.as_ref()?;
    let spec = Guard::spec();
    let region = &g.count;
    let t = resolve_tensor(tf, f, region, tensors, d)?;
    check_indices(f, &g.above, g.loc, d);
    let errors = d.len();
    check_region(tf, f, spec, &spec.params[0], region, t, d);
    let decl = &tf.tensors[t];
    let what = format!("the count of `{}` in tile `{}`", Guard::OP, f.name);
    let bad = |msg: String| {
        Diagnostic::new(K::BadGuard, region.loc, msg).note(decl.loc, format!("`{}` declared here", decl.name))
    };
    if decl.dtype != DType::I32 {
        d.push(bad(format!("{what} must be an i32 element, but `{}` holds {}", decl.name, decl.dtype.name())));
    }
    let elements = decl
        .shape
        .iter()
        .enumerate()
        .map(|(k, &e)| region.dims.get(k).map_or(e, |s| s.len))
        .fold(1u64, u64::saturating_mul);
    if elements != 1 {
        d.push(
            bad(format!("{what} must be one element, but it covers {elements} elements of `{}`", decl.name))
                .help("index every dimension: `counts.at(i).at(j)`"),
        );
    }
    if let Some(call) = f.body.iter().find(|c| {
        tf.ops.get(&c.op).is_some_and(|op| {
            c.args.iter().zip(&op.params).any(|(r, p)| p.access.writes() && r.tensor == region.tensor)
        })
    }) {
        d.push(
            Diagnostic::new(
                K::BadGuard,
                call.loc,
                format!("tile `{}` writes `{}`, which its own `{}` guard reads", f.name, decl.name, Guard::OP),
            )
            .help("the guard is read before the body runs; write the count in an earlier tile")
            .note(g.loc, "guard set here"),
        );
    }
    (d.len() == errors).then(|| ResolvedCall { spec, tensors: SmallVec::from_slice(&[t]) })
}

fn check_region(
    tf: &Taskflow,
    f: &crate::model::TileFamily,
    spec: &OpSpec,
    param: &crate::model::Param,
    region: &Region,
    tensor: usize,
    d: &mut Diagnostics,
) {
    let t = &tf.tensors[tensor];
    let what = format!("argument `{}` of `{}` in tile `{}`", param.name, spec.name, f.name);
    if region.dims.len() > t.shape.len() {
        d.push(Diagnostic::new(
            K::ArityMismatch,
            region.loc,
            format!("{what} slices {} dimensions of `{}`, which has {}", region.dims.len(), t.name, t.shape.len()),
        ));
    }
    for (k, dim) in region.dims.iter().enumerate() {
        check_indices(f, &dim.start, region.loc, d);
        if let Some(&extent) = t.shape.get(k)
            && (dim.len == 0 || dim.len > extent)
        {
            d.push(Diagnostic::new(
                K::RegionOutOfBounds,
                region.loc,
                format!("{what} takes {} elements of dimension {k} of `{}`, which has {extent}", dim.len, t.name),
            ));
        }
    }
    match (&region.rank, param.remote) {
        (RankSel::Remote(e), true) => {
            check_indices(f, e, region.loc, d);
            if t.kind != TensorKind::Symmetric {
                d.push(
                    Diagnostic::new(
                        K::PutIntoNonSymmetric,
                        region.loc,
                        format!(
                            "{what} writes into `{}` on another rank, but `{}` is {} {} tensor, not a symmetric one",
                            t.name,
                            t.name,
                            if matches!(t.kind, TensorKind::Input | TensorKind::Output) { "an" } else { "a" },
                            t.kind.name()
                        ),
                    )
                    .help("declare the destination tensor as symmetric")
                    .note(t.loc, format!("`{}` declared here", t.name)),
                );
            }
        }
        (RankSel::Remote(_), false) => d.push(
            Diagnostic::new(K::RemoteMismatch, region.loc, format!("{what} addresses another rank's memory"))
                .help("only the destination of a `put` may name another rank"),
        ),
        (RankSel::Local, true) => d.push(
            Diagnostic::new(K::RemoteMismatch, region.loc, format!("{what} must name its destination rank"))
                .help("write the destination as `tensor.on(rank)...`"),
        ),
        (RankSel::Local, false) => {}
    }
    // A put into an input has its one error above: the destination must be symmetric.
    let put_into_input = matches!((&region.rank, param.remote), (RankSel::Remote(_), true));
    if param.access.writes() && t.kind == TensorKind::Input && !put_into_input {
        d.push(
            Diagnostic::new(K::WriteToInput, region.loc, format!("{what} writes into input tensor `{}`", t.name))
                .help("inputs are read-only; write into an output or scratch tensor")
                .note(t.loc, format!("`{}` declared here", t.name)),
        );
    }
}

/// Tasks per core implied by the instance count alone: a rank's instances of one core kind
/// share its cores of that kind, so one of them runs at least their share, rounded up. Reported
/// here, before any scheduling; the table's own check still catches an uneven placement.
fn check_tasks_per_core(tf: &Taskflow, d: &mut Diagnostics) {
    for kind in [CoreKind::Aic, CoreKind::Aiv] {
        let cores = u64::from(tf.profile.count_of(kind));
        let per_rank =
            tf.families.iter().filter(|f| f.core == kind).try_fold(0u64, |acc, f| acc.checked_add(f.instances()?));
        let Some(per_rank) = per_rank else { continue };
        if cores == 0 || per_rank.div_ceil(cores) <= u64::from(limits::MAX_TASKS_PER_CORE) {
            continue;
        }
        d.push(
            Diagnostic::new(
                K::TooManyTasks,
                tf.loc,
                format!(
                    "the {per_rank} {} tile instances of each rank leave at least {} to one of its {}; a core's \
                     list holds at most {} (MAX_TASKS_PER_CORE)",
                    kind.name().to_uppercase(),
                    per_rank.div_ceil(cores),
                    count(
                        cores as usize,
                        &format!("{} core", kind.name().to_uppercase()),
                        &format!("{} cores", kind.name().to_uppercase())
                    ),
                    limits::MAX_TASKS_PER_CORE
                ),
            )
            .help("use larger tiles"),
        );
    }
}

/// `1 index`, `3 indices`.
fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Reports grid indices an expression mentions that the family does not have.
fn check_indices(f: &crate::model::TileFamily, e: &Affine, loc: Loc, d: &mut Diagnostics) {
    if let Some(i) = e.max_index()
        && usize::from(i) >= f.grid.len()
    {
        d.push(Diagnostic::new(
            K::UnknownIndex,
            loc,
            format!(
                "expression `{}` uses grid index #{i}, but tile `{}` has {} grid indices",
                e.display(&f.index_names()),
                f.name,
                f.grid.len()
            ),
        ));
    }
}

fn check_afters(
    tf: &Taskflow,
    f: &crate::model::TileFamily,
    families: &HashMap<&str, usize>,
    d: &mut Diagnostics,
) -> Vec<usize> {
    let mut out = Vec::new();
    for a in &f.after {
        let Some(&target) = families.get(a.family.as_str()) else {
            d.push(
                Diagnostic::new(
                    K::UnknownTile,
                    a.loc,
                    format!("tile `{}` runs after unknown tile `{}`", f.name, a.family),
                )
                .help(suggestion("tile", &a.family, tf.families.iter().map(|f| f.name.as_str()))),
            );
            continue;
        };
        let g = &tf.families[target];
        if a.indices.len() != g.grid.len() {
            d.push(Diagnostic::new(
                K::ArityMismatch,
                a.loc,
                format!(
                    "`after({}(..))` gives {}, but tile `{}` has {} ({})",
                    g.name,
                    count(a.indices.len(), "index", "indices"),
                    g.name,
                    count(g.grid.len(), "grid index", "grid indices"),
                    g.index_names().join(", ")
                ),
            ));
            continue;
        }
        for sel in &a.indices {
            match sel {
                IndexSel::At(e) => check_indices(f, e, a.loc, d),
                IndexSel::Range { start, end } => {
                    check_indices(f, start, a.loc, d);
                    check_indices(f, end, a.loc, d);
                }
                IndexSel::All => {}
            }
        }
        out.push(target);
    }
    out
}

/// Totals over the whole taskflow: instances on all ranks, and `after` edges.
fn check_totals(tf: &Taskflow, d: &mut Diagnostics) {
    let per_rank = tf.families.iter().try_fold(0u64, |acc, f| acc.checked_add(f.instances()?));
    let total = per_rank.and_then(|n| n.checked_mul(u64::from(tf.profile.ranks)));
    if total.is_none_or(|n| n > limits::MAX_INSTANCES) {
        d.push(
            Diagnostic::new(
                K::TooManyInstances,
                tf.loc,
                format!(
                    "taskflow `{}` expands to {} tile instances over {}; the limit is {} (MAX_INSTANCES)",
                    tf.name,
                    total.map_or_else(|| "more than 2^64".into(), |n| n.to_string()),
                    count(tf.profile.ranks as usize, "rank", "ranks"),
                    limits::MAX_INSTANCES
                ),
            )
            .help("use larger tiles"),
        );
    }
    // A grid or a taskflow over its own limit has its error already.
    let grids_fit = tf.families.iter().all(|f| f.instances().is_some_and(|n| n <= limits::MAX_FAMILY_INSTANCES));
    if grids_fit && total.is_some_and(|n| n <= limits::MAX_INSTANCES) {
        check_tasks_per_core(tf, d);
    }
    for f in &tf.families {
        for a in &f.after {
            let Some(g) = tf.family(&a.family) else { continue };
            let fanin = a.indices.iter().zip(&g.grid).try_fold(1u64, |acc, (sel, dim)| match sel {
                // A range inside the grid (or cut to it) selects at most the whole dimension.
                IndexSel::All | IndexSel::Range { .. } => acc.checked_mul(dim.extent),
                IndexSel::At(_) => Some(acc),
            });
            let edges = fanin
                .and_then(|n| n.checked_mul(f.instances()?))
                .and_then(|n| n.checked_mul(u64::from(tf.profile.ranks)));
            if edges.is_none_or(|n| n > limits::MAX_EDGES) {
                d.push(Diagnostic::new(
                    K::TooManyEdges,
                    a.loc,
                    format!(
                        "`after({}(..))` in tile `{}` adds more than {} edges (MAX_EDGES)",
                        g.name,
                        f.name,
                        limits::MAX_EDGES
                    ),
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::MachineProfile;

    /// A rank's instances of one core kind share its cores of that kind: when the count alone
    /// gives some core more than MAX_TASKS_PER_CORE entries, the error comes before scheduling.
    #[test]
    fn tasks_per_core_implied_by_the_instance_count_are_reported_before_scheduling() {
        let build = |aics: u32| {
            let mut t = Taskflow::new("t", MachineProfile::small(aics, 1));
            t.tile("many", CoreKind::Aic, |b| {
                b.grid("i", 70_000);
            });
            t
        };
        let d = check_structure(&build(1)).unwrap_err();
        assert_eq!(d.kinds(), vec![K::TooManyTasks], "{d}");
        assert_eq!(
            d.errors[0].message,
            "the 70000 AIC tile instances of each rank leave at least 70000 to one of its 1 AIC core; a core's list \
             holds at most 65535 (MAX_TASKS_PER_CORE)"
        );
        assert!(check_structure(&build(2)).is_ok());
    }
}
