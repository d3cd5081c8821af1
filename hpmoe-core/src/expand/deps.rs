//! Builds the instance DAG.
//!
//! Data dependencies follow declaration order: an access that reads a region depends on
//! every write of an overlapping region by an instance of a tile family declared *before*
//! its own (on the rank whose memory it is, so a put from rank s feeds readers on its
//! destination rank) — unless a *fence* stands between them: an access that reads and writes in
//! place for an op that only orders ([`WorkModel::Order`], the built-in `fence`), of a family
//! declared after the writer's and before the reader's, covering all the two share. The fence
//! depends on the write and the reader on the fence, so the direct edge adds nothing, and
//! leaving it out lets one fence relay many puts to many readers. Writes that overlap a read
//! of an earlier family, writes that overlap other writes, and conflicting instances of one
//! family are returned as [`Hazard`]s: the ordering check requires each to be ordered by a path
//! in the DAG.
//!
//! Overlap is found per tensor and per rank with a [`BoxIndex`] of the writes (interval
//! indexes nested dimension by dimension), then confirmed on every dimension; no instance is
//! compared with every other.

use super::Expanded;
use super::access::{Extent, eval_region};
use super::boxes::BoxIndex;
use super::faults::Faults;
use super::plan::{Acc, ArgPlan};
use super::space::{InstanceSpace, decode};
use super::work::family_work;
use crate::error::{Diagnostic, Diagnostics, ErrorKind as K};
use crate::graph::Dag;
use crate::ids::{IdVec, NodeId, RankId};
use crate::limits;
use crate::model::{Access, Loc, TensorDecl, WorkModel};
use crate::resolve::Resolved;

mod after;
mod replicate;

/// What kind of order a hazard needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HazardKind {
    /// `first` reads what `second` (a later family) overwrites: `first` must come first.
    WriteAfterRead,
    /// `first` (an earlier family) and `second` write the same data: `first` must come first.
    WriteAfterWrite,
    /// Two instances of one family conflict (at least one writes): either order, but one.
    SameFamily,
}

/// A pair of instances that must be ordered by a path in the DAG.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Hazard {
    pub kind: HazardKind,
    pub first: NodeId,
    pub second: NodeId,
    pub first_loc: Loc,
    pub second_loc: Loc,
    pub tensor: u32,
    /// The rank whose copy of the tensor both touch.
    pub rank: RankId,
    pub overlap: Extent,
}

/// The expanded taskflow, the hazards to check, and the errors found while expanding.
#[derive(Debug)]
pub struct Expansion {
    pub expanded: Expanded,
    pub hazards: Vec<Hazard>,
    pub diagnostics: Diagnostics,
}

/// Expands every family on every rank and builds the DAG. Expects a taskflow that passed
/// the structural checks.
pub fn expand(r: &Resolved<'_>) -> Expansion {
    expand_with(r, TWO_THREADS_FROM, true).0
}

/// [`expand`], linking the tensors on two threads from `two_threads_from` accesses on, and
/// linking a tensor every rank accesses alike once when `copy_ranks` ([`replicate`]; the same
/// result either way); with the number of tensors linked so.
fn expand_with(r: &Resolved<'_>, two_threads_from: u64, copy_ranks: bool) -> (Expansion, u32) {
    let tf = r.tf;
    let ranks = tf.profile.ranks;
    let space = InstanceSpace::new(ranks, tf.families.iter().map(|f| f.grid.iter().map(|g| g.extent as u32).collect()));
    let mut b = Builder {
        r,
        space,
        edges: Vec::new(),
        hazards: Vec::new(),
        faults: Faults::default(),
        pairs: 0,
        per_rank: Vec::new(),
        copy_ranks,
        copied_tensors: 0,
    };

    let mut by_tensor: Vec<Vec<ArgPlan<'_>>> = vec![Vec::new(); tf.tensors.len()];
    for (fi, f) in tf.families.iter().enumerate() {
        for (ci, (call, resolved)) in f.body.iter().zip(&r.calls[fi]).enumerate() {
            for (param, (region, &t)) in call.args.iter().zip(&resolved.tensors).enumerate() {
                let access = resolved.spec.params[param].access;
                by_tensor[t].push(ArgPlan { family: fi, call: ci, access, region, spec: resolved.spec, param });
            }
        }
        // The guard's count is read before the body; the checks keep the tile from writing it,
        // so its position among the calls only keeps fault messages apart.
        if let (Some(g), Some(resolved)) = (&f.guard, &r.guards[fi]) {
            let (spec, t) = (resolved.spec, resolved.tensors[0]);
            by_tensor[t].push(ArgPlan {
                family: fi,
                call: f.body.len(),
                access: Access::Read,
                region: &g.count,
                spec,
                param: 0,
            });
        }
    }
    b.all_tensor_dependencies(&by_tensor, two_threads_from);
    b.explicit_edges();

    let mut diagnostics = Diagnostics::default();
    if b.over_budget() {
        diagnostics.push(
            Diagnostic::new(
                K::TooManyEdges,
                tf.loc,
                format!(
                    "taskflow `{}` has more than {} overlapping region pairs or dependency edges (MAX_EDGES)",
                    tf.name,
                    limits::MAX_EDGES
                ),
            )
            .help("tiles whose regions overlap many others make quadratic dependencies; use disjoint regions"),
        );
    }
    let rotation = b.rotations();
    let family_work = tf.families.iter().enumerate().map(|(fi, f)| family_work(r, fi, f)).collect();
    let family_core = tf.families.iter().map(|f| f.core).collect();
    let Builder { space, edges, mut hazards, faults, copied_tensors, .. } = b;
    faults.report(&mut diagnostics);
    let sort_hazards = move || {
        hazards.sort_unstable_by_key(|h| (h.first, h.second, h.kind));
        hazards.dedup_by_key(|h| (h.first, h.second, h.kind));
        hazards
    };
    // The hazards are sorted beside building the DAG on a large taskflow: they are independent.
    let (dag, hazards) = if edges.len() as u64 >= two_threads_from {
        std::thread::scope(|s| {
            let hazards = s.spawn(sort_hazards);
            let dag = Dag::from_pairs(space.len(), &edges);
            (dag, hazards.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
        })
    } else {
        (Dag::from_pairs(space.len(), &edges), sort_hazards())
    };
    drop(edges);
    let expanded = Expanded { space, dag, family_core, family_work, rotation };
    (Expansion { expanded, hazards, diagnostics }, copied_tensors)
}

struct Builder<'r, 'a> {
    r: &'r Resolved<'a>,
    space: InstanceSpace,
    edges: Vec<(NodeId, NodeId)>,
    hazards: Vec<Hazard>,
    faults: Faults,
    /// Overlapping pairs examined plus edges made; bounded by MAX_EDGES.
    pairs: u64,
    /// Per rank: the accesses to the current tensor that land on it. Kept from tensor to
    /// tensor, so that their memory is fresh (faulted in and zeroed by the kernel) once, not
    /// once per tensor: at 10^6 instances a quarter of the plan's page faults were here.
    per_rank: Vec<Vec<Acc>>,
    /// Link a tensor every rank accesses alike once, for rank 0 ([`replicate`]).
    copy_ranks: bool,
    /// Tensors linked that way.
    copied_tensors: u32,
}

/// From this many accesses (all tensors, all ranks) on, [`expand`] links the tensors on two
/// threads ([`Builder::all_tensor_dependencies`]); below it a thread costs more than it saves.
const TWO_THREADS_FROM: u64 = 1 << 16;

impl Builder<'_, '_> {
    fn over_budget(&self) -> bool {
        self.pairs > limits::MAX_EDGES
    }

    /// [`Self::tensor_dependencies`] of every tensor in order (tensor `t`'s plans are
    /// `by_tensor[t]`), stopping once over budget.
    ///
    /// The tensors are independent, so from `two_threads_from` accesses on the later ones (about half the
    /// accesses) are linked on a second thread into a builder of their own, whose edges and
    /// hazards are then appended to this one's: the same lists, in the same order, as one
    /// thread makes. When either thread found a fault or the two together went over budget,
    /// the result is thrown away and the tensors are linked again on this thread alone, so
    /// that which faults are reported, with which first instance, and where the budget stops
    /// never depends on the split.
    fn all_tensor_dependencies(&mut self, by_tensor: &[Vec<ArgPlan<'_>>], two_threads_from: u64) {
        let ranks = u64::from(self.r.tf.profile.ranks);
        // What linking a tensor costs: its accesses on every rank, or on one when the
        // other ranks copy rank 0's links.
        let weight: Vec<u64> = by_tensor
            .iter()
            .map(|plans| {
                let copies = if self.copy_ranks && replicate::same_on_every_rank(plans) { 1 } else { ranks };
                plans.iter().map(|p| u64::from(self.space.families[p.family].count) * copies).sum()
            })
            .collect();
        let total: u64 = weight.iter().sum();
        if total >= two_threads_from && by_tensor.len() >= 2 {
            // The first tensor from which the accesses before it reach half the total.
            let mut before = 0u64;
            let split = weight
                .iter()
                .position(|&w| {
                    before += w;
                    2 * before >= total
                })
                .map_or(by_tensor.len(), |i| i + 1)
                .clamp(1, by_tensor.len() - 1);
            let mut second = Builder {
                r: self.r,
                space: self.space.clone(),
                edges: Vec::new(),
                hazards: Vec::new(),
                faults: Faults::default(),
                pairs: 0,
                per_rank: Vec::new(),
                copy_ranks: self.copy_ranks,
                copied_tensors: 0,
            };
            let second = std::thread::scope(|s| {
                let later = s.spawn(move || {
                    second.link_tensors(by_tensor, split..by_tensor.len());
                    second
                });
                self.link_tensors(by_tensor, 0..split);
                later.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            });
            if self.faults.is_empty() && second.faults.is_empty() && self.pairs + second.pairs <= limits::MAX_EDGES {
                let Builder { mut edges, mut hazards, pairs, copied_tensors, .. } = second;
                self.edges.append(&mut edges);
                self.hazards.append(&mut hazards);
                self.pairs += pairs;
                self.copied_tensors += copied_tensors;
                return;
            }
            self.edges.clear();
            self.hazards.clear();
            self.faults = Faults::default();
            self.pairs = 0;
            self.copied_tensors = 0;
        }
        self.link_tensors(by_tensor, 0..by_tensor.len());
    }

    /// [`Self::tensor_dependencies`] of the tensors `range`, in order, stopping once over budget.
    fn link_tensors(&mut self, by_tensor: &[Vec<ArgPlan<'_>>], range: std::ops::Range<usize>) {
        for t in range {
            if self.over_budget() {
                break;
            }
            self.tensor_dependencies(t, &by_tensor[t]);
        }
    }

    /// Evaluates every access to tensor `t` and links writers to readers, rank by rank (or
    /// rank 0 only, copied to the others, when every rank accesses the tensor alike: see
    /// [`replicate`]).
    fn tensor_dependencies(&mut self, t: usize, plans: &[ArgPlan<'_>]) {
        if self.copy_ranks && replicate::same_on_every_rank(plans) && self.link_every_rank_as_rank_0(t, plans) {
            return;
        }
        let tf = self.r.tf;
        let decl = &tf.tensors[t];
        let ranks = tf.profile.ranks;
        // Most accesses land on their own rank's copy: reserving one rank's share up front
        // saves the copies of growing these vectors (at 10^6 instances, tens of megabytes).
        let per_rank_accesses: usize = plans.iter().map(|p| self.space.families[p.family].count as usize).sum();
        let mut per_rank = std::mem::take(&mut self.per_rank);
        per_rank.resize_with(ranks as usize, Vec::new);
        for accs in &mut per_rank {
            accs.clear();
            accs.reserve(per_rank_accesses);
        }
        for (pi, plan) in plans.iter().enumerate() {
            for rank in 0..ranks {
                self.accesses(pi, plan, decl, rank, |dest, acc| per_rank[dest as usize].push(acc));
            }
        }
        for (rank, accs) in per_rank.iter().enumerate() {
            self.link_rank(t, rank as u32, decl, plans, accs);
            if self.over_budget() {
                break;
            }
        }
        self.per_rank = per_rank;
    }

    /// Evaluates plan `pi`'s region at every instance of its family on `rank`: each access to
    /// `push` with the rank whose copy it lands on, in instance order; each fault reported.
    fn accesses(
        &mut self,
        pi: usize,
        plan: &ArgPlan<'_>,
        decl: &TensorDecl,
        rank: u32,
        mut push: impl FnMut(u32, Acc),
    ) {
        let span = &self.space.families[plan.family];
        let ranks = self.r.tf.profile.ranks;
        for idx in 0..span.count {
            let coords = decode(idx, &span.extents);
            match eval_region(plan.region, &decl.shape, &coords, rank, ranks) {
                Ok((dest, ext)) => push(
                    dest,
                    Acc {
                        node: self.space.node(RankId::new(rank), span.first + idx),
                        family: plan.family as u32,
                        call: plan.call as u32,
                        plan: pi as u32,
                        access: plan.access,
                        ext,
                    },
                ),
                Err(fault) => self.faults.region(self.r, plan, decl, &coords, rank, fault),
            }
        }
    }

    fn link_rank(&mut self, t: usize, rank: u32, decl: &TensorDecl, plans: &[ArgPlan<'_>], accs: &[Acc]) {
        let writers: Vec<u32> = (0..accs.len() as u32).filter(|&i| accs[i as usize].access.writes()).collect();
        // Writers are visited in the order of their interval on the key dimension (then their
        // index): the order the edges, hazards and messages have always been made in.
        let key = key_dimension(accs, &writers);
        let mut order = writers.clone();
        order.sort_unstable_by_key(|&w| (accs[w as usize].ext.start[key], accs[w as usize].ext.end(key), w));
        let mut rank_of = vec![0u32; accs.len()];
        for (i, &w) in order.iter().enumerate() {
            rank_of[w as usize] = i as u32;
        }
        let items: Vec<(Extent, u32)> = writers.iter().map(|&w| (accs[w as usize].ext, w)).collect();
        let index = BoxIndex::new(&items);
        let loc = |a: &Acc| plans[a.plan as usize].region.loc;
        let mut hits = Vec::new();
        let mut fences: Vec<(u32, Extent)> = Vec::new();
        for (ri, reader) in accs.iter().enumerate() {
            hits.clear();
            index.candidates(&reader.ext, &items, &mut |w| hits.push(w));
            hits.sort_unstable_by_key(|&w| rank_of[w as usize]);
            if reader.access.reads() {
                fences_before(accs, plans, &hits, reader, &mut fences);
            }
            let mut covered = 0u64;
            for &wi in &hits {
                let w = &accs[wi as usize];
                if !w.ext.overlaps(&reader.ext) {
                    continue;
                }
                if w.node == reader.node {
                    // Within one tile, ops run in body order.
                    if w.call < reader.call && reader.access.reads() {
                        covered += w.ext.intersection_volume(&reader.ext);
                    }
                    continue;
                }
                self.pairs += 1;
                let hazard = |kind, first: &Acc, second: &Acc| Hazard {
                    kind,
                    first: first.node,
                    second: second.node,
                    first_loc: loc(first),
                    second_loc: loc(second),
                    tensor: t as u32,
                    rank: RankId::new(rank),
                    overlap: first.ext.intersection(&second.ext),
                };
                if reader.access.reads() {
                    if w.family < reader.family {
                        if !hidden_by_fence(&fences, w, reader) {
                            self.edges.push((w.node, reader.node));
                        }
                        covered += w.ext.intersection_volume(&reader.ext);
                    } else if w.family == reader.family {
                        covered += w.ext.intersection_volume(&reader.ext);
                        self.hazards.push(hazard(HazardKind::SameFamily, w, reader));
                    } else {
                        self.hazards.push(hazard(HazardKind::WriteAfterRead, reader, w));
                    }
                }
                // Write-write pairs, each once (from the writer with the smaller index).
                if reader.access.writes() && (ri as u32) < wi {
                    if w.family == reader.family {
                        self.hazards.push(hazard(HazardKind::SameFamily, reader, w));
                    } else {
                        let (early, late) = if reader.family < w.family { (reader, w) } else { (w, reader) };
                        // A later read-modify-write already depends on the earlier write.
                        if !late.access.reads() {
                            self.hazards.push(hazard(HazardKind::WriteAfterWrite, early, late));
                        }
                    }
                }
            }
            if reader.access.reads() && decl.kind.needs_writer() && covered < reader.ext.volume() {
                let plan = &plans[reader.plan as usize];
                self.faults.unwritten(self.r, plan, decl, &self.space, reader, rank, covered);
            }
        }
    }

    /// Per node, `(dst - rank) mod ranks` of the first remote write of its family.
    fn rotations(&self) -> IdVec<NodeId, u32> {
        let tf = self.r.tf;
        let ranks = tf.profile.ranks;
        let mut rotation = IdVec::filled(self.space.len(), 0u32);
        for (fi, f) in tf.families.iter().enumerate() {
            let Some(dst) = f.body.iter().flat_map(|c| &c.args).find_map(|a| match &a.rank {
                crate::model::RankSel::Remote(e) => Some(e),
                crate::model::RankSel::Local => None,
            }) else {
                continue;
            };
            let span = &self.space.families[fi];
            for rank in 0..ranks {
                for idx in 0..span.count {
                    let coords = decode(idx, &span.extents);
                    if let Ok(d) = dst.eval(&coords, u64::from(rank))
                        && (0..i64::from(ranks)).contains(&d)
                    {
                        let node = self.space.node(RankId::new(rank), span.first + idx);
                        rotation[node] = (d as u32 + ranks - rank) % ranks;
                    }
                }
            }
        }
        rotation
    }
}

/// The fences (accesses of an op whose work is [`WorkModel::Order`]) among `hits` that
/// `reader` reads after: of an earlier family than its own, overlapping what it reads. Each as
/// (family, extent), into `out`.
fn fences_before(accs: &[Acc], plans: &[ArgPlan<'_>], hits: &[u32], reader: &Acc, out: &mut Vec<(u32, Extent)>) {
    out.clear();
    out.extend(hits.iter().map(|&f| &accs[f as usize]).filter_map(|f| {
        let fence = plans[f.plan as usize].spec.work == WorkModel::Order && f.access.reads();
        (fence && f.family < reader.family && f.ext.overlaps(&reader.ext)).then_some((f.family, f.ext))
    }));
}

/// Whether the read-after-write edge `w → reader` is implied by a fence: one of `fences`, of a
/// family between theirs, covers all they share. The fence is itself a reader and writer of that
/// data, so it depends on `w` and `reader` depends on it: the path `w → fence → reader` orders them.
fn hidden_by_fence(fences: &[(u32, Extent)], w: &Acc, reader: &Acc) -> bool {
    if fences.is_empty() {
        return false;
    }
    let shared = w.ext.intersection(&reader.ext);
    fences.iter().any(|(family, ext)| w.family < *family && ext.intersection_volume(&shared) == shared.volume())
}

/// The dimension along which the writers' intervals are the most distinct.
fn key_dimension(accs: &[Acc], writers: &[u32]) -> usize {
    let Some(&first) = writers.first() else { return 0 };
    let dims = accs[first as usize].ext.dims as usize;
    let mut best = (0usize, 0usize);
    let mut starts: Vec<u32> = Vec::with_capacity(writers.len());
    for k in 0..dims {
        starts.clear();
        starts.extend(writers.iter().map(|&w| accs[w as usize].ext.start[k]));
        starts.sort_unstable();
        starts.dedup();
        if starts.len() > best.1 {
            best = (k, starts.len());
        }
    }
    best.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{CoreKind, DType, MachineProfile, Taskflow};

    /// Two families per rank copying `a` into a scratch `b` and `b` into `c`, a third family
    /// rewriting `c` (write-after-write hazards) and one of the same family overlapping itself;
    /// with `fault`, the third reads one row past `b`'s end and a fourth reads a scratch nothing
    /// writes.
    fn four_tensors(fault: bool) -> Taskflow {
        let mut t = Taskflow::new("t", MachineProfile::small(2, 1));
        let a = t.input("a", DType::F32, &[32, 4]);
        let b = t.scratch("b", DType::F32, &[32, 4]);
        let c = t.output("c", DType::F32, &[32, 4]);
        let d = t.scratch("d", DType::F32, &[32, 4]);
        t.tile("ab", CoreKind::Aiv, |tb| {
            let i = tb.grid("i", 32);
            tb.op("copy", [a.at(i.clone()), b.at(i)]);
        });
        t.tile("bc", CoreKind::Aiv, |tb| {
            let i = tb.grid("i", 32);
            tb.op("copy", [b.at(i.clone()), c.at(i)]);
        });
        t.tile("again", CoreKind::Aiv, |tb| {
            let i = tb.grid("i", 31);
            let row = if fault { i.clone() + 2 } else { i.clone() + 1 };
            tb.op("copy", [b.at(row), c.slice(i, 2)]);
        });
        if fault {
            t.tile("unwritten", CoreKind::Aiv, |tb| {
                let i = tb.grid("i", 32);
                tb.op("copy", [d.at(i.clone()), b.at(i)]);
            });
        }
        t
    }

    /// Linking the tensors on two threads gives the one-thread DAG, hazards and errors, with
    /// and without faults (which make it link again on one).
    #[test]
    fn two_threads_link_as_one_does() {
        for fault in [false, true] {
            let tf = four_tensors(fault);
            let r = crate::resolve::check_structure(&tf).unwrap();
            let of = |two_threads_from| {
                let (e, _) = expand_with(&r, two_threads_from, true);
                (e.expanded.dag, e.hazards, e.diagnostics)
            };
            let one = of(u64::MAX);
            assert_eq!(one, of(0), "fault: {fault}");
            assert!(one.0.edges() > 0 && !one.1.is_empty());
            assert_eq!(one.2.errors.is_empty(), !fault, "{}", one.2);
        }
    }
}
