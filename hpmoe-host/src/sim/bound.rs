//! The lower bound every report prints beside a makespan: no run of the taskflow under
//! the cost model — simulated taskflow, kernel-by-kernel baseline or any other schedule —
//! can be shorter than
//!
//! `max(critical path, AIC work / #AIC, AIV work / #AIV, busiest link bytes / link bandwidth)`
//!
//! with every tile at its *uncontended* time (exec plus its put alone on an idle link; no
//! polls, signals or latencies) and work and link bytes taken per rank (the busiest rank).

use super::SimError;
use super::program::{check_families, lower_node};
use hpmoe_core::cost::{TaskflowCost, ns_at_rate};
use hpmoe_core::expand::Expanded;
use hpmoe_core::model::MachineProfile;

/// The parts of the bound, ns; [`Bound::ns`] is their maximum.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Bound {
    /// Longest dependency path of uncontended tile times.
    pub critical_path_ns: u64,
    /// The busiest rank's AIC work over its AIC count (rounded up).
    pub aic_work_per_core_ns: u64,
    /// The busiest rank's AIV work over its AIV count (rounded up).
    pub aiv_work_per_core_ns: u64,
    /// The busiest link's bytes over the link bandwidth.
    pub link_ns: u64,
    /// Bytes through the busiest link.
    pub busiest_link_bytes: u64,
}

impl Bound {
    pub fn ns(&self) -> u64 {
        self.critical_path_ns.max(self.aic_work_per_core_ns).max(self.aiv_work_per_core_ns).max(self.link_ns)
    }

    /// Which term is the maximum: "critical path", "AIC work", "AIV work" or "link".
    pub fn binding(&self) -> &'static str {
        let terms = [
            (self.critical_path_ns, "critical path"),
            (self.aic_work_per_core_ns, "AIC work"),
            (self.aiv_work_per_core_ns, "AIV work"),
            (self.link_ns, "link"),
        ];
        terms.iter().max_by_key(|t| t.0).map_or("critical path", |t| t.1)
    }
}

/// Uncontended time of every node, ns.
pub(crate) fn node_min_ns(exp: &Expanded, cost: &TaskflowCost) -> Vec<u64> {
    let link = cost.profile().link_bytes_per_s();
    (0..exp.nodes() as u32)
        .map(|v| {
            let (exec, put, _) = lower_node(exp, cost, v);
            exec.saturating_add(put.map_or(0, |p| ns_at_rate(p.bytes, p.cap.min(link))))
        })
        .collect()
}

/// Computes the bound. O(V + E).
///
/// # Errors
/// [`SimError::Mismatch`] if `cost` was built for another taskflow.
///
/// # Panics
/// If the DAG has a cycle (the checks refuse those before scheduling).
pub fn lower_bound(exp: &Expanded, profile: &MachineProfile, cost: &TaskflowCost) -> Result<Bound, SimError> {
    check_families(exp, cost)?;
    let costs = node_min_ns(exp, cost);
    let compute = hpmoe_core::schedule::lower_bound_of(exp, profile, &costs);
    let mut link_bytes = vec![0u64; exp.space.ranks as usize];
    for v in 0..exp.nodes() as u32 {
        if let (_, Some(put), _) = lower_node(exp, cost, v) {
            let rank = exp.space.rank_of(v) as usize;
            link_bytes[rank] = link_bytes[rank].saturating_add(put.bytes);
        }
    }
    let busiest = link_bytes.iter().copied().max().unwrap_or(0);
    Ok(Bound {
        critical_path_ns: compute.critical_path_ns,
        aic_work_per_core_ns: compute.aic_work_per_core_ns,
        aiv_work_per_core_ns: compute.aiv_work_per_core_ns,
        link_ns: ns_at_rate(busiest, cost.profile().link_bytes_per_s()),
        busiest_link_bytes: busiest,
    })
}
