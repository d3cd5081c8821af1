//! A small scheduled taskflow built by hand, and helpers to tamper with blobs.

use hpmoe_core::expand::{Expanded, InstanceSpace, Work};
use hpmoe_core::graph::{Csr, Dag};
use hpmoe_core::ids::{CoreId, CounterId, NodeId, RankId};
use hpmoe_core::model::{CoreKind, MachineProfile};
use hpmoe_core::schedule::{Placement, Signal, SyncPlan, Wait};
use hpmoe_core::table::ScheduleTable;
use smallvec::smallvec;

/// Everything `ScheduleTable::build` reads.
pub struct Inputs {
    pub profile: MachineProfile,
    pub family_names: Vec<String>,
    pub exp: Expanded,
    pub placement: Placement,
    pub sync: SyncPlan,
}

impl Inputs {
    pub fn build(&self, name: &str) -> ScheduleTable {
        ScheduleTable::build(name, &self.profile, &self.family_names, &self.exp, &self.placement, &self.sync)
    }

    pub fn try_build(&self, name: &str) -> Result<ScheduleTable, hpmoe_core::table::TableError> {
        ScheduleTable::try_build(name, &self.profile, &self.family_names, &self.exp, &self.placement, &self.sync)
    }
}

/// Placement with the given queues (one row per global core); times are the queue positions.
pub fn placement_of(nodes: usize, queues: Vec<Vec<u32>>) -> Placement {
    // A node on no queue (the refusal tests make some) keeps core 0: the builder reads the queues.
    let mut core_of = vec![0; nodes];
    let mut position = vec![u32::MAX; nodes];
    for (core, row) in queues.iter().enumerate() {
        for (pos, &n) in row.iter().enumerate() {
            core_of[n as usize] = core as u32;
            position[n as usize] = pos as u32;
        }
    }
    let start_ns: Vec<u64> = position.iter().map(|&p| u64::from(p) * 10).collect();
    let finish_ns: Vec<u64> = start_ns.iter().map(|s| s + 10).collect();
    let makespan_ns = finish_ns.iter().copied().max().unwrap_or(0);
    let core_of = core_of.into_iter().map(CoreId::new).collect();
    let (position, start_ns, finish_ns) = (position.into(), start_ns.into(), finish_ns.into());
    let queues = Csr::from_rows(queues.into_iter().map(|row| row.into_iter().map(NodeId::new)));
    Placement { core_of, position, queues, start_ns, finish_ns, makespan_ns }
}

/// The raw node ids of each core's queue.
pub fn queue_rows(inputs: &Inputs) -> Vec<Vec<u32>> {
    let queues = &inputs.placement.queues;
    queues.row_ids().map(|c| queues.row(c).iter().map(|n| n.raw()).collect()).collect()
}

/// Sync plan from per-node waits and signals.
pub fn sync_of(waits: Vec<Option<Wait>>, signals: Vec<Vec<Signal>>, counters_per_rank: Vec<u32>) -> SyncPlan {
    let mut signal_offsets = vec![0u32];
    let mut signal_list = Vec::new();
    for s in signals {
        signal_list.extend(s);
        signal_offsets.push(signal_list.len() as u32);
    }
    let edges = signal_list.len() as u64;
    SyncPlan {
        waits: waits.into(),
        signal_offsets,
        signal_list,
        counters_per_rank: counters_per_rank.into(),
        cross_edges_before: edges,
        cross_edges_after: edges,
    }
}

/// Two ranks of 1 AIC + 2 AIV. Per rank, local ids:
/// `dispatch[dst, b]` (aiv, 2x2) = `2 dst + b`, `gmm[m]` (aic, 2) = `4 + m`, `combine` (aiv, no grid) = 6.
/// `dispatch[dst, b]` puts rows to rank `dst`; `gmm[m]` on rank r waits for `dispatch[r, m]` of
/// both ranks (counter m, target 2); `combine` waits for both `gmm` (counter 2, target 2).
pub fn tiny() -> Inputs {
    let ranks = 2u32;
    let profile = MachineProfile::small(1, ranks);
    let space = InstanceSpace::new(ranks, [smallvec![2, 2], smallvec![2], smallvec![]]);
    let per_rank = space.per_rank;
    let nodes = space.len();
    let node = |rank: u32, local: u32| rank * per_rank + local;
    let mut pairs = Vec::new();
    for r in 0..ranks {
        for m in 0..2 {
            for s in 0..ranks {
                pairs.push((node(s, 2 * r + m), node(r, 4 + m)));
            }
            pairs.push((node(r, 4 + m), node(r, 6)));
        }
    }
    let pairs: Vec<(NodeId, NodeId)> = pairs.into_iter().map(|(a, b)| (NodeId::new(a), NodeId::new(b))).collect();
    let dag = Dag::from_pairs(nodes, &pairs);
    let exp = Expanded {
        space,
        dag,
        family_core: vec![CoreKind::Aiv, CoreKind::Aic, CoreKind::Aiv],
        family_work: vec![Work::default(); 3],
        rotation: vec![0; nodes].into(),
    };
    let mut queues = Vec::new();
    for r in 0..ranks {
        queues.push(vec![node(r, 4), node(r, 5)]);
        queues.push(vec![node(r, 0), node(r, 1), node(r, 6)]);
        queues.push(vec![node(r, 2), node(r, 3)]);
    }
    let mut waits = vec![None; nodes];
    let mut signals = vec![Vec::new(); nodes];
    for r in 0..ranks {
        for m in 0..2 {
            waits[node(r, 4 + m) as usize] = Some(Wait { counter: CounterId::new(m), target: 2 });
            signals[node(r, 4 + m) as usize].push(Signal { rank: RankId::new(r), counter: CounterId::new(2) });
            for dst in 0..ranks {
                signals[node(r, 2 * dst + m) as usize]
                    .push(Signal { rank: RankId::new(dst), counter: CounterId::new(m) });
            }
        }
        waits[node(r, 6) as usize] = Some(Wait { counter: CounterId::new(2), target: 2 });
    }
    Inputs {
        profile,
        family_names: vec!["dispatch".into(), "gmm".into(), "combine".into()],
        placement: placement_of(nodes, queues),
        sync: sync_of(waits, signals, vec![3; ranks as usize]),
        exp,
    }
}

/// Rewrites the checksum of a blob after tampering, so that the decoder gets past it.
pub fn reseal(blob: &mut [u8]) {
    let crc = crc32fast::hash(&blob[16..]);
    blob[12..16].copy_from_slice(&crc.to_le_bytes());
}

/// Reads a little-endian u32 of a blob.
pub fn u32_at(blob: &[u8], offset: usize) -> u32 {
    u32::from_le_bytes(blob[offset..offset + 4].try_into().unwrap())
}

/// Writes a little-endian u32 into a blob.
pub fn put_u32(blob: &mut [u8], offset: usize, value: u32) {
    blob[offset..offset + 4].copy_from_slice(&value.to_le_bytes());
}

/// A directory of a fresh temporary folder for one test (removed first if left over).
pub fn temp_dir(test: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("hpmoe-table-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create temp dir");
    dir
}
