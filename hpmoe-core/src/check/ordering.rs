//! Write-after-read and write-after-write hazards must be ordered by a path in the DAG.
//!
//! Each hazard names two instances; the check asks whether one reaches the other. A direct
//! edge answers most. The rest are grouped by source and answered by one forward search per
//! source, pruned by topological position (a node later than every target cannot lead to
//! one), within a visit budget: exceeding it is an error, never a hang.

use super::node_name;
use crate::error::{Capped, Diagnostic, Diagnostics, ErrorKind as K};
use crate::expand::{Expanded, Hazard, HazardKind};
use crate::ids::{IdVec, NodeId};
use crate::limits::MAX_HAZARD_VISITS;
use crate::model::Taskflow;
use std::num::NonZeroU32;

/// Reports every hazard whose instances are not ordered. `topo_pos[n]` is the position of
/// node `n` in a topological order of `exp.dag` (so the DAG must be acyclic).
pub fn check_ordering(tf: &Taskflow, exp: &Expanded, hazards: &[Hazard], topo_pos: &IdVec<NodeId, u32>) -> Diagnostics {
    check_ordering_within(tf, exp, hazards, topo_pos, MAX_HAZARD_VISITS)
}

/// [`check_ordering`] with an explicit visit budget.
fn check_ordering_within(
    tf: &Taskflow,
    exp: &Expanded,
    hazards: &[Hazard],
    topo_pos: &IdVec<NodeId, u32>,
    budget: u64,
) -> Diagnostics {
    let dag = &exp.dag;
    // (source, target, hazard index) pairs still to search for.
    let mut open: Vec<(NodeId, NodeId, u32)> = Vec::new();
    let mut failed: Vec<u32> = Vec::new();
    for (i, h) in hazards.iter().enumerate() {
        let (a, b) = match h.kind {
            HazardKind::SameFamily if topo_pos[h.second] < topo_pos[h.first] => (h.second, h.first),
            _ => (h.first, h.second),
        };
        if topo_pos[a] > topo_pos[b] {
            failed.push(i as u32);
        } else if dag.succ.row(a).binary_search(&b).is_err() {
            open.push((a, b, i as u32));
        }
    }
    open.sort_unstable();
    let mut out = Diagnostics::default();
    // The last search (generation) that reached each node; `None` before any did. A
    // `NonZeroU32` keeps the table at 4 bytes a node.
    let mut stamp: IdVec<NodeId, Option<NonZeroU32>> = IdVec::filled(exp.nodes(), None);
    let mut stack = Vec::new();
    let mut visits = 0u64;
    let mut group_start = 0;
    let mut generation = NonZeroU32::MIN;
    while group_start < open.len() {
        let src = open[group_start].0;
        let group_end = group_start + open[group_start..].partition_point(|p| p.0 == src);
        let horizon = open[group_start..group_end].iter().map(|p| topo_pos[p.1]).max().unwrap_or(0);
        stack.clear();
        stack.push(src);
        stamp[src] = Some(generation);
        while let Some(n) = stack.pop() {
            visits += 1;
            for &m in dag.succ.row(n) {
                if stamp[m] != Some(generation) && topo_pos[m] <= horizon {
                    stamp[m] = Some(generation);
                    stack.push(m);
                }
            }
        }
        if visits > budget {
            out.push(Diagnostic::new(
                K::CheckBudget,
                tf.loc,
                format!(
                    "checking that conflicting accesses are ordered took more than {budget} steps \
                     (MAX_HAZARD_VISITS); {} pairs were left unchecked",
                    open.len() - group_end
                ),
            ));
            break;
        }
        failed.extend(open[group_start..group_end].iter().filter(|p| stamp[p.1] != Some(generation)).map(|p| p.2));
        // One generation per source node of a hazard, and hazards are `u32`-indexed.
        generation = generation.checked_add(1).expect("fewer searches than hazards");
        group_start = group_end;
    }
    failed.sort_unstable();
    let (accumulations, others): (Vec<u32>, Vec<u32>) =
        failed.iter().partition(|&&i| super::accumulation::is_accumulation(tf, exp, &hazards[i as usize]));
    super::accumulation::report(tf, exp, hazards, &accumulations, &mut out);
    report(tf, exp, hazards, &others, &mut out);
    out
}

fn report(tf: &Taskflow, exp: &Expanded, hazards: &[Hazard], failed: &[u32], out: &mut Diagnostics) {
    let name = |n| node_name(tf, &exp.space, n);
    for kind in [HazardKind::WriteAfterWrite, HazardKind::WriteAfterRead, HazardKind::SameFamily] {
        let code = match kind {
            HazardKind::WriteAfterRead => K::UnorderedWriteAfterRead,
            _ => K::UnorderedWriteAfterWrite,
        };
        let mut capped = Capped::new(out, code);
        // One error per pair of places in the source (the first pair of instances found,
        // and how many more there are), as for faults of one expression.
        let mut groups: Vec<(&Hazard, usize)> = Vec::new();
        let mut index: std::collections::HashMap<(crate::model::Loc, crate::model::Loc), usize> = Default::default();
        for h in failed.iter().map(|&i| &hazards[i as usize]).filter(|h| h.kind == kind) {
            match index.entry((h.first_loc, h.second_loc)) {
                std::collections::hash_map::Entry::Occupied(e) => groups[*e.get()].1 += 1,
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(groups.len());
                    groups.push((h, 0));
                }
            }
        }
        for (h, more) in groups {
            let t = &tf.tensors[h.tensor as usize];
            let place = format!("`{}`{} on rank {}", t.name, h.overlap, h.rank);
            let (a, b) = (name(h.first), name(h.second));
            let fa = &tf.families[exp.space.family_of(h.first)].name;
            let fb = &tf.families[exp.space.family_of(h.second)].name;
            let d = match kind {
                HazardKind::WriteAfterRead => Diagnostic::new(
                    code,
                    h.second_loc,
                    format!("unordered write after read: {b} may overwrite {place} before {a} reads it"),
                )
                .help(format!("make `{fb}` wait for the reader with `after({fa}(..))`, or write another region"))
                .note(h.first_loc, format!("{a} reads it here")),
                HazardKind::WriteAfterWrite => Diagnostic::new(
                    code,
                    h.second_loc,
                    format!("unordered write after write: {a} and {b} both write {place} with no order between them"),
                )
                .help(format!("order the writes with `after({fa}(..))` in `{fb}`, or write disjoint regions"))
                .note(h.first_loc, format!("{a} writes it here")),
                HazardKind::SameFamily => Diagnostic::new(
                    code,
                    h.second_loc,
                    format!(
                        "unordered conflict inside tile `{fa}`: {a} and {b} both access {place} and at least one \
                         writes it"
                    ),
                )
                .help(same_family_help(tf, exp, h)),
            };
            capped.push(match more {
                0 => d,
                n => Diagnostic { message: format!("{} (and {n} more pairs)", d.message), ..d },
            });
        }
    }
}

/// How to order two conflicting instances of one family: a chain along a grid dimension in
/// which they differ (`after(f(e, s - 1))`), which no `after` can do across ranks.
fn same_family_help(tf: &Taskflow, exp: &Expanded, h: &Hazard) -> String {
    let space = &exp.space;
    let f = &tf.families[space.family_of(h.first)];
    if space.rank_of(h.first) != space.rank_of(h.second) {
        return "the two instances run on different ranks, which `after` does not order: make their regions \
                disjoint"
            .to_string();
    }
    let a = space.coords_of_local(space.local_of(h.first));
    let b = space.coords_of_local(space.local_of(h.second));
    match (0..f.grid.len()).find(|&k| a.get(k) != b.get(k)) {
        Some(k) => format!(
            "instances of one tile run in parallel: make their regions disjoint, or chain them along `{}` with \
             `after({})` in `{}`",
            f.grid[k].name,
            f.chain_entry(k),
            f.name
        ),
        None => "instances of one tile run in parallel: make their regions disjoint".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{CoreKind, DType, IndexSel, MachineProfile};

    /// `a` writes `h`; `b` reads it; `c` overwrites it after `b` through a chain of
    /// `after`s, so the write-after-read pair (b, c) is only ordered through `mid`.
    fn chained() -> Taskflow {
        let mut tf = Taskflow::new("t", MachineProfile::small(1, 1));
        let x = tf.input("x", DType::Bf16, &[8]);
        let h = tf.scratch("h", DType::Bf16, &[8]);
        let y = tf.output("y", DType::Bf16, &[8]);
        tf.tile("a", CoreKind::Aiv, |t| t.op("copy", [x.whole(), h.whole()]));
        tf.tile("b", CoreKind::Aiv, |t| t.op("copy", [h.whole(), y.whole()]));
        tf.tile("mid", CoreKind::Aiv, |t| t.after("b", Vec::<IndexSel>::new()));
        tf.tile("c", CoreKind::Aiv, |t| {
            t.op("copy", [x.whole(), h.whole()]);
            t.after("mid", []);
        });
        tf
    }

    fn run(tf: &Taskflow, budget: u64) -> Diagnostics {
        let resolved = crate::resolve::check_structure(tf).unwrap();
        let e = crate::expand::expand(&resolved);
        let order = e.expanded.dag.topo_order().unwrap();
        let mut pos = IdVec::filled(order.len(), 0);
        for (i, &n) in order.iter().enumerate() {
            pos[n] = i as u32;
        }
        check_ordering_within(tf, &e.expanded, &e.hazards, &pos, budget)
    }

    #[test]
    fn ordering_through_a_path_is_found() {
        assert!(run(&chained(), MAX_HAZARD_VISITS).is_empty());
    }

    #[test]
    fn running_out_of_budget_is_an_error_not_a_hang() {
        let d = run(&chained(), 0);
        assert_eq!(d.kinds(), vec![K::CheckBudget]);
        assert_eq!(
            d.errors[0].message,
            "checking that conflicting accesses are ordered took more than 0 steps (MAX_HAZARD_VISITS); 1 pairs were left unchecked"
        );
    }
}
