//! A lower bound on the makespan of any schedule of an expanded taskflow under a cost model:
//! no schedule beats the longest dependency path, nor the busiest core kind's work spread
//! evenly over its cores. (Link contention is the simulator's part of the bound.)

use super::{CostModel, node_costs};
use crate::expand::Expanded;
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
    assert_eq!(costs.len(), exp.nodes(), "one cost per node");
    let order = exp.dag.topo_order().expect("the instance DAG is acyclic (checked before scheduling)");
    let mut finish = vec![0u64; exp.nodes()];
    let mut critical = 0;
    for &v in &order {
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
}
