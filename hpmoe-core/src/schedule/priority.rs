//! Critical-path priorities: the *bottom level* of a node is the longest estimated time from
//! its start to the end of the whole taskflow. List scheduling runs the node with the
//! largest bottom level first, so the longest chain is never kept waiting by shorter ones.

use super::cost::CostModel;
use crate::expand::Expanded;
use crate::ids::NodeId;

/// Per node: its estimated run time under `cost` ([`CostModel::family_tile_ns`], once per
/// family, then [`CostModel::node_tile_ns`] per instance). O(V).
pub fn node_costs(exp: &Expanded, cost: &dyn CostModel) -> Vec<u64> {
    let family_cost: Vec<u64> = exp
        .family_core
        .iter()
        .zip(&exp.family_work)
        .enumerate()
        .map(|(f, (&kind, work))| cost.family_tile_ns(f, kind, work))
        .collect();
    let mut per_node = Vec::with_capacity(exp.nodes());
    for _rank in 0..exp.space.ranks {
        for (span, &c) in exp.space.families.iter().zip(&family_cost) {
            per_node.extend(std::iter::repeat_n(c, span.count as usize));
        }
    }
    for (v, c) in per_node.iter_mut().enumerate() {
        *c = cost.node_tile_ns(NodeId::from_index(v), *c);
    }
    per_node
}

/// Per node: the longest path from the node to any sink, counting every node's cost
/// (its own included) and `cost.edge_ns(cross_rank)` on every edge — cores are not chosen
/// yet, so every edge is charged as if it crossed cores. Sums saturate. O(V + E).
///
/// # Panics
/// If the DAG has a cycle (the checks refuse those before scheduling).
pub fn bottom_levels(exp: &Expanded, cost: &dyn CostModel) -> Vec<u64> {
    bottom_levels_with(exp, &node_costs(exp, cost), cost)
}

/// [`bottom_levels`] with the per-node costs already computed.
pub(crate) fn bottom_levels_with(exp: &Expanded, costs: &[u64], cost: &dyn CostModel) -> Vec<u64> {
    bottom_levels_in(exp, &topo_order(exp), costs, Edges::of(cost))
}

/// The instance DAG in topological order.
fn topo_order(exp: &Expanded) -> Vec<NodeId> {
    exp.dag.topo_order().expect("the instance DAG is acyclic (checked before scheduling)")
}

/// What every edge is charged before cores are chosen: as if it crossed cores, on its rank or
/// across ranks.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Edges {
    local: u64,
    remote: u64,
}

impl Edges {
    /// The charges of `cost` ([`CostModel::edge_ns`]).
    pub(crate) fn of(cost: &dyn CostModel) -> Self {
        Edges { local: cost.edge_ns(false), remote: cost.edge_ns(true) }
    }

    /// The charge of an edge between `a` and `b`.
    #[inline]
    fn between(self, exp: &Expanded, a: NodeId, b: NodeId) -> u64 {
        if exp.space.rank_of(a) == exp.space.rank_of(b) { self.local } else { self.remote }
    }
}

/// [`bottom_levels_with`] along a topological `order` of the DAG.
fn bottom_levels_in(exp: &Expanded, order: &[NodeId], costs: &[u64], edges: Edges) -> Vec<u64> {
    let mut level = vec![0u64; exp.nodes()];
    for &v in order.iter().rev() {
        let tail = exp.dag.succ.row(v).iter().map(|&s| edges.between(exp, v, s).saturating_add(level[s.index()]));
        level[v.index()] = costs[v.index()].saturating_add(tail.max().unwrap_or(0));
    }
    level
}

/// Per node: its list-scheduling priority — its bottom level ([`bottom_levels_with`]), except
/// that a *sink* (a node nothing waits for, such as a weight-gradient tile) is as urgent as the
/// most urgent other reader of the input it waits for last: among its predecessors `u` whose
/// output reaches it latest by the estimate `top(u) + cost(u) + edge(u, v)` (`top`: the longest
/// path from a source to `u`'s start), the largest `level(u) − cost(u) − edge(u, v)` — the
/// bottom level of `u`'s most urgent successor — if that is above its own.
///
/// By bottom level alone a sink costs only itself, so it would run after every node on a
/// path, however early its inputs are ready — on a MoE backward, every weight-gradient tile
/// after every data-gradient tile, AIC-only work left for the end while the cores waited for
/// rows earlier. Ranked with the readers of the rows it waits for, it runs beside them as
/// those rows land (a weight-gradient tile of an expert beside the data-gradient tiles of the
/// same rows), not with the readers of an input ready long before (in a training step, the
/// forward's activations, whose other readers are the forward's urgent tiles). Other nodes
/// keep their bottom level. O(V + E).
///
/// `order` is a topological order of the DAG, which the caller has computed (the pipeline
/// computes one per plan); the priorities do not depend on which order it is.
///
/// `edges` are the cost model's charges ([`Edges::of`]): taken as plain numbers, so that the
/// priorities can be computed on another thread than the one holding the cost model.
pub(crate) fn priorities_along(exp: &Expanded, order: &[NodeId], costs: &[u64], edges: Edges) -> Vec<u64> {
    let mut level = bottom_levels_in(exp, order, costs, edges);
    let top = top_levels_in(exp, order, costs, edges);
    for v in exp.space.node_ids() {
        if !exp.dag.succ.row(v).is_empty() {
            continue;
        }
        // Per predecessor: (when its output reaches `v`, the level of its most urgent successor).
        let inherited = exp
            .dag
            .pred
            .row(v)
            .iter()
            .map(|&u| {
                let (c, edge) = (costs[u.index()], edges.between(exp, u, v));
                (
                    top[u.index()].saturating_add(c).saturating_add(edge),
                    level[u.index()].saturating_sub(c).saturating_sub(edge),
                )
            })
            .max()
            .map_or(0, |(_, sibling)| sibling);
        let own = &mut level[v.index()];
        *own = (*own).max(inherited);
    }
    level
}

/// [`priorities_along`] the DAG's own topological order (for tests).
#[cfg(test)]
pub(crate) fn priorities_with(exp: &Expanded, costs: &[u64], cost: &dyn CostModel) -> Vec<u64> {
    priorities_along(exp, &topo_order(exp), costs, Edges::of(cost))
}

/// Per node: the longest path from any source to the node's start, counting each earlier
/// node's cost and the edges as [`bottom_levels_with`] does, along a topological `order`. Sums
/// saturate. O(V + E).
fn top_levels_in(exp: &Expanded, order: &[NodeId], costs: &[u64], edges: Edges) -> Vec<u64> {
    let mut top = vec![0u64; exp.nodes()];
    for &v in order {
        let start = exp
            .dag
            .pred
            .row(v)
            .iter()
            .map(|&u| top[u.index()].saturating_add(costs[u.index()]).saturating_add(edges.between(exp, u, v)));
        top[v.index()] = start.max().unwrap_or(0);
    }
    top
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expand::Work;
    use crate::model::CoreKind;
    use crate::schedule::cost::UnitCost;
    use crate::schedule::testutil::expanded;
    use std::cell::Cell;

    /// AIC tiles cost their flops, AIV tiles 100; edges 10 on a rank, 1000 across ranks.
    /// Counts how often it is asked for a tile cost.
    #[derive(Default)]
    struct Counting {
        calls: Cell<u32>,
    }

    impl CostModel for Counting {
        fn tile_ns(&self, core: CoreKind, work: &Work) -> u64 {
            self.calls.set(self.calls.get() + 1);
            match core {
                CoreKind::Aic => work.flops,
                CoreKind::Aiv => 100,
            }
        }
        fn edge_ns(&self, cross_rank: bool) -> u64 {
            if cross_rank { 1000 } else { 10 }
        }
    }

    #[test]
    fn unit_cost_levels_count_nodes_on_the_longest_path() {
        // 0 → 1 → 3, 0 → 2, 2 → 3, 4 alone: a diamond with a single sink.
        let exp = expanded(1, &[(CoreKind::Aic, 5, Work::default())], &[(0, 1), (1, 3), (0, 2), (2, 3)]);
        assert_eq!(bottom_levels(&exp, &UnitCost), vec![3, 2, 2, 1, 1]);
    }

    #[test]
    fn levels_add_tile_and_edge_costs_and_ask_once_per_family() {
        // Per rank: family 0 = two AIC tiles of 7 flops (locals 0, 1), family 1 = one AIV tile
        // (local 2). Two ranks: nodes 0..3 on rank 0, 3..6 on rank 1.
        // Rank 0: 0 → 2 (local edge), 2 → 4 (cross-rank edge to an AIC tile of rank 1).
        let aic = Work { flops: 7, ..Work::default() };
        let exp = expanded(2, &[(CoreKind::Aic, 2, aic), (CoreKind::Aiv, 1, Work::default())], &[(0, 2), (2, 4)]);
        let cost = Counting::default();
        let levels = bottom_levels(&exp, &cost);
        assert_eq!(cost.calls.get(), 2, "one tile-cost query per family");
        // node 4: 7; node 2: 100 + 1000 + 7; node 0: 7 + 10 + 1107.
        assert_eq!(levels, vec![7 + 10 + 1107, 7, 1107, 7, 7, 100]);
    }

    /// Charges by family index, ignoring the work totals.
    struct ByFamily;

    impl CostModel for ByFamily {
        fn tile_ns(&self, _: CoreKind, _: &Work) -> u64 {
            1
        }
        fn family_tile_ns(&self, family: usize, _: CoreKind, _: &Work) -> u64 {
            10 * (family as u64 + 1)
        }
        fn edge_ns(&self, _: bool) -> u64 {
            0
        }
    }

    #[test]
    fn node_costs_ask_the_family_aware_method() {
        let exp = expanded(2, &[(CoreKind::Aic, 1, Work::default()), (CoreKind::Aiv, 2, Work::default())], &[]);
        assert_eq!(node_costs(&exp, &ByFamily), vec![10, 20, 20, 10, 20, 20]);
    }

    #[test]
    fn node_costs_follow_families_on_every_rank() {
        let exp = expanded(
            3,
            &[(CoreKind::Aic, 2, Work { flops: 5, ..Work::default() }), (CoreKind::Aiv, 1, Work::default())],
            &[],
        );
        assert_eq!(node_costs(&exp, &Counting::default()), vec![5, 5, 100, 5, 5, 100, 5, 5, 100]);
    }

    #[test]
    fn a_sink_ranks_with_the_readers_of_the_input_it_waits_for_last() {
        let aic = |n| [(CoreKind::Aic, n, Work::default())];
        let prio = |exp: &Expanded| priorities_with(exp, &node_costs(exp, &UnitCost), &UnitCost);
        // Chain 0 → 1 → 2 → 3; sink 4 reads 0 alone: it ranks with 0's other reader, 1.
        let exp = expanded(1, &aic(5), &[(0, 1), (1, 2), (2, 3), (0, 4)]);
        assert_eq!(bottom_levels(&exp, &UnitCost), vec![4, 3, 2, 1, 1]);
        assert_eq!(prio(&exp), vec![4, 3, 2, 1, 3]);
        // It also reads 2, which it waits for last: it ranks with 2's reader 3, not with 1.
        let exp = expanded(1, &aic(5), &[(0, 1), (1, 2), (2, 3), (0, 4), (2, 4)]);
        assert_eq!(prio(&exp), vec![4, 3, 2, 1, 1]);
        // A sink never ranks below its own bottom level, nor does a source sink change.
        let exp = expanded(1, &aic(3), &[(0, 1)]);
        assert_eq!(prio(&exp), bottom_levels(&exp, &UnitCost));
    }

    #[test]
    fn top_levels_count_the_longest_path_to_a_start() {
        // node 4 waits for 2 (after 0 and the cross-rank edge 2 → 4 of 1000).
        let aic = Work { flops: 7, ..Work::default() };
        let exp = expanded(2, &[(CoreKind::Aic, 2, aic), (CoreKind::Aiv, 1, Work::default())], &[(0, 2), (2, 4)]);
        let cost = Counting::default();
        let top = top_levels_in(&exp, &topo_order(&exp), &node_costs(&exp, &cost), Edges::of(&cost));
        assert_eq!(top, vec![0, 0, 7 + 10, 0, 7 + 10 + 100 + 1000, 0]);
    }

    proptest::proptest! {
        #[test]
        fn only_sinks_move_and_never_above_their_predecessors(seed in proptest::prelude::any::<u64>(), ranks in 1u32..=3) {
            let exp = crate::schedule::testutil::random_expanded(seed, ranks, 6, 8);
            let cost = Counting::default();
            let costs = node_costs(&exp, &cost);
            let levels = bottom_levels_with(&exp, &costs, &cost);
            let prio = priorities_with(&exp, &costs, &cost);
            for v in exp.space.node_ids() {
                let (own, got) = (levels[v.index()], prio[v.index()]);
                if !exp.dag.succ.row(v).is_empty() {
                    proptest::prop_assert_eq!(got, own);
                    continue;
                }
                // A sink never ranks below its own level, nor above what a predecessor's
                // successors need after it.
                let ceiling = exp.dag.pred.row(v).iter().map(|&u| levels[u.index()] - costs[u.index()]).max();
                proptest::prop_assert!(own <= got && got <= ceiling.unwrap_or(own).max(own), "node {}: {} -> {}", v, own, got);
            }
        }
    }
}
