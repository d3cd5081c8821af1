//! The span terms of the lower bound: a rank's work on one core kind, with what must come
//! before it and what must follow it.
//!
//! The work term alone (a rank's AIC work over its AIC count) assumes the cores compute from
//! the first nanosecond to the last. They cannot: before a tile can start, its ancestors must
//! have run (the *head*), and after it ends, its descendants must (the *tail*). On one core
//! `c` of a (rank, kind) with `m` cores, the first tile starts no earlier than its head, the
//! tiles run one after another, and the run goes on at least the last tile's tail after it;
//! so the makespan `T` satisfies `T ≥ head(first_c) + busy(c) + tail(last_c)`. Summed over the
//! `j ≤ m` cores that run something (their first tiles are distinct, and so are their last):
//! `j·T ≥ H_j + W + L_j`, with `W` the kind's work on the rank and `H_j`, `L_j` the sums of
//! the `j` smallest heads and tails among its tiles. So `T ≥ min over j of (H_j + W + L_j) / j`.
//!
//! Heads are longest paths of uncontended tile times from a source. Tails are longest paths
//! to a sink, and also count *groups*: tiles of one rank and kind with the same predecessors
//! (a naturally routed layer's weighted sums, every one of which waits for every combine put
//! landing on the rank). None of a group can start before each of its predecessors has
//! finished, so after any predecessor the group's work still needs its share of the kind's
//! cores (`W(G) / m`) and its HBM bytes the die's HBM (`HBM(G) / bandwidth`: the simulator's
//! HBM never moves more than its bandwidth, [`super::hbm`]), and then its smallest tail. A
//! predecessor's tail is at least that. Every time used is a true minimum of the simulator
//! (uncontended tile times; waits, polls, signals and latencies only add), so the terms hold
//! for every run it prices; `hpmoe-host/tests/host/sim.rs` checks them against random taskflows.

use hpmoe_core::cost::ns_at_rate;
use hpmoe_core::expand::Expanded;
use hpmoe_core::ids::NodeId;
use hpmoe_core::model::{CoreKind, MachineProfile};
use std::collections::BTreeMap;

/// Per core kind (AIC, AIV): the largest span term over the ranks, ns.
///
/// `costs` and `hbm` are per node: its uncontended time and its HBM bytes; `hbm_bytes_per_s`
/// the HBM bandwidth of a die.
///
/// # Panics
/// If the DAG has a cycle (the checks refuse those before scheduling).
pub(super) fn span_terms(
    exp: &Expanded,
    profile: &MachineProfile,
    costs: &[u64],
    hbm: &[u64],
    hbm_bytes_per_s: u64,
) -> [u64; 2] {
    let order = exp.dag.topo_order().expect("the instance DAG is acyclic (checked before scheduling)");
    let kind = |v: NodeId| usize::from(exp.core_kind(v) == CoreKind::Aiv);
    let cores = [profile.aic_per_rank, profile.aiv_per_rank()].map(|c| u64::from(c.max(1)));
    let groups = Groups::of(exp);

    let mut head = vec![0u64; exp.nodes()];
    for &v in &order {
        let ready = |p: &NodeId| head[p.index()].saturating_add(costs[p.index()]);
        head[v.index()] = exp.dag.pred.row(v).iter().map(ready).max().unwrap_or(0);
    }

    // Per group: its work over its kind's cores or its HBM bytes over the bandwidth, and the
    // smallest tail of a member (complete once every member's tail is: before any
    // predecessor's, since a reverse topological order visits a node's successors first).
    let mut need = vec![0u64; groups.count];
    let mut bytes = vec![0u64; groups.count];
    for v in exp.space.node_ids() {
        if let Some(g) = groups.of[v.index()] {
            need[g] = need[g].saturating_add(costs[v.index()]);
            bytes[g] = bytes[g].saturating_add(hbm[v.index()]);
        }
    }
    for (g, need) in need.iter_mut().enumerate() {
        let per_core = need.div_ceil(cores[groups.kind[g]]);
        *need = per_core.max(ns_at_rate(bytes[g], hbm_bytes_per_s.max(1)));
    }
    let mut least_tail = vec![u64::MAX; groups.count];
    let mut tail = vec![0u64; exp.nodes()];
    for &v in order.iter().rev() {
        let t = exp
            .dag
            .succ
            .row(v)
            .iter()
            .map(|&s| {
                let path = costs[s.index()].saturating_add(tail[s.index()]);
                groups.of[s.index()].map_or(path, |g| path.max(need[g].saturating_add(least_tail[g])))
            })
            .max()
            .unwrap_or(0);
        tail[v.index()] = t;
        if let Some(g) = groups.of[v.index()] {
            least_tail[g] = least_tail[g].min(t);
        }
    }

    // Per (rank, kind): work, heads and tails.
    let ranks = exp.space.ranks as usize;
    let mut work = vec![[0u64; 2]; ranks];
    let mut heads = vec![[Vec::new(), Vec::new()]; ranks];
    let mut tails = vec![[Vec::new(), Vec::new()]; ranks];
    for v in exp.space.node_ids() {
        let (r, k) = (exp.space.rank_of(v).index(), kind(v));
        work[r][k] = work[r][k].saturating_add(costs[v.index()]);
        heads[r][k].push(head[v.index()]);
        tails[r][k].push(tail[v.index()]);
    }
    let mut terms = [0u64; 2];
    for r in 0..ranks {
        for k in 0..2 {
            let m = cores[k] as usize;
            let term = span(work[r][k], &mut heads[r][k], &mut tails[r][k], m);
            terms[k] = terms[k].max(term);
        }
    }
    terms
}

/// `min over j ≤ m of ⌈(H_j + work + L_j) / j⌉`, `H_j` and `L_j` the sums of the `j` smallest
/// `heads` and `tails` (one per tile; `j` at most their number); 0 without tiles.
fn span(work: u64, heads: &mut [u64], tails: &mut [u64], m: usize) -> u64 {
    let j_max = m.min(heads.len());
    if j_max == 0 {
        return 0;
    }
    let smallest = |v: &mut [u64]| {
        if v.len() > j_max {
            v.select_nth_unstable(j_max - 1);
        }
        let mut s = v[..j_max].to_vec();
        s.sort_unstable();
        s
    };
    let (h, l) = (smallest(heads), smallest(tails));
    let (mut sum_h, mut sum_l) = (0u64, 0u64);
    let mut best = u64::MAX;
    for j in 1..=j_max {
        sum_h = sum_h.saturating_add(h[j - 1]);
        sum_l = sum_l.saturating_add(l[j - 1]);
        best = best.min(sum_h.saturating_add(work).saturating_add(sum_l).div_ceil(j as u64));
    }
    best
}

/// Tiles grouped by (rank, kind, predecessors): every tile with at least one predecessor is
/// in exactly one group.
struct Groups {
    /// Per node: its group.
    of: Vec<Option<usize>>,
    /// Per group: its kind (0 AIC, 1 AIV).
    kind: Vec<usize>,
    count: usize,
}

impl Groups {
    fn of(exp: &Expanded) -> Groups {
        let mut ids: BTreeMap<(u32, usize, &[NodeId]), usize> = BTreeMap::new();
        let mut kind = Vec::new();
        let of = exp
            .space
            .node_ids()
            .map(|v| {
                let preds = exp.dag.pred.row(v);
                if preds.is_empty() {
                    return None;
                }
                let k = usize::from(exp.core_kind(v) == CoreKind::Aiv);
                let next = ids.len();
                let g = *ids.entry((exp.space.rank_of(v).raw(), k, preds)).or_insert(next);
                if g == next {
                    kind.push(k);
                }
                Some(g)
            })
            .collect();
        Groups { of, count: kind.len(), kind }
    }
}

#[cfg(test)]
mod tests {
    use super::span;

    #[test]
    fn the_span_takes_the_best_number_of_cores() {
        // Two cores, work 10: heads 0 and 8, tails 1 and 9. One core: 0 + 10 + 1 = 11;
        // both: (8 + 10 + 10) / 2 = 14. The bound is the smaller, 11.
        assert_eq!(span(10, &mut [8, 0], &mut [9, 1], 2), 11);
        // Equal heads and tails: work over cores plus a head and a tail.
        assert_eq!(span(10, &mut [3, 3, 3], &mut [2, 2, 2], 2), 10);
        assert_eq!(span(100, &mut [3, 3, 3], &mut [2, 2, 2], 2), 55);
        assert_eq!(span(0, &mut [], &mut [], 4), 0);
    }
}
