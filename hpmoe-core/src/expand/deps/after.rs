//! Explicit `after(...)` edges: an entry selects instances of a family on the same rank.

use super::Builder;
use crate::expand::faults::Selected;
use crate::expand::space::decode;
use crate::ids::RankId;
use crate::model::IndexSel;
use smallvec::SmallVec;

impl Builder<'_, '_> {
    /// `after(...)` edges, on the same rank. An entry naming the family itself chains its
    /// instances: what it selects outside the grid is dropped (the ends of the chain), and
    /// selecting the instance itself is an error. Any other entry must stay inside the grid.
    pub(super) fn explicit_edges(&mut self) {
        let tf = self.r.tf;
        for (fi, f) in tf.families.iter().enumerate() {
            for (ai, (a, &target)) in f.after.iter().zip(&self.r.afters[fi]).enumerate() {
                let own = target == fi;
                let span = self.space.families[fi].clone();
                let tspan = self.space.families[target].clone();
                // An entry that makes an instance wait for itself is reported once and adds no
                // edge at all, so its other instances do not also report a cycle.
                let mut entry_edges = Vec::new();
                let mut entry_waits_for_itself = false;
                for rank in 0..tf.profile.ranks {
                    for idx in 0..span.count {
                        let coords = decode(idx, &span.extents);
                        let me = self.space.node(RankId::new(rank), span.first + idx);
                        let mut choices: SmallVec<[(u64, u64); 4]> = SmallVec::new();
                        let mut bad = None;
                        for (k, sel) in a.indices.iter().enumerate() {
                            let extent = u64::from(tspan.extents[k]);
                            let top = i64::from(tspan.extents[k]);
                            match sel.bounds(&coords, u64::from(rank), extent) {
                                None => bad = Some((k, Selected::Overflow)),
                                Some((lo, hi)) if lo > hi => bad = Some((k, Selected::Backwards(lo, hi))),
                                Some((lo, hi)) if own => {
                                    choices.push((lo.clamp(0, top) as u64, hi.clamp(0, top) as u64))
                                }
                                Some((lo, hi)) if lo >= 0 && hi <= top => choices.push((lo as u64, hi as u64)),
                                Some((lo, hi)) => {
                                    let shown = match sel {
                                        IndexSel::At(_) => Selected::Index(lo),
                                        _ => Selected::Range(lo, hi),
                                    };
                                    bad = Some((k, shown));
                                }
                            }
                        }
                        if let Some((k, selected)) = bad {
                            self.faults.after(tf, fi, target, a.loc, &coords, rank, k, selected);
                            continue;
                        }
                        let mut waits_for_itself = false;
                        for_each_point(&choices, &mut |point| {
                            if own && point == coords.as_slice() {
                                waits_for_itself = true;
                                return;
                            }
                            let local = self.space.local_id(target, point);
                            entry_edges.push((self.space.node(RankId::new(rank), local), me));
                            self.pairs += 1;
                        });
                        if waits_for_itself {
                            self.faults.after_itself(tf, fi, ai, a.loc, &coords, rank);
                            entry_waits_for_itself = true;
                        }
                    }
                }
                if !entry_waits_for_itself {
                    self.edges.append(&mut entry_edges);
                }
            }
        }
    }
}

/// Calls `f` with every point of the box `ranges` (half-open per dimension).
fn for_each_point(ranges: &[(u64, u64)], f: &mut impl FnMut(&[u64])) {
    let mut point: SmallVec<[u64; 4]> = ranges.iter().map(|r| r.0).collect();
    if ranges.iter().any(|r| r.0 >= r.1) {
        return;
    }
    loop {
        f(&point);
        let mut k = ranges.len();
        loop {
            if k == 0 {
                return;
            }
            k -= 1;
            point[k] += 1;
            if point[k] < ranges[k].1 {
                break;
            }
            point[k] = ranges[k].0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{Diagnostics, ErrorKind as K};
    use crate::ids::NodeId;
    use crate::model::{CoreKind, DType, MachineProfile, Taskflow};

    fn errors(tf: Taskflow) -> Diagnostics {
        crate::analyse(&tf).expect_err("taskflow was accepted")
    }

    /// A range in `after` selects a block of the target's instances; outside the target's grid
    /// it is an error, unless the target is the family itself, where it is cut to the grid.
    #[test]
    fn after_ranges_select_blocks_and_are_cut_only_on_the_family_itself() {
        let build = |width: i64, own: bool| {
            let mut t = Taskflow::new("t", MachineProfile::small(2, 1));
            let x = t.output("x", DType::F32, &[16, 4]);
            let y = t.output("y", DType::F32, &[4, 4]);
            t.tile("load", CoreKind::Aiv, |b| {
                let i = b.grid("i", 16);
                b.op("zero", [x.at(i)]);
            });
            t.tile("mark", CoreKind::Aiv, |b| {
                let r = b.grid("r", 4);
                b.op("zero", [y.at(r.clone())]);
                let (target, start, end) = if own {
                    ("mark", r.clone() - 2, r.clone())
                } else {
                    ("load", r.clone() * 4, r.clone() * 4 + width)
                };
                b.after(target, [IndexSel::Range { start, end }]);
            });
            t
        };
        let exp = crate::analyse(&build(4, false)).unwrap();
        assert_eq!(exp.dag.pred.row(NodeId::new(16 + 1)), &[4, 5, 6, 7].map(NodeId::new));
        let d = errors(build(5, false));
        assert_eq!(d.kinds(), vec![K::AfterOutOfRange], "{d}");
        assert_eq!(
            d.errors[0].message,
            "in mark(r=3) on rank 0, index `i` of `after(load(..))` is 12..17, outside 0..16"
        );
        let d = errors(build(-1, false));
        assert!(d.errors[0].message.contains("whose start is past its end"), "{d}");
        // `mark(r - 2 .. r)`: the two instances before, fewer at the start of the grid.
        let exp = crate::analyse(&build(0, true)).unwrap();
        assert_eq!(exp.dag.pred.row(NodeId::new(16)), &[] as &[NodeId]);
        assert_eq!(exp.dag.pred.row(NodeId::new(16 + 1)), &[NodeId::new(16)]);
        assert_eq!(exp.dag.pred.row(NodeId::new(16 + 3)), &[16 + 1, 16 + 2].map(NodeId::new));
    }

    #[test]
    fn points_of_a_box_in_row_major_order() {
        let mut seen = Vec::new();
        for_each_point(&[(0, 2), (5, 7)], &mut |p| seen.push(p.to_vec()));
        assert_eq!(seen, vec![vec![0, 5], vec![0, 6], vec![1, 5], vec![1, 6]]);
        let mut none = 0;
        for_each_point(&[(0, 0)], &mut |_| none += 1);
        assert_eq!(none, 0);
        let mut one = 0;
        for_each_point(&[], &mut |_| one += 1);
        assert_eq!(one, 1);
    }
}
