//! The die's HBM in the plan: when a vector tile is done if its bytes must wait for the HBM.
//! Why, and which layers book, is "The HBM" in the module documentation of [`super`].
//!
//! Each booked node books its expected HBM bytes ([`CostModel::node_hbm_bytes`]) on its rank's
//! HBM ([`CostModel::hbm_bytes_per_s`]) first come, first served — an HBM of `R` bytes/s booked
//! until `until` carries `b` bytes of a node started at `t` until `max(until, t) + b / R` — and
//! the node is done when the later of its own time and that is. The same bytes through the
//! same bandwidth as the simulator's HBM (`hpmoe-host`'s `sim::hbm`), which serves every
//! tile's bytes the same way; the scheduler's is its own code. Matrix tiles are not booked (a
//! die's AICs together ask at most half the HBM on the DeepSeek-V3 layer, and booking them
//! measured worse: docs/history.md, "A scheduler that books the die's HBM (stop 33)").

use super::super::cost::{CostModel, ns_at_rate};
use super::booked::Booked;
use crate::expand::Expanded;
use crate::ids::{IdVec, NodeId, RankId};
use crate::model::CoreKind;

/// The HBM time each booked node takes, at its die's bandwidth.
#[derive(Debug)]
pub(super) struct Hbm {
    /// Per node: its expected bytes at the HBM's rate, ns (0: not booked).
    ns: IdVec<NodeId, u64>,
}

impl Hbm {
    /// The HBM of `cost` for the vector tiles of `exp` that are not link puts (`on_lane`), if
    /// the model has an HBM, `in_step` says the link puts (if any) go by send round, every
    /// rank is on one server ([`CostModel::ranks_per_server`]) and some such tile moves HBM
    /// bytes; `None` otherwise (every node then takes its own time).
    pub(super) fn new(
        exp: &Expanded,
        cost: &dyn CostModel,
        in_step: bool,
        on_lane: impl Fn(NodeId) -> bool,
    ) -> Option<Self> {
        let bytes_per_s = cost.hbm_bytes_per_s()?;
        let one_server = cost.ranks_per_server().is_none_or(|per_server| exp.space.ranks <= per_server);
        if !(in_step && one_server) {
            return None;
        }
        let ns: IdVec<NodeId, u64> = exp
            .space
            .node_ids()
            .map(|v| {
                let booked = exp.core_kind(v) == CoreKind::Aiv && !on_lane(v);
                if booked { ns_at_rate(cost.node_hbm_bytes(v, exp.space.family_of(v)), bytes_per_s) } else { 0 }
            })
            .collect();
        ns.values().any(|&t| t > 0).then_some(Hbm { ns })
    }

    /// When node `v` of rank `rank`, started at `now` and done at `end` by its own time, is
    /// done once its HBM bytes have moved too; books them on its rank's HBM (`booked`).
    pub(super) fn book(&self, booked: &mut Booked, v: NodeId, rank: RankId, now: u64, end: u64) -> u64 {
        match self.ns[v] {
            0 => end,
            ns => end.max(booked.book(rank, now, ns)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hbm(ns: &[u64]) -> Hbm {
        Hbm { ns: IdVec::from_vec(ns.to_vec()) }
    }

    #[test]
    fn bytes_queue_on_their_rank_and_a_node_ends_at_the_later_of_its_time_and_its_bytes() {
        let h = hbm(&[100, 100, 0, 100]);
        let mut b = Booked::idle(2);
        let (r0, r1) = (RankId::new(0), RankId::new(1));
        // Alone, a node's bytes move within its own time.
        assert_eq!(h.book(&mut b, NodeId::new(0), r0, 0, 150), 150);
        // The next one on that rank waits for the first's bytes: 100 + 100.
        assert_eq!(h.book(&mut b, NodeId::new(1), r0, 10, 60), 200);
        // A node that books nothing keeps its own time, and leaves the HBM as it was.
        assert_eq!(h.book(&mut b, NodeId::new(2), r0, 20, 30), 30);
        // Another rank's HBM is its own.
        assert_eq!(h.book(&mut b, NodeId::new(3), r1, 20, 50), 120);
        // Once the HBM is free again, a node's bytes start when it does.
        assert_eq!(h.book(&mut b, NodeId::new(0), r0, 500, 520), 600);
    }
}
