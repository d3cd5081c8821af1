//! Tests of the list scheduler: hand-worked schedules ([`scenarios`]) and the promises every
//! placement keeps on random DAGs ([`properties`]), with the cost models and checks they share.

mod properties;
mod scenarios;

use super::*;
use crate::expand::Work;
use crate::schedule::cost::{PutShape, ns_at_rate};
use crate::schedule::testutil::{expanded, profile};

const AIC: CoreKind = CoreKind::Aic;
const AIV: CoreKind = CoreKind::Aiv;
const W: Work = Work { flops: 0, bytes: 0, remote_bytes: 0 };

fn rows(q: &Csr<CoreId, NodeId>) -> Vec<Vec<u32>> {
    q.row_ids().map(|c| q.row(c).iter().map(|v| v.raw()).collect()).collect()
}

/// Every tile 10 ns, edges 3 ns on a rank and 7 ns across ranks.
struct TenAndEdges;
impl CostModel for TenAndEdges {
    fn tile_ns(&self, _: CoreKind, _: &Work) -> u64 {
        10
    }
    fn edge_ns(&self, cross_rank: bool) -> u64 {
        if cross_rank { 7 } else { 3 }
    }
}

/// [`TenAndEdges`] with ranks on servers of `.0` ranks each (no link, no tier).
struct TenAndEdgesOnServers(u32);
impl CostModel for TenAndEdgesOnServers {
    fn tile_ns(&self, core: CoreKind, work: &Work) -> u64 {
        TenAndEdges.tile_ns(core, work)
    }
    fn edge_ns(&self, cross_rank: bool) -> u64 {
        TenAndEdges.edge_ns(cross_rank)
    }
    fn ranks_per_server(&self) -> Option<u32> {
        Some(self.0)
    }
}

/// Every tile costs its flops; edges `local` ns on a rank and `remote` ns across ranks.
#[derive(Debug)]
struct FlopsCost {
    local: u64,
    remote: u64,
}
impl CostModel for FlopsCost {
    fn tile_ns(&self, _: CoreKind, work: &Work) -> u64 {
        work.flops
    }
    fn edge_ns(&self, cross_rank: bool) -> u64 {
        if cross_rank { self.remote } else { self.local }
    }
}

const fn flops(flops: u64) -> Work {
    Work { flops, bytes: 0, remote_bytes: 0 }
}

/// Tiles cost their flops, edges `edge` ns. A shared link of `link` B/ns; a put runs its
/// flops, then streams its remote bytes at up to `stream` B/ns (alone: at the lower of the
/// two rates).
#[derive(Debug)]
struct LinkCost {
    link: u64,
    stream: u64,
    edge: u64,
}
impl CostModel for LinkCost {
    fn tile_ns(&self, _: CoreKind, work: &Work) -> u64 {
        work.flops + work.remote_bytes.div_ceil(self.stream.min(self.link))
    }
    fn edge_ns(&self, _: bool) -> u64 {
        self.edge
    }
    fn link_bytes_per_s(&self) -> Option<u64> {
        Some(self.link * 1_000_000_000)
    }
    fn family_put(&self, _: usize, _: CoreKind, work: &Work) -> PutShape {
        PutShape { exec_ns: work.flops, bytes: work.remote_bytes, stream_bytes_per_s: self.stream * 1_000_000_000 }
    }
}

/// [`LinkCost`] with servers of `per_server` ranks and a tier of `tier` B/ns between them,
/// `extra` ns more latency across; with `hbm`, an HBM of 1 B/ns per rank on which each tile
/// of family 1 moves that many bytes.
#[derive(Debug)]
struct TieredCost {
    link: LinkCost,
    per_server: u32,
    tier: u64,
    extra: u64,
    hbm: Option<u64>,
}
impl CostModel for TieredCost {
    fn tile_ns(&self, core: CoreKind, work: &Work) -> u64 {
        self.link.tile_ns(core, work)
    }
    fn edge_ns(&self, cross_rank: bool) -> u64 {
        self.link.edge_ns(cross_rank)
    }
    fn link_bytes_per_s(&self) -> Option<u64> {
        self.link.link_bytes_per_s()
    }
    fn family_put(&self, family: usize, core: CoreKind, work: &Work) -> PutShape {
        self.link.family_put(family, core, work)
    }
    fn ranks_per_server(&self) -> Option<u32> {
        Some(self.per_server)
    }
    fn network_limits(&self) -> Option<crate::schedule::NetworkLimits> {
        Some(crate::schedule::NetworkLimits {
            cross_server_bytes_per_s: self.tier * 1_000_000_000,
            cross_server_extra_ns: self.extra,
        })
    }
    fn hbm_bytes_per_s(&self) -> Option<u64> {
        self.hbm.map(|_| 1_000_000_000)
    }
    fn node_hbm_bytes(&self, _: NodeId, family: usize) -> u64 {
        self.hbm.filter(|_| family == 1).unwrap_or(0)
    }
}

/// [`LinkCost`] without the link: puts are charged as if alone and run anywhere.
struct NoLink(LinkCost);
impl CostModel for NoLink {
    fn tile_ns(&self, core: CoreKind, work: &Work) -> u64 {
        self.0.tile_ns(core, work)
    }
    fn edge_ns(&self, cross_rank: bool) -> u64 {
        self.0.edge_ns(cross_rank)
    }
}

/// Two ranks of one AIC (local core 0) and four vector cores (1..=4). Per rank: four puts
/// (2 flops, 60 remote bytes; put 0 to its own rank, puts 1–3 to the other), then three
/// vector tiles of 10 flops. Rank 0 is nodes 0..7, rank 1 nodes 7..14.
fn puts_and_vector_work() -> Expanded {
    let mut exp = expanded(2, &[(AIV, 4, Work { flops: 2, bytes: 0, remote_bytes: 60 }), (AIV, 3, flops(10))], &[]);
    for v in [1, 2, 3, 8, 9, 10] {
        exp.rotation[NodeId::new(v)] = 1;
    }
    exp
}

/// Checks everything a placement promises, for any DAG.
fn assert_valid(exp: &Expanded, prof: &MachineProfile, p: &Placement, cost: &dyn CostModel) {
    let lanes = placed_lanes(exp, prof, p, cost);
    let n = exp.nodes();
    assert_eq!(p.queues.nodes(), prof.total_cores() as usize);
    assert_eq!(p.queues.edges(), n);
    let mut seen: IdVec<NodeId, bool> = IdVec::filled(n, false);
    for core in 0..prof.total_cores() {
        let (rank, local) = prof.split_core(core);
        let row = p.queues.row(CoreId::new(core));
        for (i, &v) in row.iter().enumerate() {
            assert!(!seen[v], "node {v} queued twice");
            seen[v] = true;
            assert_eq!(p.core_of[v].raw(), core);
            assert_eq!(p.position[v] as usize, i);
            assert_eq!(exp.space.rank_of(v).raw(), rank, "node {v} runs on its own rank");
            assert_eq!(prof.kind_of_local(local), exp.core_kind(v), "node {v} runs on its kind");
            assert_eq!(
                on_lane(prof, lanes, core),
                is_link_put(exp, lanes, v),
                "node {v}: link puts, and only they, run on the {lanes} lanes"
            );
            if i > 0 {
                assert!(p.start_ns[v] >= p.finish_ns[row[i - 1]], "core {core} overlaps");
            }
        }
    }
    for (v, c) in expected_ns(exp, cost, lanes).into_iter().enumerate() {
        assert_eq!(
            p.finish_ns[NodeId::from_index(v)],
            p.start_ns[NodeId::from_index(v)] + c,
            "node {v} runs for its cost"
        );
    }
    for (u, v) in exp.dag.succ.pairs() {
        let mut ready = p.finish_ns[u];
        if p.core_of[u] != p.core_of[v] {
            ready += cost.edge_ns(exp.space.rank_of(u) != exp.space.rank_of(v));
        } else {
            assert!(p.position[u] < p.position[v], "{u} before {v} on their core");
        }
        assert!(p.start_ns[v] >= ready, "edge {u} → {v}: start {} < {ready}", p.start_ns[v]);
    }
    assert_eq!(p.makespan_ns, p.finish_ns.values().copied().max().unwrap_or(0));
}

/// Lanes per rank by the rule the module documents: with a shared link and link puts, enough
/// to keep the link busy through the puts of every family, fixed parts included, at most
/// one fewer than the vector cores; otherwise none.
fn expected_lanes(exp: &Expanded, prof: &MachineProfile, cost: &dyn CostModel) -> u32 {
    let Some(link) = cost.link_bytes_per_s().filter(|&l| l > 0) else { return 0 };
    let puts: Vec<usize> = (0..exp.family_core.len())
        .filter(|&f| exp.family_core[f] == AIV && exp.family_work[f].remote_bytes > 0)
        .collect();
    let used = exp.rotation.iter().any(|(v, &r)| r != 0 && puts.contains(&exp.space.family_of(v)));
    if prof.aiv_per_rank() < 2 || !used {
        return 0;
    }
    // Per family: enough lanes that the link streams through each put's fixed part (its
    // whole cycle over its bytes' time on the link), at most one more than streaming alone
    // needs.
    let lanes_of = |f: usize| {
        let put = cost.family_put(f, AIV, &exp.family_work[f]);
        let stream = put.stream_bytes_per_s.clamp(1, link);
        let streaming = link.div_ceil(stream);
        let cycle = put.exec_ns + (put.bytes as u128 * 1_000_000_000).div_ceil(stream as u128) as u64;
        let fill = (cycle as u128 * link as u128).div_ceil(put.bytes.max(1) as u128 * 1_000_000_000) as u64;
        fill.clamp(1, streaming + 1)
    };
    let need = puts.iter().map(|&f| lanes_of(f)).max().expect("some put family is used");
    need.min(u64::from(prof.aiv_per_rank() - 1)) as u32
}

/// The lanes per rank `p` was planned with: [`expected_lanes`], or, when the layer spans
/// servers, up to [`EXTRA_LANES_TRIED`] more (the scheduler keeps them when they shorten its
/// plan): the fewest whose last vector cores carry every link put and nothing else and at
/// whose share of the link `p` charges its puts.
fn placed_lanes(exp: &Expanded, prof: &MachineProfile, p: &Placement, cost: &dyn CostModel) -> u32 {
    let base = expected_lanes(exp, prof, cost);
    let spans_servers = cost.network_limits().is_some()
        && cost.ranks_per_server().is_some_and(|per| per < exp.space.ranks)
        && exp.rotation.iter().any(|(v, &r)| r != 0 && is_link_put(exp, base, v));
    if !spans_servers {
        return base;
    }
    let most = (u64::from(base) + EXTRA_LANES_TRIED).min(u64::from(prof.aiv_per_rank() - 1)) as u32;
    let fits = |lanes: u32| {
        exp.space.node_ids().all(|v| on_lane(prof, lanes, p.core_of[v].raw()) == is_link_put(exp, lanes, v))
            && expected_ns(exp, cost, lanes).into_iter().enumerate().all(|(v, c)| {
                let v = NodeId::from_index(v);
                p.finish_ns[v] == p.start_ns[v] + c
            })
    };
    (base..=most).find(|&lanes| fits(lanes)).unwrap_or(base)
}

fn is_link_put(exp: &Expanded, lanes: u32, v: NodeId) -> bool {
    lanes > 0 && exp.rotation[v] != 0 && exp.core_kind(v) == AIV && exp.work(v).remote_bytes > 0
}

fn on_lane(prof: &MachineProfile, lanes: u32, core: u32) -> bool {
    prof.split_core(core).1 >= prof.cores_per_rank() - lanes
}

/// Per node: its cost, or for a link put its exec part plus its bytes at its stream rate
/// or the link's bandwidth over the lanes, whichever is lower; either as the cost model
/// expects it of the node (`node_tile_ns`).
fn expected_ns(exp: &Expanded, cost: &dyn CostModel, lanes: u32) -> Vec<u64> {
    let mut costs = node_costs(exp, cost);
    for v in exp.space.node_ids().filter(|&v| is_link_put(exp, lanes, v)) {
        let f = exp.space.family_of(v);
        let put = cost.family_put(f, AIV, &exp.family_work[f]);
        let rate = put.stream_bytes_per_s.min(cost.link_bytes_per_s().unwrap() / u64::from(lanes));
        costs[v.index()] = cost.node_tile_ns(v, put.exec_ns + ns_at_rate(put.bytes, rate));
    }
    costs
}

/// When `v` may start on `core` under `cost`: every predecessor has finished, plus the
/// edge cost for those on other cores.
fn ready_on(exp: &Expanded, p: &Placement, cost: &dyn CostModel, v: NodeId, core: u32) -> u64 {
    let arrival = |u: NodeId| {
        let finish = p.finish_ns[u];
        if p.core_of[u].raw() == core {
            finish
        } else {
            finish + cost.edge_ns(exp.space.rank_of(u) != exp.space.rank_of(v))
        }
    };
    exp.dag.pred.row(v).iter().map(|&u| arrival(u)).max().unwrap_or(0)
}

/// No core idles while a node it could run is ready: for every node `v` and every core
/// `c` of its rank and kind that may run it (a lane for a link put, a vector core that is
/// not a lane for any other vector node), `c` runs something at every moment from when `v`
/// is ready on `c` until `v` starts.
fn assert_work_conserving(exp: &Expanded, prof: &MachineProfile, p: &Placement, cost: &dyn CostModel) {
    let lanes = placed_lanes(exp, prof, p, cost);
    for v in exp.space.node_ids() {
        let rank = exp.space.rank_of(v).raw();
        let start = p.start_ns[v];
        let cores = prof.cores_of(exp.core_kind(v));
        let link_put = is_link_put(exp, lanes, v);
        for local in cores.filter(|&l| on_lane(prof, lanes, rank * prof.cores_per_rank() + l) == link_put) {
            let core = rank * prof.cores_per_rank() + local;
            let ready = ready_on(exp, p, cost, v, core);
            // The end of the busy stretch of `core` that began at or before `ready`.
            let mut busy_until = ready;
            for &w in p.queues.row(CoreId::new(core)) {
                let (s, f) = (p.start_ns[w], p.finish_ns[w]);
                if busy_until >= start {
                    break;
                }
                if f > busy_until {
                    assert!(
                        s <= busy_until,
                        "core {core} idles over [{busy_until}, {s}) while node {v}, ready there at {ready}, waits until {start}"
                    );
                    busy_until = f;
                }
            }
            assert!(
                busy_until >= start,
                "core {core} idles from {busy_until} while node {v}, ready there at {ready}, waits until {start}"
            );
        }
    }
}
