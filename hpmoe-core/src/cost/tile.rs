//! Tile costs under a [`CostProfile`]: what the scheduler, the simulator, the baseline and
//! the lower bound all charge for one tile instance.
//!
//! # The tile model
//!
//! A tile instance runs on one core:
//!
//! 1. **exec** — `tile_overhead + max(compute, reads, writes)` (a roofline: the core's
//!    compute unit, its read DMA and its write DMA overlap), plus `put_setup` for a tile that
//!    puts to another rank, where
//!    - compute = flops / (cube peak × `cube_efficiency`) on an AIC, flops / vector rate on
//!      an AIV;
//!    - reads = cold bytes / HBM read rate + L2-eligible bytes × hit rate / L2 read rate
//!      + L2-eligible bytes × (1 − hit rate) / HBM read rate (one read path, so the parts add);
//!    - writes = bytes / the kind's write rate.
//! 2. **put** (tiles that write to another rank) — the put's bytes stream through the
//!    rank's link. One put can stream no faster than its core reads the source and writes
//!    it out (`stream_bytes_per_s`); concurrent puts of a rank share the link (the
//!    simulator's part; the scheduler keeps a few puts in flight per rank, see
//!    [`crate::schedule::list_schedule`]). Uncontended, a put takes `bytes / min(stream, link)`. A put whose
//!    destination is its own rank is a local copy at the stream rate and does not touch the
//!    link. The core is busy until its put has left (a blocking put).
//! 3. **sync** — a counter wait costs one poll (a global-memory read) after the counter
//!    reaches its target; each signal costs its issue (a global-memory write) on the
//!    signalling core, and a signal to another rank lands `link_latency` later.
//!
//! Every time is rounded up to whole ns, so estimates are exact integers and deterministic.

use super::Activity;
use super::profile::CostProfile;
use super::traffic::{FamilyTraffic, Reads, family_traffic};
use crate::expand::Work;
use crate::ids::NodeId;
use crate::model::{CoreKind, Taskflow};
use crate::schedule::{CostModel, NetworkLimits, PutShape};

/// Nanoseconds to move `amount` units at `per_second` units/s, rounded up (`u64::MAX` for a
/// non-zero amount at rate 0).
pub fn ns_at_rate(amount: u64, per_second: u64) -> u64 {
    if amount == 0 {
        return 0;
    }
    if per_second == 0 {
        return u64::MAX;
    }
    u64::try_from((u128::from(amount) * 1_000_000_000).div_ceil(u128::from(per_second))).unwrap_or(u64::MAX)
}

/// The put part of a tile: bytes for the link and the fastest the core can stream them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PutCost {
    /// Bytes the put moves.
    pub bytes: u64,
    /// Bytes/s one core streams: the slower of reading the source and writing it out.
    pub stream_bytes_per_s: u64,
}

impl PutCost {
    /// Time of the put alone on an idle link of `link_bytes_per_s`.
    pub fn uncontended_ns(&self, link_bytes_per_s: u64) -> u64 {
        ns_at_rate(self.bytes, self.stream_bytes_per_s.min(link_bytes_per_s))
    }

    /// Time of a put to the core's own rank: a local copy at the stream rate.
    pub fn local_ns(&self) -> u64 {
        ns_at_rate(self.bytes, self.stream_bytes_per_s)
    }
}

/// The cost of one instance of a family.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FamilyCost {
    /// The core kind its instances run on.
    pub core: CoreKind,
    /// Core time of the exec phase: overhead plus the roofline of the ops that are not puts.
    pub exec_ns: u64,
    /// The put phase, if the family writes to another rank.
    pub put: Option<PutCost>,
    /// Bytes the exec phase moves through the die's HBM: cold reads, the L2 misses of
    /// L2-eligible reads, and writes. A put's source reads and the bytes it lands are not
    /// counted: they move at network rates, far below the HBM's.
    pub hbm_bytes: u64,
}

impl FamilyCost {
    /// Whether the exec phase does real work (flops or local bytes beyond the overhead):
    /// what "computing" means when exposed communication is measured.
    pub fn computes(&self, overhead_ns: u64) -> bool {
        self.put.is_none() || self.exec_ns > overhead_ns
    }
}

/// A cost profile applied to one taskflow: per-family traffic (see [`super::traffic`]) and
/// the tile costs derived from it.
///
/// Implements [`CostModel`], so the scheduler's priorities use the same costs the simulator
/// charges: `hpmoe_core::compile(&tf, &TaskflowCost::new(&tf, profile))`.
#[derive(Clone, Debug, PartialEq)]
pub struct TaskflowCost {
    profile: CostProfile,
    names: Vec<String>,
    traffic: Vec<FamilyTraffic>,
    costs: Vec<FamilyCost>,
    /// One run's guarded instances that skip their body, if pricing a run.
    activity: Option<Activity>,
    /// Per node, the probability it runs its body, for the scheduler's plan.
    expected: Option<std::sync::Arc<[f32]>>,
}

impl TaskflowCost {
    /// Derives every family's traffic from `tf`'s regions and prices it under `profile`.
    pub fn new(tf: &Taskflow, profile: CostProfile) -> Self {
        let traffic = family_traffic(tf);
        let names = tf.families.iter().map(|f| f.name.clone()).collect();
        let kinds: Vec<CoreKind> = tf.families.iter().map(|f| f.core).collect();
        let costs = kinds.iter().zip(&traffic).map(|(&k, t)| family_cost(&profile, k, t)).collect();
        TaskflowCost { profile, names, traffic, costs, activity: None, expected: None }
    }

    /// Replaces the traffic of the family named `family` (for a region that
    /// over-approximates what the tile touches at run time, such as a gather).
    ///
    /// # Panics
    /// If the taskflow has no family of that name.
    pub fn with_traffic(mut self, family: &str, traffic: FamilyTraffic) -> Self {
        let f = self.names.iter().position(|n| n == family).unwrap_or_else(|| panic!("no tile family `{family}`"));
        self.traffic[f] = traffic;
        self.costs[f] = family_cost(&self.profile, self.costs[f].core, &traffic);
        self
    }

    /// The same traffic priced under another profile.
    pub fn with_profile(&self, profile: CostProfile) -> Self {
        let costs = self.costs.iter().zip(&self.traffic).map(|(c, t)| family_cost(&profile, c.core, t)).collect();
        TaskflowCost {
            profile,
            names: self.names.clone(),
            traffic: self.traffic.clone(),
            costs,
            activity: self.activity.clone(),
            expected: self.expected.clone(),
        }
    }

    /// Prices one run in which the instances `activity` marks skip their body: they cost
    /// their tile overhead and move no bytes (see [`super::activity`]). Only the simulator,
    /// the baseline and the bound read it; as a [`CostModel`] for the scheduler this model
    /// stays static, so a schedule never depends on run-time data.
    pub fn with_activity(mut self, activity: Activity) -> Self {
        self.activity = Some(activity);
        self
    }

    /// Plans the schedule for instances that run their body with probability `p[node]`
    /// (guarded tiles past a run-time count; 1 for the rest): the scheduler charges each
    /// `overhead + p · (full time − overhead)` ([`CostModel::node_tile_ns`]), so every core's
    /// list holds its share of the work expected to run instead of an equal share of work
    /// that may be skipped. Probabilities come from the routing *distribution* (e.g. the
    /// average [`Activity`] of sampled routings), never from the run being priced; the
    /// simulator still charges every instance that runs in full.
    pub fn with_expected_activity(mut self, p: Vec<f32>) -> Self {
        self.expected = Some(p.into());
        self
    }

    /// `bytes` scaled by the probability that node `node` runs its body, under
    /// [`TaskflowCost::with_expected_activity`]; `bytes` without it.
    fn expected_bytes(&self, node: NodeId, bytes: u64) -> u64 {
        match self.expected.as_ref().and_then(|p| p.get(node.index())) {
            Some(&p) => (bytes as f64 * f64::from(p.clamp(0.0, 1.0))).round() as u64,
            None => bytes,
        }
    }

    /// The run priced, if any (see [`TaskflowCost::with_activity`]).
    pub fn activity(&self) -> Option<&Activity> {
        self.activity.as_ref()
    }

    /// The share of node `node`'s body work in the run priced (1 without a run, or for a node
    /// without `matmul_tn_slots_accumulate` ops: [`super::Activity::share`]).
    pub fn share(&self, node: NodeId) -> f32 {
        self.activity.as_ref().map_or(1.0, |a| a.share(node))
    }

    /// Whether node `node` skips its body in the run priced.
    pub fn skips(&self, node: NodeId) -> bool {
        self.activity.as_ref().is_some_and(|a| a.skips(node))
    }

    /// The cost profile the tiles are priced with.
    pub fn profile(&self) -> &CostProfile {
        &self.profile
    }

    /// Family names, in declaration order.
    pub fn family_names(&self) -> &[String] {
        &self.names
    }

    /// Per family: its traffic.
    pub fn traffic(&self) -> &[FamilyTraffic] {
        &self.traffic
    }

    /// Per family: its cost.
    pub fn family_costs(&self) -> &[FamilyCost] {
        &self.costs
    }

    /// Cost of family `f`.
    ///
    /// # Panics
    /// If `f` is not a family of the taskflow this model was built for.
    pub fn family(&self, f: usize) -> &FamilyCost {
        &self.costs[f]
    }
}

/// Prices one family's traffic.
pub fn family_cost(p: &CostProfile, core: CoreKind, t: &FamilyTraffic) -> FamilyCost {
    let compute_rate = match core {
        CoreKind::Aic => p.aic_flops_per_s(),
        CoreKind::Aiv => p.aiv_flops_per_s(),
    };
    let write_rate = match core {
        CoreKind::Aic => p.aic_write_bytes_per_s(),
        CoreKind::Aiv => p.aiv_write_bytes_per_s(),
    };
    let compute = ns_at_rate(t.flops, compute_rate);
    let reads = read_ns(p, &t.reads);
    let writes = ns_at_rate(t.write_bytes, write_rate);
    let setup = if t.remote_bytes > 0 { p.put_setup() } else { 0 };
    let exec_ns = p.tile_overhead().saturating_add(setup).saturating_add(compute.max(reads).max(writes));
    let put = (t.remote_bytes > 0).then(|| {
        let read = read_ns(p, &t.put_reads);
        let read_rate = if read == 0 {
            u64::MAX
        } else {
            u64::try_from(u128::from(t.remote_bytes) * 1_000_000_000 / u128::from(read)).unwrap_or(u64::MAX)
        };
        PutCost { bytes: t.remote_bytes, stream_bytes_per_s: read_rate.min(p.aiv_write_bytes_per_s()).max(1) }
    });
    FamilyCost { core, exec_ns, put, hbm_bytes: hbm_bytes(p, t) }
}

/// HBM bytes of a family's exec phase (see [`FamilyCost::hbm_bytes`]), rounded up.
fn hbm_bytes(p: &CostProfile, t: &FamilyTraffic) -> u64 {
    let missed = (t.reads.warm_bytes as f64 * (1.0 - p.l2_hit_rate)).ceil() as u64;
    t.reads.cold_bytes.saturating_add(missed).saturating_add(t.write_bytes)
}

/// Time one core spends reading, ns (rounded up).
fn read_ns(p: &CostProfile, r: &Reads) -> u64 {
    let (hbm, l2) = (p.gm_read_bytes_per_s() as f64, p.l2_read_bytes_per_s() as f64);
    let warm = r.warm_bytes as f64;
    let s = r.cold_bytes as f64 / hbm + warm * p.l2_hit_rate / l2 + warm * (1.0 - p.l2_hit_rate) / hbm;
    let ns = (s * 1e9).ceil();
    if ns >= u64::MAX as f64 { u64::MAX } else { ns as u64 }
}

impl CostModel for TaskflowCost {
    /// Without the family, only the [`Work`] totals are known: see [`CostProfile`]'s model.
    fn tile_ns(&self, core: CoreKind, work: &Work) -> u64 {
        self.profile.tile_ns(core, work)
    }

    /// Exec plus the uncontended put and its quiet (as if every put crossed the link within
    /// a server).
    fn family_tile_ns(&self, family: usize, core: CoreKind, work: &Work) -> u64 {
        match self.costs.get(family) {
            Some(c) if c.core == core => {
                let put = c.put.map_or(0, |p| {
                    p.uncontended_ns(self.profile.link_bytes_per_s()).saturating_add(self.profile.put_quiet_ns())
                });
                c.exec_ns.saturating_add(put)
            }
            _ => self.tile_ns(core, work),
        }
    }

    /// The expected time under [`TaskflowCost::with_expected_activity`], if set.
    fn node_tile_ns(&self, node: NodeId, family_ns: u64) -> u64 {
        match self.expected.as_ref().and_then(|p| p.get(node.index())) {
            Some(&p) => {
                let overhead = self.profile.tile_overhead().min(family_ns);
                overhead + ((family_ns - overhead) as f64 * f64::from(p.clamp(0.0, 1.0))).round() as u64
            }
            None => family_ns,
        }
    }

    fn edge_ns(&self, cross_rank: bool) -> u64 {
        self.profile.edge_ns(cross_rank)
    }

    /// The rank's link, which the simulator shares max-min fairly among the puts in flight.
    fn link_bytes_per_s(&self) -> Option<u64> {
        Some(self.profile.link_bytes_per_s())
    }

    /// Dies per server: puts to another server share its cross-server bandwidth.
    fn ranks_per_server(&self) -> Option<u32> {
        Some(self.profile.dies_per_server())
    }

    /// The cross-server bandwidth the simulator shares among a die's puts to other servers,
    /// and the longer quiet of such a put (a round trip at the cross-server latency).
    fn network_limits(&self) -> Option<NetworkLimits> {
        let p = &self.profile;
        let cross_latency = p.cross_server_latency_ns.ceil() as u64;
        Some(NetworkLimits {
            cross_server_bytes_per_s: p.cross_server_bytes_per_s(),
            cross_server_extra_ns: cross_latency.saturating_sub(p.link_latency()).saturating_mul(2),
        })
    }

    /// The die's HBM, which the simulator serves the tiles' HBM bytes from
    /// ([`FamilyCost::hbm_bytes`]).
    fn hbm_bytes_per_s(&self) -> Option<u64> {
        Some(self.profile.hbm_bytes_per_s())
    }

    /// The family's [`FamilyCost::hbm_bytes`], expected under
    /// [`TaskflowCost::with_expected_activity`], if set (an instance that skips its body moves
    /// none).
    fn node_hbm_bytes(&self, node: NodeId, family: usize) -> u64 {
        self.costs.get(family).map_or(0, |c| self.expected_bytes(node, c.hbm_bytes))
    }

    /// The expected bytes under [`TaskflowCost::with_expected_activity`], if set.
    fn node_put_bytes(&self, node: NodeId, bytes: u64) -> u64 {
        self.expected_bytes(node, bytes)
    }

    /// The exec part (with the put's quiet, a round trip within a server, which the
    /// simulator charges after the bytes) and the put, as the simulator charges them.
    fn family_put(&self, family: usize, core: CoreKind, work: &Work) -> PutShape {
        match self.costs.get(family) {
            Some(&FamilyCost { core: k, exec_ns, put: Some(put), .. }) if k == core => PutShape {
                exec_ns: exec_ns.saturating_add(self.profile.put_quiet_ns()),
                bytes: put.bytes,
                stream_bytes_per_s: put.stream_bytes_per_s,
            },
            _ => {
                let local = Work { remote_bytes: 0, ..*work };
                PutShape {
                    exec_ns: self.tile_ns(core, &local),
                    bytes: work.remote_bytes,
                    stream_bytes_per_s: self.profile.gm_read_bytes_per_s().min(self.profile.aiv_write_bytes_per_s()),
                }
            }
        }
    }
}

/// The profile alone knows only a tile's [`Work`] totals: every local byte is read cold
/// (from HBM), nothing is written separately, and remote bytes stream at the slower of
/// the HBM read rate, the AIV write rate and the link.
impl CostModel for CostProfile {
    fn tile_ns(&self, core: CoreKind, work: &Work) -> u64 {
        let traffic = FamilyTraffic {
            flops: work.flops,
            reads: Reads { cold_bytes: work.bytes, warm_bytes: 0 },
            ..FamilyTraffic::default()
        };
        let exec = family_cost(self, core, &traffic).exec_ns;
        let rate = self.gm_read_bytes_per_s().min(self.aiv_write_bytes_per_s()).min(self.link_bytes_per_s());
        exec.saturating_add(ns_at_rate(work.remote_bytes, rate))
    }

    /// Issue of the signal, plus the poll that sees it; plus the link latency across ranks.
    fn edge_ns(&self, cross_rank: bool) -> u64 {
        let local = self.signal_issue_ns().saturating_add(self.poll_ns());
        if cross_rank { local.saturating_add(self.link_latency()) } else { local }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::round_profile;

    #[test]
    fn exec_is_overhead_plus_the_slowest_of_compute_reads_and_writes() {
        let p = round_profile();
        let t = |flops, cold, warm, writes| FamilyTraffic {
            flops,
            reads: Reads { cold_bytes: cold, warm_bytes: warm },
            write_bytes: writes,
            ..FamilyTraffic::default()
        };
        // Compute-bound AIC: 500 000 flops at 500/ns = 1000 ns.
        assert_eq!(family_cost(&p, CoreKind::Aic, &t(500_000, 1000, 0, 0)).exec_ns, 1100);
        // Read-bound: 2000 cold at 10/ns = 200; 4000 warm: 3000 at 40/ns (75) + 1000 at 10/ns (100).
        assert_eq!(family_cost(&p, CoreKind::Aic, &t(0, 2000, 4000, 0)).exec_ns, 100 + 375);
        // Write-bound: an AIV writes 8/ns, an AIC 20/ns.
        assert_eq!(family_cost(&p, CoreKind::Aiv, &t(0, 0, 0, 800)).exec_ns, 200);
        assert_eq!(family_cost(&p, CoreKind::Aic, &t(0, 0, 0, 800)).exec_ns, 140);
        // Vector flops at 10/ns.
        assert_eq!(family_cost(&p, CoreKind::Aiv, &t(5000, 0, 0, 0)).exec_ns, 600);
    }

    #[test]
    fn a_put_streams_at_its_source_read_rate_capped_by_the_write_rate() {
        let p = round_profile();
        let put = |cold, warm, bytes| {
            family_cost(
                &p,
                CoreKind::Aiv,
                &FamilyTraffic {
                    put_reads: Reads { cold_bytes: cold, warm_bytes: warm },
                    remote_bytes: bytes,
                    ..FamilyTraffic::default()
                },
            )
        };
        // Cold source: 10 B/ns; the write side allows 8 B/ns.
        let c = put(1000, 0, 1000);
        assert_eq!((c.exec_ns, c.put), (100, Some(PutCost { bytes: 1000, stream_bytes_per_s: 8_000_000_000 })));
        // A half-cold source reads at 1000 B per (50 + 0.75·500/40 + 0.25·500/10 ≈ 71.9 ns):
        // 13.9 B/ns, still capped at 8.
        assert_eq!(put(500, 500, 1000).put.unwrap().stream_bytes_per_s, 8_000_000_000);
        let slow = CostProfile { gm_read_bytes_per_cycle: 2.0, ..p.clone() };
        let c = family_cost(
            &slow,
            CoreKind::Aiv,
            &FamilyTraffic {
                put_reads: Reads { cold_bytes: 1000, warm_bytes: 0 },
                remote_bytes: 1000,
                ..FamilyTraffic::default()
            },
        );
        let put = c.put.unwrap();
        assert_eq!(put.stream_bytes_per_s, 2_000_000_000);
        // On an idle 4 B/ns link the 2 B/ns stream is the limit; a local copy runs at it too.
        assert_eq!((put.uncontended_ns(4_000_000_000), put.local_ns()), (500, 500));
        assert_eq!(PutCost { bytes: 1000, stream_bytes_per_s: 8_000_000_000 }.uncontended_ns(4_000_000_000), 250);
    }

    #[test]
    fn edges_and_the_work_only_model() {
        let p = round_profile();
        assert_eq!(p.edge_ns(false), 20 + 30);
        assert_eq!(p.edge_ns(true), 20 + 30 + 1000);
        // Work-only: 1000 bytes cold (100 ns) vs 0 flops; 400 remote at min(10, 8, 4) B/ns.
        let w = Work { flops: 0, bytes: 1000, remote_bytes: 400 };
        assert_eq!(p.tile_ns(CoreKind::Aiv, &w), 100 + 100 + 100);
    }
}
