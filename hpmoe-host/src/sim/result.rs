//! What a simulation reports: per-tile and per-put records, per-core and per-rank figures,
//! and the derived metrics (makespan, utilisation, exposed communication).

use super::engine::Run;
use super::program::Program;
use hpmoe_core::ids::{CoreId, FamilyId, NodeId, RankId};
use hpmoe_core::model::CoreKind;

/// One tile instance as it ran.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TileRecord {
    /// Node id (`rank * per_rank + local`).
    pub node: NodeId,
    /// The tile family (declaration order).
    pub family: FamilyId,
    /// Global core (`rank * cores_per_rank + local core`).
    pub core: CoreId,
    /// The core reached the tile's entry.
    pub arrive_ns: u64,
    /// Exec began, after the wait and its poll.
    pub start_ns: u64,
    /// Exec and put done.
    pub end_ns: u64,
    /// Signals issued; the core moved on.
    pub done_ns: u64,
    /// The tile whose signal completed this tile's wait.
    pub released_by: Option<NodeId>,
    /// Whether the tile waited on a counter (and paid a poll).
    pub waits: bool,
    /// Whether the exec part computes (false for a put's bare overhead).
    pub computes: bool,
}

/// One put through a rank's link.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlowRecord {
    /// Node id of the putting tile.
    pub node: NodeId,
    /// The rank that puts.
    pub rank: RankId,
    /// The rank its bytes land on.
    pub to: RankId,
    /// Bytes put.
    pub bytes: u64,
    /// When the put's first byte entered the link (after queueing behind earlier puts), ns.
    pub start_ns: u64,
    /// Last byte out.
    pub end_ns: u64,
    /// Data landed on the destination.
    pub delivered_ns: u64,
}

/// Where one core's time went, ns. `busy + sync + wait + idle = makespan`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CoreStats {
    /// Running tiles (exec and put).
    pub busy_ns: u64,
    /// Polling counters and issuing signals.
    pub sync_ns: u64,
    /// Blocked on a counter that had not reached its target.
    pub wait_ns: u64,
    /// Everything else: before its first tile and after its last.
    pub idle_ns: u64,
    /// Tiles the core ran.
    pub tiles: u32,
}

/// One rank's link and communication figures, ns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RankStats {
    /// Bytes the rank put through its link.
    pub link_bytes: u64,
    /// Time with at least one put on the link.
    pub link_busy_ns: u64,
    /// Time with at least one put in flight (on the link or landing).
    pub comm_ns: u64,
    /// Communication time during which no core of the rank computed: the part of
    /// communication that is not hidden behind computation.
    pub exposed_comm_ns: u64,
}

/// The first start and last end of one family's tiles.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FamilySpan {
    /// Start of the family's first tile, ns.
    pub start_ns: u64,
    /// End of its last tile, ns.
    pub end_ns: u64,
    /// The last of its puts' data landed (its `end_ns` if it has no link puts).
    pub delivered_ns: u64,
    /// Tile instances of the family, all ranks.
    pub tiles: u64,
}

/// A simulated run on all ranks. See [`crate::sim`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SimResult {
    /// Ranks simulated.
    pub ranks: u32,
    /// Cores per rank, AIC first then AIV (global core `c` is local core `c % cores_per_rank`).
    pub cores_per_rank: u32,
    /// AIC cores per rank (local cores `0..aic_per_rank`).
    pub aic_per_rank: u32,
    /// Time when every core has finished and every put has landed.
    pub makespan_ns: u64,
    /// Per node, indexed by node id.
    pub tiles: Vec<TileRecord>,
    /// Link puts, in order of their node ids.
    pub flows: Vec<FlowRecord>,
    /// Per global core.
    pub cores: Vec<CoreStats>,
    /// Per rank.
    pub rank_stats: Vec<RankStats>,
}

/// The headline figures of a run.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Summary {
    /// Time when every core has finished and every put has landed, ns (the run's latency).
    pub makespan_ns: u64,
    /// Busy time of all AIC over their capacity (cores × makespan).
    pub aic_utilisation: f64,
    /// Busy time of all AIV over their capacity (cores × makespan).
    pub aiv_utilisation: f64,
    /// The largest per-rank link busy time.
    pub link_busy_ns: u64,
    /// The largest per-rank communication time.
    pub comm_ns: u64,
    /// The largest per-rank exposed communication time.
    pub exposed_comm_ns: u64,
}

impl SimResult {
    /// Builds the records and figures of an engine run. `tiles` is indexed by node id and
    /// sized `nodes`; runs of several programs are stitched with [`SimResult::absorb`].
    pub(crate) fn empty(ranks: u32, cores_per_rank: u32, aic_per_rank: u32, nodes: usize) -> Self {
        SimResult {
            ranks,
            cores_per_rank,
            aic_per_rank,
            makespan_ns: 0,
            tiles: vec![TileRecord::default(); nodes],
            flows: Vec::new(),
            cores: vec![CoreStats::default(); (ranks * cores_per_rank) as usize],
            rank_stats: vec![RankStats::default(); ranks as usize],
        }
    }

    /// Adds the records of `run` of `program`, shifted by `offset` ns.
    pub(crate) fn absorb(&mut self, program: &Program, run: &Run, offset: u64) {
        for ((task, spec), t) in program.tasks.iter().zip(run.times.values()) {
            let node = spec.node;
            self.tiles[node.index()] = TileRecord {
                node,
                family: spec.family,
                core: run.core_of[task],
                arrive_ns: t.arrive + offset,
                start_ns: t.start + offset,
                end_ns: t.end + offset,
                done_ns: t.done + offset,
                released_by: t.released_by.get().map(|task| program.tasks[task].node),
                waits: spec.wait.is_some(),
                computes: spec.computes,
            };
            if let Some(l) = spec.link {
                self.flows.push(FlowRecord {
                    node,
                    rank: spec.rank,
                    to: l.to,
                    bytes: l.bytes,
                    start_ns: t.link_start + offset,
                    end_ns: t.end + offset,
                    delivered_ns: t.delivered + offset,
                });
            }
            self.makespan_ns = self.makespan_ns.max(t.done + offset).max(t.delivered + offset);
        }
        for &end in run.core_end.values() {
            self.makespan_ns = self.makespan_ns.max(end + offset);
        }
    }

    /// Computes the per-core and per-rank figures from the records. `poll_ns` is the cost
    /// of the poll a waiting tile pays.
    pub(crate) fn finish(&mut self, poll_ns: u64) {
        self.flows.sort_by_key(|f| f.node);
        let makespan = self.makespan_ns;
        for s in &mut self.cores {
            *s = CoreStats::default();
        }
        for t in &self.tiles {
            let s = &mut self.cores[t.core.index()];
            let poll = if t.waits { poll_ns.min(t.start_ns - t.arrive_ns) } else { 0 };
            s.busy_ns += t.end_ns - t.start_ns;
            s.sync_ns += poll + (t.done_ns - t.end_ns);
            s.wait_ns += t.start_ns - t.arrive_ns - poll;
            s.tiles += 1;
        }
        for s in &mut self.cores {
            s.idle_ns = makespan.saturating_sub(s.busy_ns + s.sync_ns + s.wait_ns);
        }
        let ranks = self.ranks as usize;
        let mut comm: Vec<Vec<(u64, u64)>> = vec![Vec::new(); ranks];
        let mut link: Vec<Vec<(u64, u64)>> = vec![Vec::new(); ranks];
        let mut compute: Vec<Vec<(u64, u64)>> = vec![Vec::new(); ranks];
        let mut bytes = vec![0u64; ranks];
        for f in &self.flows {
            let r = f.rank.index();
            link[r].push((f.start_ns, f.end_ns));
            comm[r].push((f.start_ns, f.delivered_ns));
            bytes[r] += f.bytes;
        }
        for t in self.tiles.iter().filter(|t| t.computes) {
            compute[self.rank_of_core(t.core).index()].push((t.start_ns, t.end_ns));
        }
        for r in 0..ranks {
            let comm_u = union(&mut comm[r]);
            let compute_u = union(&mut compute[r]);
            self.rank_stats[r] = RankStats {
                link_bytes: bytes[r],
                link_busy_ns: length(&union(&mut link[r])),
                comm_ns: length(&comm_u),
                exposed_comm_ns: length(&comm_u) - overlap(&comm_u, &compute_u),
            };
        }
    }

    /// Kind of a global core.
    pub fn core_kind(&self, core: CoreId) -> CoreKind {
        if self.local_core(core) < self.aic_per_rank { CoreKind::Aic } else { CoreKind::Aiv }
    }

    /// The rank of a global core.
    pub fn rank_of_core(&self, core: CoreId) -> RankId {
        RankId::new(core.raw() / self.cores_per_rank.max(1))
    }

    /// A global core's index on its rank (its AICs first).
    pub fn local_core(&self, core: CoreId) -> u32 {
        core.raw() % self.cores_per_rank.max(1)
    }

    /// Busy time of all cores of `kind` over their capacity (cores × makespan), in 0..=1.
    pub fn utilisation(&self, kind: CoreKind) -> f64 {
        let (mut busy, mut cores) = (0u128, 0u128);
        for (c, s) in self.cores.iter().enumerate() {
            if self.core_kind(CoreId::from_index(c)) == kind {
                busy += u128::from(s.busy_ns);
                cores += 1;
            }
        }
        let capacity = cores * u128::from(self.makespan_ns);
        if capacity == 0 { 0.0 } else { busy as f64 / capacity as f64 }
    }

    /// The headline figures.
    pub fn summary(&self) -> Summary {
        let max = |f: fn(&RankStats) -> u64| self.rank_stats.iter().map(f).max().unwrap_or(0);
        Summary {
            makespan_ns: self.makespan_ns,
            aic_utilisation: self.utilisation(CoreKind::Aic),
            aiv_utilisation: self.utilisation(CoreKind::Aiv),
            link_busy_ns: max(|r| r.link_busy_ns),
            comm_ns: max(|r| r.comm_ns),
            exposed_comm_ns: max(|r| r.exposed_comm_ns),
        }
    }

    /// The span of family `family`'s tiles, all ranks; `None` if it has none.
    pub fn family_span(&self, family: usize) -> Option<FamilySpan> {
        let mut span: Option<FamilySpan> = None;
        for t in self.tiles.iter().filter(|t| t.family.index() == family) {
            let s = span.get_or_insert(FamilySpan { start_ns: u64::MAX, ..FamilySpan::default() });
            s.start_ns = s.start_ns.min(t.start_ns);
            s.end_ns = s.end_ns.max(t.end_ns);
            s.delivered_ns = s.delivered_ns.max(t.end_ns);
            s.tiles += 1;
        }
        let s = span.as_mut()?;
        for f in self.flows.iter().filter(|f| self.tiles[f.node.index()].family.index() == family) {
            s.delivered_ns = s.delivered_ns.max(f.delivered_ns);
        }
        span
    }
}

/// Merges intervals into a sorted list of disjoint ones (empty intervals dropped).
fn union(v: &mut [(u64, u64)]) -> Vec<(u64, u64)> {
    v.sort_unstable();
    let mut out: Vec<(u64, u64)> = Vec::new();
    for &(a, b) in v.iter().filter(|(a, b)| b > a) {
        match out.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

fn length(v: &[(u64, u64)]) -> u64 {
    v.iter().map(|(a, b)| b - a).sum()
}

/// Total length of the intersection of two sorted disjoint interval lists.
fn overlap(a: &[(u64, u64)], b: &[(u64, u64)]) -> u64 {
    let (mut i, mut j, mut total) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        let lo = a[i].0.max(b[j].0);
        let hi = a[i].1.min(b[j].1);
        if hi > lo {
            total += hi - lo;
        }
        if a[i].1 < b[j].1 { i += 1 } else { j += 1 }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interval_union_and_overlap() {
        let mut v = vec![(5, 7), (0, 2), (1, 3), (7, 9), (4, 4)];
        let u = union(&mut v);
        assert_eq!(u, vec![(0, 3), (5, 9)]);
        assert_eq!(length(&u), 7);
        assert_eq!(overlap(&u, &[(2, 6), (8, 20)]), 1 + 1 + 1);
        assert_eq!(overlap(&u, &[]), 0);
    }
}
