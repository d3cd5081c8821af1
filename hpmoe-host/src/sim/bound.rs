//! The lower bound every report prints beside a makespan: no run of the taskflow under
//! the cost model — simulated taskflow, kernel-by-kernel baseline or any other schedule —
//! can be shorter than
//!
//! `max(critical path, AIC work / #AIC, AIV work / #AIV, AIC span, AIV span, busiest
//! injection, busiest ejection, busiest cross-server traffic, busiest HBM)`
//!
//! with every tile at its *uncontended* time (exec plus its put alone on an idle network; no
//! polls, signals or latencies) and work and bytes taken per rank (the busiest rank): the
//! bytes a rank puts over its injection bandwidth, the bytes landing on a rank over its
//! ejection bandwidth, the bytes a rank puts to other servers over the cross-server
//! bandwidth, and the HBM bytes of a rank's exec phases over its HBM bandwidth. The
//! simulator never lets a resource move more than its bandwidth ([`super::fabric`],
//! [`super::hbm`]), so each term holds for every run it prices. The span terms
//! ([`super::span`]) are a rank's work on one kind with what must precede it on those cores and
//! follow it: no core computes before its first tile's inputs can exist, nor stops before the
//! run's end minus what its last tile's descendants still need.

use super::SimError;
use super::fabric::NetParams;
use super::program::{check_families, lower_node, node_hbm_bytes};
use super::span::span_terms;
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
    /// The largest span of a rank's AIC work: with the heads and tails no core can avoid
    /// (the argument is in `hpmoe-host/src/sim/span.rs`); at least `aic_work_per_core_ns`.
    pub aic_span_ns: u64,
    /// The same for the AIV work.
    pub aiv_span_ns: u64,
    /// The busiest link's bytes over the link bandwidth.
    pub link_ns: u64,
    /// Bytes through the busiest link.
    pub busiest_link_bytes: u64,
    /// The bytes landing on the busiest receiving rank over the ejection bandwidth.
    pub ejection_ns: u64,
    /// The busiest rank's bytes to other servers over the cross-server bandwidth.
    pub cross_server_ns: u64,
    /// The busiest rank's HBM bytes over the HBM bandwidth.
    pub hbm_ns: u64,
}

impl Bound {
    /// The bound, ns: the largest of its `*_ns` terms, each a time no run of these tiles on this
    /// machine can beat.
    pub fn ns(&self) -> u64 {
        self.critical_path_ns
            .max(self.aic_work_per_core_ns)
            .max(self.aiv_work_per_core_ns)
            .max(self.aic_span_ns)
            .max(self.aiv_span_ns)
            .max(self.link_ns)
            .max(self.ejection_ns)
            .max(self.cross_server_ns)
            .max(self.hbm_ns)
    }

    /// Which term is the maximum: "AIC span", "AIV span", "critical path", "AIC work", "AIV work",
    /// "AIV span", "link", "ejection", "cross-server" or "HBM"; of equal terms the last named
    /// here (a span equal to the critical path or the work is named by those).
    pub fn binding(&self) -> &'static str {
        let terms = [
            (self.aic_span_ns, "AIC span"),
            (self.aiv_span_ns, "AIV span"),
            (self.critical_path_ns, "critical path"),
            (self.aic_work_per_core_ns, "AIC work"),
            (self.aiv_work_per_core_ns, "AIV work"),
            (self.link_ns, "link"),
            (self.ejection_ns, "ejection"),
            (self.cross_server_ns, "cross-server"),
            (self.hbm_ns, "HBM"),
        ];
        terms.iter().max_by_key(|t| t.0).map_or("critical path", |t| t.1)
    }
}

/// Uncontended time of every node, ns.
pub(crate) fn node_min_ns(exp: &Expanded, cost: &TaskflowCost) -> Vec<u64> {
    let net = NetParams::of(cost.profile());
    exp.space
        .node_ids()
        .map(|v| {
            let (exec, put, _) = lower_node(exp, cost, v);
            exec.saturating_add(put.map_or(0, |p| {
                let mut rate = p.cap.min(net.inject).min(net.eject);
                if net.crosses(exp.space.rank_of(v).raw(), p.to.raw()) {
                    rate = rate.min(net.cross_server);
                }
                ns_at_rate(p.bytes, rate)
            }))
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
    let ranks = exp.space.ranks as usize;
    let net = NetParams::of(cost.profile());
    let (mut link_bytes, mut landing, mut cross, mut hbm) =
        (vec![0u64; ranks], vec![0u64; ranks], vec![0u64; ranks], vec![0u64; ranks]);
    let node_hbm: Vec<u64> = exp.space.node_ids().map(|v| node_hbm_bytes(exp, cost, v)).collect();
    let [aic_span_ns, aiv_span_ns] = span_terms(exp, profile, &costs, &node_hbm, cost.profile().hbm_bytes_per_s());
    for v in exp.space.node_ids() {
        let rank = exp.space.rank_of(v).raw();
        let r = rank as usize;
        hbm[r] = hbm[r].saturating_add(node_hbm[v.index()]);
        if let (_, Some(put), _) = lower_node(exp, cost, v) {
            link_bytes[r] = link_bytes[r].saturating_add(put.bytes);
            landing[put.to.index()] = landing[put.to.index()].saturating_add(put.bytes);
            if net.crosses(rank, put.to.raw()) {
                cross[r] = cross[r].saturating_add(put.bytes);
            }
        }
    }
    let busiest = |v: &[u64]| v.iter().copied().max().unwrap_or(0);
    Ok(Bound {
        critical_path_ns: compute.critical_path_ns,
        aic_work_per_core_ns: compute.aic_work_per_core_ns,
        aiv_work_per_core_ns: compute.aiv_work_per_core_ns,
        aic_span_ns,
        aiv_span_ns,
        link_ns: ns_at_rate(busiest(&link_bytes), net.inject),
        busiest_link_bytes: busiest(&link_bytes),
        ejection_ns: ns_at_rate(busiest(&landing), net.eject),
        cross_server_ns: ns_at_rate(busiest(&cross), net.cross_server),
        hbm_ns: ns_at_rate(busiest(&hbm), cost.profile().hbm_bytes_per_s()),
    })
}
