//! Receiver pacing: dependencies the schedule adds between puts of different ranks into one
//! receiver, so that the run keeps the order in which the plan has them land.
//!
//! When a layer's link lanes go by send round ([`super::list`], "Link lanes"), the plan has
//! each receiver take the puts of one sender at a time: rank `r` sends to `r+1`, then `r+2`, …,
//! every rank in step. A run does not stay in step: a rank whose puts or producers run late
//! falls behind, its puts overlap the next sender's at their common receiver, the receiver's
//! ejection is shared among more puts than the plan has there, every one of them runs slower,
//! and the lanes behind them start later still (`network_breakdown`'s `plan` and `max`
//! columns: at most 3 puts planned landing on a die at once, up to 19 in the run). So the
//! schedule adds, for every link put `v` into die `d`, a dependency on one put `u` into `d`
//! from another die: the last to finish, in the plan, of those that finish before `v` starts
//! (and start earlier). `v` then starts only once `u`'s data has landed and its signal has come
//! back, as the plan has it anyway: a receiver takes the next sender's put only when the
//! previous sender's is in, and a late sender holds back the one after it instead of crowding
//! their receiver.
//!
//! The added dependencies never move the plan (each already holds in it), only the table
//! (waits and signals for them) and so the run. They go from earlier to later start times,
//! so with the DAG and the cores' orders, whose edges never go back in start time either,
//! they form no cycle (the deadlock proof checks that again).
//!
//! Puts from other servers are paced too (since stop 38). Until then they were left alone,
//! because with every tile at exactly its modelled time the forward at EP 64 ran 1.116× its
//! bound paced within a server and 1.179× paced across as well. But that exact run is a
//! trajectory a table paced within a server only keeps by its times being exact: with up to
//! ±0.1% of timing noise per tile (`hpmoe-host`'s `sim::TimingNoise`) it ran 1.209×, its
//! receivers crowded by drifting rounds, and paced across servers 1.195×; every layer beyond
//! one server whose lanes go by round ran faster under noise paced across servers, and each
//! barely moves with the noise (README, "How much the figures owe to exact times"). Layers
//! whose lanes do not go by round (uneven loads, natural routing at high load) get nothing:
//! their planned order is not the run's, and paced they ran up to 24 points slower.

use crate::expand::Expanded;
use crate::graph::{Csr, Dag};
use crate::ids::{NodeId, RankId};
use crate::placement::Placement;

/// The link puts of a layer whose lanes go by send round, grouped by receiver, which
/// [`Receivers::edges`] paces.
#[derive(Debug)]
pub(crate) struct Receivers {
    /// Per destination rank: the link puts into it from other dies.
    into: Vec<Vec<NodeId>>,
}

impl Receivers {
    /// The receivers of `link_puts` (every link put of `exp`, on lanes going by round), each
    /// put's destination by its rotation.
    pub(crate) fn new(exp: &Expanded, link_puts: impl IntoIterator<Item = NodeId>) -> Self {
        let ranks = exp.space.ranks.max(1);
        let mut into = vec![Vec::new(); ranks as usize];
        for v in link_puts {
            let (from, to) = (exp.space.rank_of(v).raw(), exp.destination(v).raw());
            if from != to {
                into[to as usize].push(v);
            }
        }
        Receivers { into }
    }

    /// The pacing dependencies `(u, v)` for `placement` (see the [module docs](self)), in
    /// receiver order, then by `v`'s planned start. Deterministic: ties in time go by node id.
    pub(crate) fn edges(&self, exp: &Expanded, placement: &Placement) -> Vec<(NodeId, NodeId)> {
        let (start, finish) = (&placement.start_ns, &placement.finish_ns);
        let sender = |v: NodeId| exp.space.rank_of(v);
        let mut edges = Vec::new();
        for puts in &self.into {
            let mut by_start = puts.clone();
            by_start.sort_unstable_by_key(|&v| (start[v], v));
            let mut by_finish = puts.clone();
            by_finish.sort_unstable_by_key(|&v| (finish[v], v));
            // Among the puts finished so far: the last to finish, and the last from a sender
            // other than its.
            let mut latest = Latest::default();
            let mut next = by_finish.iter().peekable();
            for &v in &by_start {
                while let Some(&&u) = next.peek()
                    && finish[u] <= start[v]
                {
                    latest.add(u, sender(u));
                    next.next();
                }
                if let Some(u) = latest.last_not_from(sender(v))
                    && start[u] < start[v]
                {
                    edges.push((u, v));
                }
            }
        }
        edges
    }
}

/// The last put to finish so far, and the last from another sender than its.
#[derive(Default)]
struct Latest {
    last: Option<(NodeId, RankId)>,
    other: Option<(NodeId, RankId)>,
}

impl Latest {
    /// `u`, from `sender`, finished no earlier than every put added before it.
    fn add(&mut self, u: NodeId, sender: RankId) {
        match self.last {
            Some((_, s)) if s == sender => {}
            last => self.other = last,
        }
        self.last = Some((u, sender));
    }

    /// The last put to finish from a sender other than `sender`.
    fn last_not_from(&self, sender: RankId) -> Option<NodeId> {
        [self.last, self.other].into_iter().flatten().find(|&(_, s)| s != sender).map(|(u, _)| u)
    }
}

/// `exp` with the dependencies `extra` added to its DAG (the rest shared by copy): each row of
/// the DAG copied with its new entries merged in, O(V + E + extra · log extra), rather than
/// the whole DAG rebuilt from its pairs (at 10^6 instances that took ~90 ms).
pub(crate) fn with_edges(exp: &Expanded, extra: &[(NodeId, NodeId)]) -> Expanded {
    let reversed: Vec<(NodeId, NodeId)> = extra.iter().map(|&(u, v)| (v, u)).collect();
    Expanded {
        space: exp.space.clone(),
        dag: Dag { succ: merged(&exp.dag.succ, extra), pred: merged(&exp.dag.pred, &reversed) },
        family_core: exp.family_core.clone(),
        family_work: exp.family_work.clone(),
        rotation: exp.rotation.clone(),
    }
}

/// `rows` with the entries `(row, target)` of `extra` added, each row sorted and without
/// repeats, as [`Csr::from_pairs`] makes them.
fn merged(rows: &Csr, extra: &[(NodeId, NodeId)]) -> Csr {
    let mut extra = extra.to_vec();
    extra.sort_unstable();
    let mut offsets = Vec::with_capacity(rows.nodes() + 1);
    let mut targets = Vec::with_capacity(rows.targets().len() + extra.len());
    offsets.push(0u32);
    let mut next = extra.iter().peekable();
    // A changed row is sorted and deduplicated here, one buffer for every row.
    let mut row = Vec::new();
    for v in rows.row_ids() {
        let start = targets.len();
        targets.extend_from_slice(rows.row(v));
        let mut added = false;
        while let Some(&&(from, to)) = next.peek()
            && from == v
        {
            targets.push(to);
            added = true;
            next.next();
        }
        if added {
            row.extend(targets.drain(start..));
            row.sort_unstable();
            row.dedup();
            targets.append(&mut row);
        }
        offsets.push(u32::try_from(targets.len()).expect("edges fit u32 offsets"));
    }
    Csr::from_parts(offsets, targets)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expand::Work;
    use crate::ids::{CoreId, IdVec};
    use crate::model::CoreKind;
    use crate::schedule::testutil::expanded;

    /// Four ranks of one family of one put each, rank `r` putting to `rotation[r]` ranks on;
    /// planned `(start, finish)` per rank.
    fn puts(rotation: [u32; 4], times: [(u64, u64); 4]) -> (Expanded, Placement) {
        let mut exp = expanded(4, &[(CoreKind::Aiv, 1, Work::default())], &[]);
        exp.rotation = IdVec::from_vec(rotation.to_vec());
        let placement = Placement {
            core_of: IdVec::from_vec((0..4).map(CoreId::new).collect()),
            position: IdVec::from_vec(vec![0; 4]),
            queues: crate::graph::Csr::from_parts(vec![0; 5], Vec::new()),
            start_ns: IdVec::from_vec(times.iter().map(|t| t.0).collect()),
            finish_ns: IdVec::from_vec(times.iter().map(|t| t.1).collect()),
            makespan_ns: times.iter().map(|t| t.1).max().unwrap_or(0),
        };
        (exp, placement)
    }

    fn node(i: u32) -> NodeId {
        NodeId::new(i)
    }

    #[test]
    fn a_put_waits_for_the_last_other_senders_put_into_its_receiver_the_plan_finishes_before_it() {
        // Ranks 0, 1, 2 all put into rank 3 (rotations 3, 2, 1); rank 3 puts into rank 0.
        // Into rank 3: rank 0's put 0-10, rank 1's 10-20, rank 2's 12-30 (overlaps rank 1's).
        let (exp, placement) = puts([3, 2, 1, 1], [(0, 10), (10, 20), (12, 30), (0, 5)]);
        let edges = Receivers::new(&exp, (0..4).map(node)).edges(&exp, &placement);
        // Rank 1's put follows rank 0's; rank 2's starts before rank 1's finishes, so it waits
        // for rank 0's, the last finished by 12. Rank 0 receives from one sender only.
        assert_eq!(edges, vec![(node(0), node(1)), (node(0), node(2))]);
    }

    #[test]
    fn puts_into_a_receiver_are_paced_whichever_server_they_come_from() {
        // Rank 0 puts into 1, rank 1 into 0, rank 2 into 3, rank 3 into 1: into rank 1 come
        // rank 0's put (0-10) and rank 3's (40-50), and rank 3's waits for rank 0's whichever
        // servers they are on; every other receiver has one sender.
        let (exp, placement) = puts([1, 3, 1, 2], [(0, 10), (0, 5), (20, 30), (40, 50)]);
        let receivers = Receivers::new(&exp, (0..4).map(node));
        assert_eq!(receivers.edges(&exp, &placement), vec![(node(0), node(3))]);
    }

    #[test]
    fn a_put_starting_with_another_is_not_made_to_wait_for_it() {
        // Rank 0's put is zero-length at time 5, rank 1's starts at 5: no edge between equal
        // starts (the deadlock-freedom argument needs strictly earlier starts).
        let (exp, placement) = puts([2, 1, 1, 1], [(5, 5), (5, 9), (0, 1), (0, 1)]);
        let edges = Receivers::new(&exp, [node(0), node(1)]).edges(&exp, &placement);
        assert_eq!(edges, vec![]);
    }

    #[test]
    fn added_edges_join_the_dag_as_if_it_were_built_with_them() {
        let exp = expanded(1, &[(CoreKind::Aiv, 5, Work::default())], &[(0, 3), (0, 1), (2, 4)]);
        // One already there, two into one row, one row gaining its first entry.
        let extra = [(node(1), node(2)), (node(0), node(1)), (node(0), node(2)), (node(3), node(4))];
        let paced = with_edges(&exp, &extra);
        let all: Vec<_> =
            [(0, 3), (0, 1), (2, 4), (1, 2), (0, 1), (0, 2), (3, 4)].map(|(a, b)| (node(a), node(b))).to_vec();
        assert_eq!(paced.dag, Dag::from_pairs(5, &all));
        assert_eq!(paced.dag.edges(), 6);
        assert_eq!(paced.rotation, exp.rotation);
    }
}
