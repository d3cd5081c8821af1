//! The network all ranks' puts share: per-die injection and ejection, and the server tier.
//!
//! Ranks are dies. A put from die `a` to die `b` is a *flow* through three kinds of
//! resource: `a`'s injection (every put `a` sends), `b`'s ejection (every put landing on `b`)
//! and, when `a` and `b` are on different servers, `a`'s cross-server bandwidth (the unified
//! bus's second tier). Each resource divides its bandwidth max-min fairly among its flows,
//! each capped by its own stream rate (how fast its core feeds it): the resource's *level*
//! is the rate every uncapped flow gets. A flow runs at the lowest level among its resources,
//! or its cap if lower. So no resource ever carries more than its bandwidth (each flow's
//! rate is at most its share at every resource it uses), and a flow starved at one resource
//! leaves its share at the others unused (a per-resource fairness, not a global max-min
//! allocation: rates are decided at each resource, not across the whole network).
//!
//! Exact integer arithmetic, as in the engine: a flow's progress is counted in nano-bytes
//! (a rate of `R` bytes/s over `dt` ns moves `R·dt`), and completion times are rounded up to
//! whole ns. Rates change only when a flow starts or ends, and then only for the flows that
//! share a resource with it: each change returns the flows whose completion time moved.

use hpmoe_core::cost::CostProfile;
use hpmoe_core::ids::OptId;
use std::collections::BTreeMap;

/// What the network charges, from a [`CostProfile`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct NetParams {
    /// Per die, bytes/s.
    pub inject: u64,
    pub eject: u64,
    pub cross_server: u64,
    pub dies_per_server: u32,
    /// Within a server, and to another server, ns.
    pub latency: u64,
    pub cross_server_latency: u64,
}

impl NetParams {
    pub fn of(p: &CostProfile) -> Self {
        NetParams {
            inject: p.link_bytes_per_s(),
            eject: p.ejection_bytes_per_s(),
            cross_server: p.cross_server_bytes_per_s(),
            dies_per_server: p.dies_per_server(),
            latency: p.link_latency(),
            cross_server_latency: p.cross_server_latency_ns.ceil() as u64,
        }
    }

    /// Whether dies `a` and `b` are on different servers.
    pub fn crosses(&self, a: u32, b: u32) -> bool {
        a / self.dies_per_server.max(1) != b / self.dies_per_server.max(1)
    }

    /// Latency of a message from die `a` to die `b` (0 on the same die), ns.
    pub fn latency(&self, a: u32, b: u32) -> u64 {
        match (a == b, self.crosses(a, b)) {
            (true, _) => 0,
            (false, false) => self.latency,
            (false, true) => self.cross_server_latency,
        }
    }
}

/// One resource: its bandwidth, the caps of its active flows, and its level.
#[derive(Clone, Debug)]
struct Resource {
    bytes_per_s: u64,
    /// Cap → number of active flows with that cap.
    caps: BTreeMap<u64, u32>,
    /// Active flows (task ids), in the order they started (swap-removed).
    flows: Vec<u32>,
    /// The rate an uncapped flow gets; `u64::MAX` when every flow's cap is below its share.
    level: u64,
}

impl Resource {
    fn new(bytes_per_s: u64) -> Self {
        Resource { bytes_per_s: bytes_per_s.max(1), caps: BTreeMap::new(), flows: Vec::new(), level: u64::MAX }
    }

    /// Max-min water level: flows in increasing cap take their cap while it is below the
    /// equal share of what is left; the rest share what is left equally (floored).
    fn relevel(&mut self) {
        let mut left = self.bytes_per_s;
        let mut n: u64 = self.caps.values().map(|&k| u64::from(k)).sum();
        self.level = u64::MAX;
        for (&cap, &k) in &self.caps {
            let share = left / n.max(1);
            if cap >= share {
                self.level = share.max(1);
                return;
            }
            left -= cap * u64::from(k);
            n -= u64::from(k);
        }
    }
}

/// One put in flight.
#[derive(Clone, Copy, Debug, Default)]
struct Flow {
    cap: u64,
    /// Its resources: injection, ejection, and cross-server (none within a server).
    res: [OptId<ResourceId>; 3],
    /// Nano-bytes still to send, as of `since`.
    left: u128,
    since: u64,
    rate: u64,
    /// Bumped whenever its completion time changes; stale wake-ups carry old versions.
    version: u64,
    active: bool,
}

hpmoe_core::define_id! {
    /// A resource of the fabric, an index into `Fabric::resources`: rank r's injection is
    /// r, its ejection ranks + r, its cross-server tier 2·ranks + r.
    struct ResourceId;
}

/// A completion to check at `at`: flow `task`, valid while its version is `version`.
pub(crate) type Due = (u64, u32, u64);

/// The network. See the [module docs](self).
#[derive(Clone, Debug)]
pub(crate) struct Fabric {
    params: NetParams,
    ranks: u32,
    /// Injection of rank r at r, its ejection at ranks + r, its cross-server at 2·ranks + r.
    resources: Vec<Resource>,
    /// Indexed by task id.
    flows: Vec<Flow>,
}

impl Fabric {
    pub fn new(params: NetParams, ranks: u32, tasks: usize) -> Self {
        let mut resources = Vec::with_capacity(3 * ranks as usize);
        for bytes_per_s in [params.inject, params.eject, params.cross_server] {
            resources.extend((0..ranks).map(|_| Resource::new(bytes_per_s)));
        }
        Fabric { params, ranks, resources, flows: vec![Flow::default(); tasks] }
    }

    /// Starts the put of task `task`: `bytes` from rank `from` to rank `to` at most `cap`
    /// bytes/s. Returns the completions to check.
    pub fn start(&mut self, now: u64, task: u32, bytes: u64, cap: u64, from: u32, to: u32) -> Vec<Due> {
        let cross = if self.params.crosses(from, to) {
            OptId::some(ResourceId::new(2 * self.ranks + from))
        } else {
            OptId::NONE
        };
        let cap = cap.max(1);
        let res = [OptId::some(ResourceId::new(from)), OptId::some(ResourceId::new(self.ranks + to)), cross];
        self.flows[task as usize] = Flow {
            cap,
            res,
            left: u128::from(bytes) * 1_000_000_000,
            since: now,
            rate: 0,
            version: self.flows[task as usize].version + 1,
            active: true,
        };
        for r in res.iter().filter_map(|r| r.get()) {
            let resource = &mut self.resources[r.index()];
            *resource.caps.entry(cap).or_insert(0) += 1;
            resource.flows.push(task);
            resource.relevel();
        }
        self.reprice(now, res)
    }

    /// Whether `task`'s put is done at `now` if `version` is still current; if so, ends it
    /// and returns the completions to check for the flows whose rates changed.
    pub fn finish_if_due(&mut self, now: u64, task: u32, version: u64) -> Option<Vec<Due>> {
        let f = self.flows[task as usize];
        if !f.active || f.version != version {
            return None;
        }
        let left = f.left.saturating_sub(u128::from(f.rate) * u128::from(now - f.since));
        if left > 0 {
            return None;
        }
        self.flows[task as usize].active = false;
        for r in f.res.iter().filter_map(|r| r.get()) {
            let resource = &mut self.resources[r.index()];
            let k = resource.caps.get_mut(&f.cap).expect("an active flow's cap is counted");
            *k -= 1;
            if *k == 0 {
                resource.caps.remove(&f.cap);
            }
            let i = resource.flows.iter().position(|&t| t == task).expect("an active flow is listed");
            resource.flows.swap_remove(i);
            resource.relevel();
        }
        Some(self.reprice(now, f.res))
    }

    /// Re-rates every active flow on resources `res` at `now`; returns the completions of
    /// those whose rate changed.
    fn reprice(&mut self, now: u64, res: [OptId<ResourceId>; 3]) -> Vec<Due> {
        let mut due = Vec::new();
        for r in res.iter().filter_map(|r| r.get()) {
            for i in 0..self.resources[r.index()].flows.len() {
                let task = self.resources[r.index()].flows[i];
                let f = self.flows[task as usize];
                let level = f
                    .res
                    .iter()
                    .filter_map(|q| q.get())
                    .map(|q| self.resources[q.index()].level)
                    .min()
                    .unwrap_or(u64::MAX);
                let rate = f.cap.min(level).max(1);
                if rate == f.rate {
                    continue;
                }
                let left = f.left.saturating_sub(u128::from(f.rate) * u128::from(now - f.since));
                let version = f.version + 1;
                self.flows[task as usize] = Flow { left, since: now, rate, version, ..f };
                let dt = u64::try_from(left.div_ceil(u128::from(rate))).unwrap_or(u64::MAX);
                due.push((now.saturating_add(dt), task, version));
            }
        }
        due
    }

    /// Flows in flight.
    #[cfg(test)]
    pub fn active(&self) -> usize {
        self.flows.iter().filter(|f| f.active).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GBPS: u64 = 1_000_000_000; // 1 byte/ns

    fn params(inject: u64, eject: u64, cross_server: u64, dies_per_server: u32) -> NetParams {
        NetParams { inject, eject, cross_server, dies_per_server, latency: 1000, cross_server_latency: 2000 }
    }

    /// Runs puts `(start, bytes, cap, from, to)`; returns each put's end time.
    fn run(p: NetParams, ranks: u32, puts: &[(u64, u64, u64, u32, u32)]) -> Vec<u64> {
        let mut net = Fabric::new(p, ranks, puts.len());
        let mut ends = vec![u64::MAX; puts.len()];
        let mut pending: Vec<Due> = Vec::new();
        let mut starts: Vec<usize> = (0..puts.len()).collect();
        starts.sort_by_key(|&i| (puts[i].0, i));
        let mut next = 0;
        loop {
            pending.sort_unstable();
            let t_start = starts.get(next).map(|&i| puts[i].0);
            let t_due = pending.first().map(|d| d.0);
            match (t_start, t_due) {
                (None, None) => break,
                (Some(s), d) if d.is_none_or(|d| s < d) => {
                    let i = starts[next];
                    let (_, bytes, cap, from, to) = puts[i];
                    pending.extend(net.start(s, i as u32, bytes, cap, from, to));
                    next += 1;
                }
                (_, Some(_)) => {
                    let (at, task, version) = pending.remove(0);
                    if let Some(more) = net.finish_if_due(at, task, version) {
                        ends[task as usize] = at;
                        pending.extend(more);
                    }
                }
                (Some(_), None) => unreachable!(),
            }
        }
        assert_eq!(net.active(), 0);
        ends
    }

    #[test]
    fn a_lone_put_runs_at_the_slowest_of_its_cap_injection_and_ejection() {
        let p = params(4 * GBPS, 2 * GBPS, GBPS, 16);
        assert_eq!(run(p, 2, &[(0, 1000, 10 * GBPS, 0, 1)]), vec![500]);
        assert_eq!(run(p, 2, &[(10, 1000, GBPS, 0, 1)]), vec![1010]);
        // To another server the cross-server bandwidth binds too.
        assert_eq!(run(params(4 * GBPS, 4 * GBPS, GBPS, 1), 2, &[(0, 1000, u64::MAX, 0, 1)]), vec![1000]);
    }

    #[test]
    fn puts_from_one_rank_share_its_injection() {
        let p = params(2 * GBPS, 100 * GBPS, 100 * GBPS, 16);
        // Two puts of 1000 B at 1 B/ns each; then a put starting at 200 when the first has
        // 800 B left: 1 B/ns each until the first ends at 1000 (the second sent 800 by then).
        assert_eq!(run(p, 3, &[(0, 1000, u64::MAX, 0, 1), (0, 1000, u64::MAX, 0, 2)]), vec![1000, 1000]);
        assert_eq!(run(p, 3, &[(0, 1000, u64::MAX, 0, 1), (200, 1000, u64::MAX, 0, 2)]), vec![800, 1000]);
    }

    #[test]
    fn puts_into_one_rank_share_its_ejection_and_leave_injection_unused() {
        // Ranks 1 and 2 each put 1000 B into rank 0, which takes 2 B/ns: 1 B/ns each.
        let p = params(4 * GBPS, 2 * GBPS, 100 * GBPS, 16);
        assert_eq!(run(p, 3, &[(0, 1000, u64::MAX, 1, 0), (0, 1000, u64::MAX, 2, 0)]), vec![500 * 2, 1000]);
        // Rank 1 also puts into rank 2: its injection (4 B/ns) has room, so that put is not
        // slowed down to the ejection's share of the other.
        let ends = run(p, 3, &[(0, 1000, u64::MAX, 1, 0), (0, 1000, u64::MAX, 2, 0), (0, 2000, u64::MAX, 1, 2)]);
        assert_eq!(ends, vec![1000, 1000, 1000]);
    }

    #[test]
    fn a_capped_put_leaves_its_unused_share_to_the_others() {
        // Injection 4 B/ns; A capped at 1 B/ns, B uncapped: A gets 1, B gets 3.
        let p = params(4 * GBPS, 100 * GBPS, 100 * GBPS, 16);
        assert_eq!(run(p, 3, &[(0, 2000, GBPS, 0, 1), (0, 3000, u64::MAX, 0, 2)]), vec![2000, 1000]);
        // Three puts capped at 3 B/ns: 4/3 B/ns each, floored, so 400 B take just over 300 ns.
        let three = [(0, 400, 3 * GBPS, 0, 1), (0, 400, 3 * GBPS, 0, 2), (0, 400, 3 * GBPS, 0, 3)];
        assert_eq!(run(p, 4, &three), vec![301, 301, 301]);
    }

    #[test]
    fn latency_grows_across_servers() {
        let p = params(GBPS, GBPS, GBPS, 16);
        assert_eq!((p.latency(3, 3), p.latency(3, 15), p.latency(15, 16)), (0, 1000, 2000));
    }
}
