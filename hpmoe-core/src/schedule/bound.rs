//! A lower bound on the makespan of any schedule of an expanded taskflow under a cost model:
//! no schedule beats the longest dependency path, nor the busiest core kind's work spread
//! evenly over its cores. (Link contention is the simulator's part of the bound.)

use super::{CostModel, node_costs};
use crate::expand::Expanded;
use crate::ids::NodeId;
use crate::model::{CoreKind, MachineProfile};

/// The parts of the bound, in ns; [`LowerBound::ns`] is their maximum.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LowerBound {
    /// Longest path of tile costs (sync latencies left out: same-core edges have none).
    pub critical_path_ns: u64,
    /// The busiest rank's AIC work divided by its AIC count (rounded up).
    pub aic_work_per_core_ns: u64,
    /// The busiest rank's AIV work divided by its AIV count (rounded up).
    pub aiv_work_per_core_ns: u64,
}

impl LowerBound {
    /// The bound, ns: the largest of the three terms.
    pub fn ns(&self) -> u64 {
        self.critical_path_ns.max(self.aic_work_per_core_ns).max(self.aiv_work_per_core_ns)
    }
}

/// Computes the bound. O(V + E).
///
/// # Panics
/// If the DAG has a cycle (the checks refuse those before scheduling).
pub fn lower_bound(exp: &Expanded, profile: &MachineProfile, cost: &dyn CostModel) -> LowerBound {
    lower_bound_of(exp, profile, &node_costs(exp, cost))
}

/// [`lower_bound`] with every node's time given (`costs[node]`, ns): the simulator calls it
/// with uncontended times and adds the link term.
///
/// # Panics
/// If the DAG has a cycle, or `costs` has not one entry per node.
pub fn lower_bound_of(exp: &Expanded, profile: &MachineProfile, costs: &[u64]) -> LowerBound {
    let order = exp.dag.topo_order().expect("the instance DAG is acyclic (checked before scheduling)");
    lower_bound_along(exp, &order, profile, costs)
}

/// [`lower_bound_of`] along `order`, a topological order of the instance DAG that the caller
/// has already computed (the pipeline computes one per plan, for its ordering checks, and
/// passes it down), instead of computing one. The result does not depend on which
/// topological order it is.
///
/// # Panics
/// If `costs` or `order` has not one entry per node. (An order that is not topological gives
/// a wrong critical path: the caller's order must be one.)
pub fn lower_bound_along(exp: &Expanded, order: &[NodeId], profile: &MachineProfile, costs: &[u64]) -> LowerBound {
    assert_eq!(costs.len(), exp.nodes(), "one cost per node");
    assert_eq!(order.len(), exp.nodes(), "the order has every node once");
    let mut finish = vec![0u64; exp.nodes()];
    let mut critical = 0;
    for &v in order {
        let start = exp.dag.pred.row(v).iter().map(|&p| finish[p.index()]).max().unwrap_or(0);
        finish[v.index()] = start.saturating_add(costs[v.index()]);
        critical = critical.max(finish[v.index()]);
    }
    let ranks = exp.space.ranks as usize;
    let mut work = vec![[0u64; 2]; ranks];
    for v in exp.space.node_ids() {
        let k = usize::from(exp.core_kind(v) == CoreKind::Aiv);
        let w = &mut work[exp.space.rank_of(v).index()][k];
        *w = w.saturating_add(costs[v.index()]);
    }
    let per_core =
        |k: usize, cores: u32| work.iter().map(|w| w[k].div_ceil(u64::from(cores.max(1)))).max().unwrap_or(0);
    LowerBound {
        critical_path_ns: critical,
        aic_work_per_core_ns: per_core(0, profile.aic_per_rank),
        aiv_work_per_core_ns: per_core(1, profile.aiv_per_rank()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expand::{InstanceSpace, Work};
    use crate::graph::Dag;
    use crate::schedule::{UnitCost, list_schedule};
    use smallvec::smallvec;

    #[test]
    fn bound_is_the_longest_path_or_the_busiest_kind() {
        // A chain of 3 AIC tiles next to 10 independent AIV tiles, on 1 AIC + 2 AIV.
        let exp = Expanded {
            space: InstanceSpace::new(1, [smallvec![3], smallvec![10]]),
            dag: Dag::of(13, &[(0, 1), (1, 2)]),
            family_core: vec![CoreKind::Aic, CoreKind::Aiv],
            family_work: vec![Work::default(); 2],
            rotation: vec![0; 13].into(),
        };
        let profile = MachineProfile::small(1, 1);
        let b = lower_bound(&exp, &profile, &UnitCost);
        assert_eq!((b.critical_path_ns, b.aic_work_per_core_ns, b.aiv_work_per_core_ns), (3, 3, 5));
        assert_eq!(b.ns(), 5);
        assert!(list_schedule(&exp, &profile, &UnitCost).makespan_ns >= b.ns());
    }

    /// A topological order other than [`Dag::topo_order`]'s: Kahn's algorithm taking the
    /// most recently freed node first (a stack, not a queue).
    fn last_freed_first(dag: &Dag) -> Vec<NodeId> {
        let mut indeg: Vec<usize> = dag.pred.row_ids().map(|v| dag.pred.degree(v)).collect();
        let mut stack: Vec<NodeId> = dag.pred.row_ids().filter(|&v| indeg[v.index()] == 0).collect();
        let mut order = Vec::new();
        while let Some(v) = stack.pop() {
            order.push(v);
            for &s in dag.succ.row(v) {
                indeg[s.index()] -= 1;
                if indeg[s.index()] == 0 {
                    stack.push(s);
                }
            }
        }
        order
    }

    /// The pipeline passes its one topological order down: the bound and the priorities must
    /// not depend on which order that is.
    #[test]
    fn any_topological_order_gives_the_same_bound_and_priorities() {
        use crate::schedule::SimpleCost;
        use crate::schedule::priority::{Edges, priorities_along, priorities_with};
        use crate::schedule::testutil::{profile, random_expanded};
        let mut differ = 0;
        for seed in 0..60 {
            let ranks = 1 + (seed % 3) as u32;
            let exp = random_expanded(seed, ranks, 6, 12);
            let cost = SimpleCost::default();
            let costs = node_costs(&exp, &cost);
            let prof = profile(2, 2, ranks);
            let order = last_freed_first(&exp.dag);
            assert_eq!(order.len(), exp.nodes());
            differ += usize::from(order != exp.dag.topo_order().unwrap());
            assert_eq!(
                lower_bound_along(&exp, &order, &prof, &costs),
                lower_bound_of(&exp, &prof, &costs),
                "seed {seed}"
            );
            assert_eq!(
                priorities_along(&exp, &order, &costs, Edges::of(&cost)),
                priorities_with(&exp, &costs, &cost),
                "seed {seed}"
            );
        }
        assert!(differ > 30, "the cases use orders other than the DAG's own ({differ} of 60)");
    }
}
