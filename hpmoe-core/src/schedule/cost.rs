//! The scheduler's cost function: how long a tile runs on a core, and how long a
//! dependency between two cores takes to be noticed.
//!
//! The scheduler only compares estimates, so a model needs to be right in proportion, not in
//! absolute terms. [`SimpleCost`] is a roofline built from the figures in `hardware.md`;
//! anything else (a calibrated table, a model fitted to traces) plugs in through
//! [`CostModel`].

use crate::expand::Work;
use crate::ids::NodeId;
use crate::model::CoreKind;

/// A pluggable cost function. Object-safe: the scheduler takes `&dyn CostModel`.
pub trait CostModel {
    /// Time, in ns, one tile instance with this work takes on a core of this kind, from the
    /// moment it may start until its effects are visible to the tiles that depend on it.
    fn tile_ns(&self, core: CoreKind, work: &Work) -> u64;

    /// Time, in ns, of one instance of tile family `family` (declaration order), whose
    /// core kind and work are `core` and `work`. The scheduler asks this, once per family.
    ///
    /// The default forgets the family and asks [`tile_ns`](Self::tile_ns). A model that knows
    /// more about a family than its [`Work`] totals — which operands are re-read from L2,
    /// what a region that over-approximates a run-time gather really touches — overrides it
    /// (see `crate::cost::TaskflowCost`).
    fn family_tile_ns(&self, family: usize, core: CoreKind, work: &Work) -> u64 {
        let _ = family;
        self.tile_ns(core, work)
    }

    /// Time, in ns, the scheduler plans for instance `node` of a family whose instances take
    /// `family_ns` each. The default is `family_ns`. A model that knows some instances are
    /// likely to skip their body at run time (guards on run-time counts, see
    /// `crate::model::Guard`) plans their *expected* time, so that every core's list holds
    /// its share of the work that will really run (see `crate::cost::TaskflowCost::with_expected_activity`).
    fn node_tile_ns(&self, node: NodeId, family_ns: u64) -> u64 {
        let _ = node;
        family_ns
    }

    /// Extra time, in ns, between a producer finishing and a consumer on *another core*
    /// noticing it: a counter update on the same rank, or a signal across ranks when
    /// `cross_rank` is true. Not charged between tiles of the same core.
    fn edge_ns(&self, cross_rank: bool) -> u64;

    /// Bytes/s of the link that the puts of one rank to other ranks share, if the model has
    /// one. With a link, [`list_schedule`](super::list_schedule) keeps each rank's puts to other
    /// ranks on a few dedicated vector cores, enough to fill the link, so that puts stream
    /// one after another instead of all at once (see its documentation).
    ///
    /// The default, `None`, has no shared link: every put is charged its
    /// [`family_tile_ns`](Self::family_tile_ns), as if alone, and puts run on any vector core.
    fn link_bytes_per_s(&self) -> Option<u64> {
        None
    }

    /// Ranks per server, if the model's network has a server tier (puts to another server
    /// share a slower bandwidth). [`list_schedule`](super::list_schedule) then orders a rank's
    /// link puts so that they alternate between its own and other servers. The default,
    /// `None`, has no servers.
    fn ranks_per_server(&self) -> Option<u32> {
        None
    }

    /// The server tier of the model's network, if it has one: what a rank's puts to ranks on
    /// other servers share ([`NetworkLimits`]). With it, [`list_schedule`](super::list_schedule)
    /// books such puts on their rank's cross-server bandwidth, so that it plans when their
    /// bytes can really be out. The default, `None`, knows only the sender's link.
    fn network_limits(&self) -> Option<NetworkLimits> {
        None
    }

    /// The HBM bandwidth a rank's cores share, bytes/s, if the model has one. With it,
    /// [`list_schedule`](super::list_schedule) books the HBM bytes of vector tiles on their
    /// rank's HBM within one server (see its documentation, "The HBM"). The default, `None`,
    /// charges every tile its own time.
    fn hbm_bytes_per_s(&self) -> Option<u64> {
        None
    }

    /// Bytes instance `node` of tile family `family` (declaration order) moves through its
    /// rank's HBM while it runs, as the scheduler plans it: expected, for a model that plans
    /// on expected activity. Asked only when [`hbm_bytes_per_s`](Self::hbm_bytes_per_s) is
    /// `Some`. The default is 0.
    fn node_hbm_bytes(&self, node: NodeId, family: usize) -> u64 {
        let _ = (node, family);
        0
    }

    /// Bytes the scheduler plans for the put of instance `node`, whose family puts `bytes`
    /// each. The default is `bytes`; a model that plans on expected activity (see
    /// [`node_tile_ns`](Self::node_tile_ns)) plans the bytes a put is expected to move.
    fn node_put_bytes(&self, node: NodeId, bytes: u64) -> u64 {
        let _ = node;
        bytes
    }

    /// For a tile family `family` whose instances write into another rank
    /// (`work.remote_bytes > 0`): the core time before the put and the put itself. Asked only
    /// when [`link_bytes_per_s`](Self::link_bytes_per_s) is `Some`, once per such family.
    ///
    /// The default charges the work without its remote bytes as the exec part and lets the
    /// put stream as fast as the link takes it.
    fn family_put(&self, family: usize, core: CoreKind, work: &Work) -> PutShape {
        let local = Work { remote_bytes: 0, ..*work };
        PutShape {
            exec_ns: self.family_tile_ns(family, core, &local),
            bytes: work.remote_bytes,
            stream_bytes_per_s: u64::MAX,
        }
    }
}

/// How one tile that writes into another rank uses its rank's link
/// ([`CostModel::family_put`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PutShape {
    /// Core time before the bytes stream: overhead and any local work, ns.
    pub exec_ns: u64,
    /// Bytes through the link.
    pub bytes: u64,
    /// The fastest one core streams them (reading the source, writing it out), bytes/s.
    pub stream_bytes_per_s: u64,
}

/// The server tier of a network ([`CostModel::network_limits`]), beyond each rank's link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NetworkLimits {
    /// Bytes/s one rank can send to ranks on other servers, all of its puts there together
    /// (servers of [`CostModel::ranks_per_server`] ranks).
    pub cross_server_bytes_per_s: u64,
    /// Extra fixed time of a put to another server over one within a server, ns: the longer
    /// path its completion (the quiet) takes to come back.
    pub cross_server_extra_ns: u64,
}

/// A roofline cost model: a fixed per-tile overhead, plus the larger of compute time and
/// local memory time, plus the time to push remote bytes through the link.
///
/// `tile_ns = tile_overhead_ns + max(flops / rate(core), bytes / gm_bytes_per_s)
///          + remote_bytes / link_bytes_per_s (+ link_latency_ns if remote_bytes > 0)`
///
/// Rates are per second and integral, so estimates are exact and deterministic. A rate of 0
/// makes any non-zero amount of that work cost `u64::MAX` (saturating, never dividing by
/// zero); sums saturate too.
///
/// Defaults come from `hardware.md`; each field says whether its figure is stated by a
/// source (\[S\]), derived from stated figures (\[D\]) or an unverified guess (\[U\]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SimpleCost {
    /// BF16 FLOP/s of one AIC. \[S/D\] 910B: 16×16×16 = 4096 MAC/cycle × 2 × 1.8 GHz
    /// ≈ 14.75 TFLOP/s.
    pub aic_flops_per_s: u64,
    /// FLOP/s of one AIV. \[U\] 128 BF16 lanes (256-byte repeat) × ≈1 repeat/cycle × 1.8 GHz
    /// = 230.4 GFLOP/s.
    pub aiv_flops_per_s: u64,
    /// Global-memory bytes/s one core moves. \[S/D\] 32 B/cycle × 1.8 GHz = 57.6 GB/s.
    pub gm_bytes_per_s: u64,
    /// Bytes/s one put gets through the rank's link. \[U\] ≈100 GB/s, a rough expert-parallel
    /// figure from the measured A3 dispatch/combine table (81–146 GB/s at EP 8–64). The
    /// simulator models link contention; this is the uncontended rate.
    pub link_bytes_per_s: u64,
    /// Latency of a put (and its signal) across ranks, ns. \[S\] unified bus, < 1 µs.
    pub link_latency_ns: u64,
    /// Latency of a cross-core counter update on one rank (atomic add in global memory,
    /// seen by a polling core), ns. \[U\] 0.5 µs.
    pub sync_ns: u64,
    /// Fixed cost of one tile: reading its table entry, setting up its ops, ns. \[U\] 0.2 µs
    /// (a global-memory read is ≈300 cycles ≈ 0.17 µs \[S\]).
    pub tile_overhead_ns: u64,
}

impl Default for SimpleCost {
    fn default() -> Self {
        SimpleCost {
            aic_flops_per_s: 14_745_600_000_000,
            aiv_flops_per_s: 230_400_000_000,
            gm_bytes_per_s: 57_600_000_000,
            link_bytes_per_s: 100_000_000_000,
            link_latency_ns: 1_000,
            sync_ns: 500,
            tile_overhead_ns: 200,
        }
    }
}

/// Nanoseconds to process `amount` units at `per_second` units/s, rounded up; `u64::MAX`
/// for a non-zero amount at rate 0.
pub(crate) fn ns_at_rate(amount: u64, per_second: u64) -> u64 {
    if amount == 0 {
        return 0;
    }
    if per_second == 0 {
        return u64::MAX;
    }
    let ns = (amount as u128 * 1_000_000_000).div_ceil(per_second as u128);
    u64::try_from(ns).unwrap_or(u64::MAX)
}

impl SimpleCost {
    /// Compute rate of one core of `kind`, FLOP/s.
    pub fn flops_per_s(&self, kind: CoreKind) -> u64 {
        match kind {
            CoreKind::Aic => self.aic_flops_per_s,
            CoreKind::Aiv => self.aiv_flops_per_s,
        }
    }
}

impl CostModel for SimpleCost {
    fn tile_ns(&self, core: CoreKind, work: &Work) -> u64 {
        let compute = ns_at_rate(work.flops, self.flops_per_s(core));
        let memory = ns_at_rate(work.bytes, self.gm_bytes_per_s);
        let mut link = ns_at_rate(work.remote_bytes, self.link_bytes_per_s);
        if work.remote_bytes > 0 {
            link = link.saturating_add(self.link_latency_ns);
        }
        self.tile_overhead_ns.saturating_add(compute.max(memory)).saturating_add(link)
    }

    fn edge_ns(&self, cross_rank: bool) -> u64 {
        if cross_rank { self.sync_ns.saturating_add(self.link_latency_ns) } else { self.sync_ns }
    }
}

/// Every tile costs 1, every edge 0: schedules that are easy to compute by hand in tests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UnitCost;

impl CostModel for UnitCost {
    fn tile_ns(&self, _core: CoreKind, _work: &Work) -> u64 {
        1
    }

    fn edge_ns(&self, _cross_rank: bool) -> u64 {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn work(flops: u64, bytes: u64, remote_bytes: u64) -> Work {
        Work { flops, bytes, remote_bytes }
    }

    #[test]
    fn default_figures_match_hardware_md() {
        let c = SimpleCost::default();
        // 4096 MAC × 2 FLOP × 1.8 GHz.
        assert_eq!(c.aic_flops_per_s, 4096 * 2 * 1_800_000_000);
        assert_eq!(c.aiv_flops_per_s, 128 * 1_800_000_000);
        assert_eq!(c.gm_bytes_per_s, 32 * 1_800_000_000);
        assert_eq!(c.edge_ns(false), 500);
        assert_eq!(c.edge_ns(true), 1_500);
    }

    #[test]
    fn tile_cost_is_overhead_plus_roofline_plus_link() {
        let c = SimpleCost {
            aic_flops_per_s: 1_000_000_000,  // 1 FLOP/ns
            aiv_flops_per_s: 500_000_000,    // 0.5 FLOP/ns
            gm_bytes_per_s: 2_000_000_000,   // 2 B/ns
            link_bytes_per_s: 4_000_000_000, // 4 B/ns
            link_latency_ns: 1_000,
            sync_ns: 7,
            tile_overhead_ns: 10,
        };
        // Compute-bound on AIC: 10 + max(300, 100).
        assert_eq!(c.tile_ns(CoreKind::Aic, &work(300, 200, 0)), 310);
        // Memory-bound on AIC: 10 + max(100, 250).
        assert_eq!(c.tile_ns(CoreKind::Aic, &work(100, 500, 0)), 260);
        // The same flops cost twice as much on AIV.
        assert_eq!(c.tile_ns(CoreKind::Aiv, &work(300, 200, 0)), 610);
        // A put: 10 + max(0, 50) + 400 / 4 + 1000 latency.
        assert_eq!(c.tile_ns(CoreKind::Aiv, &work(0, 100, 400)), 10 + 50 + 100 + 1_000);
        // Fractions round up.
        assert_eq!(c.tile_ns(CoreKind::Aic, &work(1, 0, 0)), 11);
        assert_eq!(c.tile_ns(CoreKind::Aic, &Work::default()), 10);
    }

    #[test]
    fn default_model_gives_plausible_magnitudes() {
        let c = SimpleCost::default();
        // A 128×7168×4096 BF16 matmul block on one AIC: 2·128·7168·4096 FLOP ≈ 7.5 GFLOP ≈ 510 µs.
        let gmm = work(2 * 128 * 7168 * 4096, 0, 0);
        let t = c.tile_ns(CoreKind::Aic, &gmm);
        assert!((500_000..520_000).contains(&t), "{t}");
        // Putting 128 BF16 rows of 7168 (1 835 008 B): read at 57.6 GB/s ≈ 31.9 µs, through
        // the link at 100 GB/s ≈ 18.4 µs plus 1 µs latency, plus 0.2 µs overhead.
        let put = work(0, 128 * 7168 * 2, 128 * 7168 * 2);
        assert_eq!(c.tile_ns(CoreKind::Aiv, &put), 200 + 31_858 + 18_351 + 1_000);
    }

    #[test]
    fn zero_rates_and_huge_work_saturate() {
        let zero = SimpleCost {
            aic_flops_per_s: 0,
            aiv_flops_per_s: 0,
            gm_bytes_per_s: 0,
            link_bytes_per_s: 0,
            link_latency_ns: u64::MAX,
            sync_ns: u64::MAX,
            tile_overhead_ns: 5,
        };
        assert_eq!(zero.tile_ns(CoreKind::Aic, &Work::default()), 5);
        assert_eq!(zero.tile_ns(CoreKind::Aic, &work(1, 0, 0)), u64::MAX);
        assert_eq!(zero.tile_ns(CoreKind::Aiv, &work(0, 0, 1)), u64::MAX);
        assert_eq!(zero.edge_ns(true), u64::MAX);
        let slow = SimpleCost { aic_flops_per_s: 1, ..SimpleCost::default() };
        assert_eq!(slow.tile_ns(CoreKind::Aic, &work(u64::MAX, u64::MAX, u64::MAX)), u64::MAX);
    }

    #[test]
    fn unit_cost_and_object_safety() {
        let models: [&dyn CostModel; 2] = [&UnitCost, &SimpleCost::default()];
        assert_eq!(models[0].tile_ns(CoreKind::Aic, &work(1 << 40, 1 << 40, 1 << 40)), 1);
        assert_eq!(models[0].edge_ns(true), 0);
        assert!(models[1].tile_ns(CoreKind::Aiv, &work(1, 1, 0)) > 1);
    }
}
