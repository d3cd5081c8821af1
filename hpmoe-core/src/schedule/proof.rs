//! Deadlock freedom of per-core orders.
//!
//! Every core runs its queue in order, and a node starts only after its DAG predecessors
//! have finished. So node `b` cannot start before `a` finishes when `a → b` is a DAG edge
//! *or* `a` is just before `b` on the same core. A set of per-core orders runs to the end iff
//! the union of these two kinds of edge is acyclic (hardware.md, scheduling facts): a cycle
//! is a ring of nodes each waiting for the previous one, and without a cycle some unfinished
//! node always has everything it waits for done. Remote-arrival edges (a put on one rank
//! feeding a reader on another) are DAG edges like any other, so all ranks are proved
//! together.

use crate::graph::{Csr, Dag, topo_order_with};
use crate::ids::{CoreId, IdVec, NodeId, OptId};

/// Each node's neighbours in its core's queue.
#[derive(Clone, Debug)]
pub(crate) struct CoreChain {
    /// Per node: the node just before it on its core, if any.
    pub(crate) prev: IdVec<NodeId, OptId<NodeId>>,
    /// Per node: the node just after it on its core, if any.
    pub(crate) next: IdVec<NodeId, OptId<NodeId>>,
}

impl CoreChain {
    /// # Panics
    /// Unless every node `0..nodes` appears exactly once in `queues`.
    pub(crate) fn new(nodes: usize, queues: &Csr<CoreId, NodeId>) -> CoreChain {
        let mut prev = IdVec::filled(nodes, OptId::NONE);
        let mut next = IdVec::filled(nodes, OptId::NONE);
        let mut queued: IdVec<NodeId, bool> = IdVec::filled(nodes, false);
        for core in queues.row_ids() {
            let row = queues.row(core);
            for (i, &v) in row.iter().enumerate() {
                assert!(v.index() < nodes, "core {core} queues node {v}, but there are only {nodes} nodes");
                assert!(!queued[v], "node {v} is queued twice");
                queued[v] = true;
                if i > 0 {
                    prev[v] = OptId::some(row[i - 1]);
                }
                if i + 1 < row.len() {
                    next[v] = OptId::some(row[i + 1]);
                }
            }
        }
        if let Some((v, _)) = queued.iter().find(|&(_, &q)| !q) {
            panic!("node {v} is on no core's queue");
        }
        CoreChain { prev, next }
    }

    /// Successors of `v` in DAG ∪ core order.
    pub(crate) fn union_succ<'a>(&'a self, dag: &'a Dag, v: NodeId) -> impl Iterator<Item = NodeId> + 'a {
        dag.succ.row(v).iter().copied().chain(self.next[v].get())
    }

    /// Predecessors of `v` in DAG ∪ core order.
    pub(crate) fn union_pred<'a>(&'a self, dag: &'a Dag, v: NodeId) -> impl Iterator<Item = NodeId> + 'a {
        dag.pred.row(v).iter().copied().chain(self.prev[v].get())
    }

    /// A topological order of DAG ∪ core order, or a cycle `[a, b, …, a]` of it.
    pub(crate) fn union_topo_order(&self, dag: &Dag) -> Result<Vec<NodeId>, Vec<NodeId>> {
        topo_order_with(dag.nodes(), |v| self.union_succ(dag, v), |v| self.union_pred(dag, v))
    }
}

/// Proves that running `queues` (row `c`: the nodes core `c` runs, in order) under the
/// dependencies of `dag` cannot deadlock: the union of DAG edges and per-core order edges
/// (each node → the next node of its core) is acyclic. Works for any queues, not only those
/// of [`super::list_schedule`]. O(V + E).
///
/// On failure, returns a cycle of the union as a path `[a, b, …, a]`: each step is a DAG
/// edge or "`b` runs right after `a` on the same core".
///
/// # Panics
/// Unless every node of `dag` appears exactly once in `queues` (a placement places every
/// node once; anything else is a bug in the caller, not a deadlock).
pub fn prove_deadlock_free(dag: &Dag, queues: &Csr<CoreId, NodeId>) -> Result<(), Vec<NodeId>> {
    prove_with_order(dag, queues).map(|_| ())
}

/// What [`prove_deadlock_free`] finds on the way: each node's neighbours on its core and a
/// topological order of DAG ∪ core order, which the sync reduction visits
/// ([`super::reduce`]), so that the pipeline builds them once.
#[derive(Clone, Debug)]
pub(crate) struct Proved {
    /// Each node's neighbours in its core's queue.
    pub(crate) chain: CoreChain,
    /// [`CoreChain::union_topo_order`].
    pub(crate) order: Vec<NodeId>,
}

/// [`prove_deadlock_free`], keeping the core chains and the order it proved acyclic.
///
/// # Panics
/// As [`prove_deadlock_free`].
pub(crate) fn prove_with_order(dag: &Dag, queues: &Csr<CoreId, NodeId>) -> Result<Proved, Vec<NodeId>> {
    let chain = CoreChain::new(dag.nodes(), queues);
    let order = chain.union_topo_order(dag)?;
    Ok(Proved { chain, order })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schedule::cost::{SimpleCost, UnitCost};
    use crate::schedule::list::list_schedule;
    use crate::schedule::testutil::{profile, random_expanded};

    fn queues(rows: &[&[u32]]) -> Csr<CoreId, NodeId> {
        Csr::from_rows(rows.iter().map(|r| r.iter().copied().map(NodeId::new)))
    }

    fn nodes(raw: &[u32]) -> Vec<NodeId> {
        raw.iter().copied().map(NodeId::new).collect()
    }

    /// Every step of `cycle` is a DAG edge or a same-core successor, and it closes.
    fn assert_is_union_cycle(dag: &Dag, q: &Csr<CoreId, NodeId>, cycle: &[NodeId]) {
        let chain = CoreChain::new(dag.nodes(), q);
        assert!(cycle.len() >= 3, "{cycle:?}");
        assert_eq!(cycle.first(), cycle.last());
        for w in cycle.windows(2) {
            assert!(chain.union_succ(dag, w[0]).any(|s| s == w[1]), "{} → {} is no edge", w[0], w[1]);
        }
    }

    #[test]
    fn accepts_list_schedules() {
        for seed in 0..100 {
            let ranks = 1 + (seed % 4) as u32;
            let exp = random_expanded(seed, ranks, 6, 10);
            for prof in [profile(1, 1, ranks), profile(3, 2, ranks)] {
                let p = list_schedule(&exp, &prof, &SimpleCost::default());
                assert_eq!(prove_deadlock_free(&exp.dag, &p.queues), Ok(()), "seed {seed}");
                let p = list_schedule(&exp, &prof, &UnitCost);
                assert_eq!(prove_deadlock_free(&exp.dag, &p.queues), Ok(()), "seed {seed}");
            }
        }
    }

    #[test]
    fn accepts_a_hand_made_order_that_interleaves_cores() {
        // 0 → 1 → 2 → 3 alternating between two cores, with an independent node 4 first.
        let dag = Dag::of(5, &[(0, 1), (1, 2), (2, 3)]);
        assert_eq!(prove_deadlock_free(&dag, &queues(&[&[4, 0, 2], &[1, 3]])), Ok(()));
    }

    #[test]
    fn refuses_a_consumer_queued_before_its_producer() {
        // 0 produces what 1 consumes, but core 0 runs 1 first: 1 waits for 0, which waits for 1.
        let dag = Dag::of(3, &[(0, 1), (1, 2)]);
        let q = queues(&[&[1, 0], &[2]]);
        let cycle = prove_deadlock_free(&dag, &q).unwrap_err();
        assert_eq!(cycle, nodes(&[0, 1, 0]));
        assert_is_union_cycle(&dag, &q, &cycle);
    }

    #[test]
    fn refuses_two_cores_waiting_on_each_others_later_task() {
        // Core 0 runs [0, 1], core 1 runs [2, 3]. 3 → 0 and 1 → 2: core 0 waits at 0 for 3,
        // which waits behind 2 on core 1, which waits for 1, which waits behind 0.
        let dag = Dag::of(4, &[(3, 0), (1, 2)]);
        let q = queues(&[&[0, 1], &[2, 3]]);
        let cycle = prove_deadlock_free(&dag, &q).unwrap_err();
        assert_eq!(cycle, nodes(&[0, 1, 2, 3, 0]));
        assert_is_union_cycle(&dag, &q, &cycle);
        // The same dependencies with the other order on core 1 are fine.
        assert_eq!(prove_deadlock_free(&dag, &queues(&[&[0, 1], &[3, 2]])), Ok(()));
    }

    #[test]
    fn refuses_a_deadlock_across_three_ranks_of_puts() {
        // One core per rank; each rank's core first waits for the put (second task) of the
        // next rank: 0 ← 3, 2 ← 5, 4 ← 1, with core r running [2r, 2r + 1].
        let dag = Dag::of(6, &[(3, 0), (5, 2), (1, 4)]);
        let q = queues(&[&[0, 1], &[2, 3], &[4, 5]]);
        let cycle = prove_deadlock_free(&dag, &q).unwrap_err();
        assert_eq!(cycle, nodes(&[0, 1, 4, 5, 2, 3, 0]));
        assert_is_union_cycle(&dag, &q, &cycle);
    }

    #[test]
    #[should_panic(expected = "node 2 is on no core's queue")]
    fn a_node_on_no_core_is_a_caller_bug() {
        let _ = prove_deadlock_free(&Dag::of(3, &[]), &queues(&[&[0, 1]]));
    }

    #[test]
    #[should_panic(expected = "node 1 is queued twice")]
    fn a_node_on_two_cores_is_a_caller_bug() {
        let _ = prove_deadlock_free(&Dag::of(2, &[]), &queues(&[&[0, 1], &[1]]));
    }
}
