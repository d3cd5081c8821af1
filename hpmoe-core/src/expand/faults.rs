//! Errors found while expanding, per instance, folded so that one wrong expression gives one
//! error with a count of the instances it hit: regions out of bounds or overflowing, puts to
//! ranks that do not exist, reads of data no earlier tile writes, `after` entries outside
//! their target's grid or waiting for the instance itself.

use super::access::RegionFault;
use super::plan::{Acc, ArgPlan};
use super::space::InstanceSpace;
use crate::error::{Diagnostic, Diagnostics, ErrorKind as K};
use crate::model::{Loc, TensorDecl};
use crate::resolve::Resolved;
use indexmap::IndexMap;

/// What an `after` selector picked when it was not inside the target's grid.
#[derive(Clone, Copy, Debug)]
pub(super) enum Selected {
    Overflow,
    Index(i64),
    Range(i64, i64),
    Backwards(i64, i64),
}

/// Which written thing a fault belongs to, beside its kind and place: faults of the same
/// site fold into one error.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Site {
    /// An argument of an op call: the family, the call in its body, the op's parameter.
    Arg { family: usize, call: usize, param: usize },
    /// One index of an `after` entry: the family, the entry's target family, the target's
    /// grid dimension.
    AfterIndex { family: usize, target: usize, dim: usize },
    /// An `after` entry as a whole: the family and the entry.
    After { family: usize, entry: usize },
}

impl Site {
    fn arg(plan: &ArgPlan<'_>) -> Self {
        Site::Arg { family: plan.family, call: plan.call, param: plan.param }
    }
}

/// Per-instance errors, folded so that one wrong expression gives one error with a count
/// and the first offending instance, not one error per instance.
#[derive(Default)]
pub(super) struct Faults {
    first: IndexMap<(K, Loc, Site), (Diagnostic, u64)>,
}

impl Faults {
    /// Whether no fault was counted.
    pub(super) fn is_empty(&self) -> bool {
        self.first.is_empty()
    }

    /// Counts a fault of `kind` at `loc` from `which`; only the first of each is kept.
    fn add(&mut self, kind: K, loc: Loc, which: Site, make: impl FnOnce() -> Diagnostic) {
        self.first.entry((kind, loc, which)).and_modify(|e| e.1 += 1).or_insert_with(|| (make(), 1));
    }

    pub(super) fn region(
        &mut self,
        r: &Resolved<'_>,
        plan: &ArgPlan<'_>,
        decl: &TensorDecl,
        coords: &[u64],
        rank: u32,
        fault: RegionFault,
    ) {
        let f = &r.tf.families[plan.family];
        let who = format!(
            "argument `{}` of `{}` in {} on rank {rank}",
            plan.spec.params[plan.param].name,
            plan.spec.name,
            f.instance_name(coords)
        );
        let loc = plan.region.loc;
        let which = Site::arg(plan);
        match fault {
            RegionFault::Overflow => self.add(K::Overflow, loc, which, || {
                Diagnostic::new(K::Overflow, loc, format!("{who}: a region expression overflows 64-bit arithmetic"))
            }),
            RegionFault::OutOfBounds { dim, start, len, extent } => self.add(K::RegionOutOfBounds, loc, which, || {
                Diagnostic::new(
                    K::RegionOutOfBounds,
                    loc,
                    format!(
                        "{who} is out of bounds: dimension {dim} of `{}` is {start}..{} but the tensor has {extent}",
                        decl.name,
                        start.saturating_add(len as i64)
                    ),
                )
            }),
            RegionFault::RankOutOfRange(d) => self.add(K::RankOutOfRange, loc, which, || {
                Diagnostic::new(
                    K::RankOutOfRange,
                    loc,
                    format!("{who} puts to rank {d}, but ranks are 0..{}", r.tf.profile.ranks),
                )
                .help("wrap the destination with `% RANKS`, or bound the grid index by RANKS")
            }),
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn unwritten(
        &mut self,
        r: &Resolved<'_>,
        plan: &ArgPlan<'_>,
        decl: &TensorDecl,
        space: &InstanceSpace,
        acc: &Acc,
        rank: u32,
        covered: u64,
    ) {
        let f = &r.tf.families[plan.family];
        let coords = space.coords_of_local(space.local_of(acc.node));
        let loc = plan.region.loc;
        self.add(K::UnwrittenRead, loc, Site::arg(plan), || {
            let what = if covered == 0 { "nothing" } else { "only part of it is" };
            Diagnostic::new(
                K::UnwrittenRead,
                loc,
                format!(
                    "{} on rank {rank} reads {} `{}`{} but {what} written by a tile declared before `{}`",
                    f.instance_name(&coords),
                    decl.kind.name(),
                    decl.name,
                    acc.ext,
                    f.name
                ),
            )
            .help(format!("write `{}` in an earlier tile, or declare it as an input", decl.name))
        });
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn after(
        &mut self,
        tf: &crate::model::Taskflow,
        fi: usize,
        target: usize,
        loc: Loc,
        coords: &[u64],
        rank: u32,
        k: usize,
        selected: Selected,
    ) {
        let (f, g) = (&tf.families[fi], &tf.families[target]);
        self.add(K::AfterOutOfRange, loc, Site::AfterIndex { family: fi, target, dim: k }, || {
            let outside = format!("outside 0..{}", g.grid[k].extent);
            let shown = match selected {
                Selected::Overflow => "overflows".to_string(),
                Selected::Index(v) => format!("is {v}, {outside}"),
                Selected::Range(lo, hi) => format!("is {lo}..{hi}, {outside}"),
                Selected::Backwards(lo, hi) => format!("is {lo}..{hi}, whose start is past its end"),
            };
            let d = Diagnostic::new(
                K::AfterOutOfRange,
                loc,
                format!(
                    "in {} on rank {rank}, index `{}` of `after({}(..))` {shown}",
                    f.instance_name(coords),
                    g.grid[k].name,
                    g.name,
                ),
            );
            let keep = format!("keep this index in 0..{}", g.grid[k].extent);
            match selected {
                Selected::Index(_) | Selected::Range(..) if f.grid.is_empty() => d.help(keep),
                Selected::Index(_) | Selected::Range(..) => d.help(format!(
                    "only a tile's `after` on itself (a chain such as `after({})`) may point outside the grid, \
                     where it means no dependency; {keep}",
                    f.chain_entry(f.grid.len() - 1),
                )),
                Selected::Overflow | Selected::Backwards(..) => d,
            }
        });
    }

    /// An `after` entry of a family on itself that selects the instance itself.
    pub(super) fn after_itself(
        &mut self,
        tf: &crate::model::Taskflow,
        fi: usize,
        entry: usize,
        loc: Loc,
        coords: &[u64],
        rank: u32,
    ) {
        let f = &tf.families[fi];
        self.add(K::Cycle, loc, Site::After { family: fi, entry }, || {
            let d = Diagnostic::new(
                K::Cycle,
                loc,
                format!("`after({}(..))` makes {} on rank {rank} wait for itself", f.name, f.instance_name(coords)),
            );
            if f.grid.is_empty() {
                d.help(format!("tile `{}` has one instance per rank, which cannot run after itself", f.name))
            } else {
                d.help(format!(
                    "select other instances of `{}`: `after({})` runs each instance after the one before it along `{}`",
                    f.name,
                    f.chain_entry(f.grid.len() - 1),
                    f.grid[f.grid.len() - 1].name
                ))
            }
        });
    }

    pub(super) fn report(self, out: &mut Diagnostics) {
        for (_, (mut d, count)) in self.first {
            if count > 1 {
                d.message.push_str(&format!(" (and {} more instances)", count - 1));
            }
            out.push(d);
        }
    }
}
