//! Linking a tensor whose accesses are the same on every rank once, for rank 0, and copying
//! what that made to the other ranks.
//!
//! When every access to a tensor is to the executing rank's own copy, in a region whose start
//! does not mention `RANK`, rank `r`'s accesses are rank 0's with every node id shifted by
//! `r · per_rank` (node ids are `rank · per_rank + local`): the same boxes, in the same order,
//! from the same families and calls. Linking sees nothing of a node but its boxes, family, call
//! and access, and tells two nodes apart only by equality, so rank `r` gets rank 0's edges and
//! hazards, in the same order, shifted alike (each hazard naming rank `r`), and counts as many
//! pairs towards `MAX_EDGES`. Copying them rank by rank, with the budget checked after each rank
//! as the general path does, gives the very lists the general path makes, at the cost of one
//! rank's evaluation and overlap search instead of every rank's (on the MoE layer, the expert
//! computation's tensors: weights, hidden activations, outputs).
//!
//! A fault of rank 0 (a region out of bounds, data never written) would be the same fault on
//! every rank, counted once per rank: then nothing is copied and the tensor is linked again by
//! the general path, so that fault reports never depend on this shortcut.

use super::{Acc, ArgPlan, Builder, Faults, RankId};
use crate::model::RankSel;

/// Whether every access of `plans` is to the executing rank's own copy in a region whose start
/// does not depend on the rank: then every rank accesses its copy alike.
pub(super) fn same_on_every_rank(plans: &[ArgPlan<'_>]) -> bool {
    plans
        .iter()
        .all(|p| matches!(p.region.rank, RankSel::Local) && p.region.dims.iter().all(|d| !d.start.mentions_rank()))
}

impl Builder<'_, '_> {
    /// Links tensor `t`, whose accesses are [`same_on_every_rank`], by linking rank 0 and
    /// copying its edges and hazards to the other ranks; true if done. False, with nothing
    /// changed, if rank 0 reported a fault (or one was reported before): the caller then links
    /// every rank as usual.
    pub(super) fn link_every_rank_as_rank_0(&mut self, t: usize, plans: &[ArgPlan<'_>]) -> bool {
        if !self.faults.is_empty() {
            return false;
        }
        let tf = self.r.tf;
        let decl = &tf.tensors[t];
        let ranks = tf.profile.ranks;
        let (edges_before, hazards_before, pairs_before) = (self.edges.len(), self.hazards.len(), self.pairs);
        // Rank 0's buffer of the general path, kept from tensor to tensor as it keeps them.
        let mut per_rank = std::mem::take(&mut self.per_rank);
        if per_rank.is_empty() {
            per_rank.push(Vec::new());
        }
        let accs: &mut Vec<Acc> = &mut per_rank[0];
        accs.clear();
        accs.reserve(plans.iter().map(|p| self.space.families[p.family].count as usize).sum());
        for (pi, plan) in plans.iter().enumerate() {
            self.accesses(pi, plan, decl, 0, |dest, acc| {
                debug_assert_eq!(dest, 0, "a local region lands on the executing rank");
                accs.push(acc);
            });
        }
        if self.faults.is_empty() {
            self.link_rank(t, 0, decl, plans, accs);
        }
        self.per_rank = per_rank;
        if !self.faults.is_empty() {
            self.edges.truncate(edges_before);
            self.hazards.truncate(hazards_before);
            self.pairs = pairs_before;
            self.faults = Faults::default();
            return false;
        }
        let (edges_after, hazards_after) = (self.edges.len(), self.hazards.len());
        let pairs = self.pairs - pairs_before;
        for rank in 1..ranks {
            // The general path checks the budget after each rank it links.
            if self.over_budget() {
                break;
            }
            let rank = RankId::new(rank);
            let shift = self.space.node(rank, 0).raw();
            let moved = |n: crate::ids::NodeId| crate::ids::NodeId::new(n.raw() + shift);
            self.edges.extend_from_within(edges_before..edges_after);
            let start = self.edges.len() - (edges_after - edges_before);
            for e in &mut self.edges[start..] {
                *e = (moved(e.0), moved(e.1));
            }
            self.hazards.extend_from_within(hazards_before..hazards_after);
            let start = self.hazards.len() - (hazards_after - hazards_before);
            for h in &mut self.hazards[start..] {
                (h.first, h.second, h.rank) = (moved(h.first), moved(h.second), rank);
            }
            self.pairs += pairs;
        }
        self.copied_tensors += 1;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::super::expand_with;
    use crate::model::{Affine, CoreKind, DType, MachineProfile, Taskflow};
    use proptest::prelude::*;

    /// The DAG, hazards and errors of `tf` linked rank by rank, and with copying (on one thread
    /// and on two): the same; and how many tensors the copying linked once.
    fn linked_alike(tf: &Taskflow) -> u32 {
        let r = crate::resolve::check_structure(tf).unwrap_or_else(|d| panic!("{d}"));
        let of = |two_threads_from, copy_ranks| {
            let (e, copied) = expand_with(&r, two_threads_from, copy_ranks);
            ((e.expanded.dag, e.hazards, e.diagnostics.to_string()), copied)
        };
        let (general, none) = of(u64::MAX, false);
        let (copied, n) = of(u64::MAX, true);
        let (copied_on_two, n_on_two) = of(0, true);
        assert_eq!(none, 0);
        assert!(general == copied, "copying rank 0 changed the expansion of `{}`", tf.name);
        assert!(general == copied_on_two, "copying on two threads changed the expansion of `{}`", tf.name);
        assert_eq!(n, n_on_two);
        n
    }

    /// Four ranks: `b` and `d` are accessed alike everywhere (copied, or linked rank by rank
    /// after a fault of rank 0), `c` by a region that mentions `RANK`, `e` by a put.
    fn four_ranks(fault: bool, unwritten: bool) -> Taskflow {
        let mut t = Taskflow::new("four_ranks", MachineProfile::small(2, 4));
        let a = t.input("a", DType::F32, &[32, 4]);
        let b = t.scratch("b", DType::F32, &[32, 4]);
        let c = t.scratch("c", DType::F32, &[4, 32, 4]);
        let d = t.scratch("d", DType::F32, &[32, 4]);
        let e = t.symmetric("e", DType::F32, &[4, 32, 4]);
        t.tile("ab", CoreKind::Aiv, |tb| {
            let i = tb.grid("i", 32);
            tb.op("copy", [a.at(i.clone()), b.at(i)]);
        });
        t.tile("bc", CoreKind::Aiv, |tb| {
            let i = tb.grid("i", 32);
            tb.op("copy", [b.at(i.clone()), c.at(Affine::rank()).at(i)]);
        });
        t.tile("again", CoreKind::Aiv, |tb| {
            let i = tb.grid("i", 31);
            let row = if fault { i.clone() + 2 } else { i.clone() + 1 };
            tb.op("copy", [b.at(row), d.slice(i, 2)]);
        });
        t.tile("put", CoreKind::Aiv, |tb| {
            let i = tb.grid("i", 32);
            let to = (Affine::rank() + 1).modulo(4);
            tb.put(c.at(Affine::rank()).at(i.clone()), e.on(to).at(Affine::rank()).at(i));
        });
        if unwritten {
            let f = t.scratch("f", DType::F32, &[32, 4]);
            t.tile("unwritten", CoreKind::Aiv, |tb| {
                let i = tb.grid("i", 32);
                tb.op("copy", [f.at(i.clone()), b.at(i)]);
            });
        }
        t
    }

    #[test]
    fn copying_rank_0_links_as_every_rank_does() {
        // `a`, `b` and `d` are copied; with a fault on `b` or `f`, that tensor and every later
        // one are linked rank by rank (a fault once reported makes every tensor go that way).
        let copied = |fault, unwritten| linked_alike(&four_ranks(fault, unwritten));
        assert_eq!(copied(false, false), 3);
        assert!(copied(true, false) < 3);
        assert!(copied(false, true) < 4);
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]
        /// Random taskflows (puts to shifted and to every rank, reads by affine maps, guards):
        /// the same expansion with and without copying.
        #[test]
        fn random_taskflows_link_alike(spec in crate::testing::taskflow_spec(6)) {
            linked_alike(&spec.taskflow());
        }
    }
}
