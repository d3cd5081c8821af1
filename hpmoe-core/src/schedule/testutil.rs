//! Hand-built expanded taskflows for the scheduler's tests.

use crate::expand::{Expanded, InstanceSpace, Work};
use crate::graph::{Csr, Dag};
use crate::ids::{CoreId, IdVec, NodeId};
use crate::model::{CoreKind, MachineProfile};
use crate::schedule::Placement;
use smallvec::smallvec;

/// An expanded taskflow with one 1-D family per `(kind, count, work)` (every rank has the
/// same instances), the given global edges, and no rotation.
pub(crate) fn expanded(ranks: u32, families: &[(CoreKind, u32, Work)], pairs: &[(u32, u32)]) -> Expanded {
    let space = InstanceSpace::new(ranks, families.iter().map(|&(_, count, _)| smallvec![count]));
    let nodes = space.len();
    Expanded {
        space,
        dag: Dag::of(nodes, pairs),
        family_core: families.iter().map(|f| f.0).collect(),
        family_work: families.iter().map(|f| f.2).collect(),
        rotation: IdVec::filled(nodes, 0),
    }
}

/// A profile with `aic` AIC and `aiv_per_aic × aic` AIV per rank.
pub(crate) fn profile(aic: u32, aiv_per_aic: u32, ranks: u32) -> MachineProfile {
    MachineProfile { name: "test".into(), aic_per_rank: aic, aiv_per_aic, ranks }
}

/// splitmix64: a tiny deterministic generator for randomised tests.
#[derive(Debug)]
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A random taskflow: `families` alternating AIC/AIV families of 1..=`max_count` instances,
/// with varied work (about half the AIV families put remote bytes); every node gets up to 3 predecessors among nodes of smaller local id,
/// on its own rank or (one time in four) on another rank. Acyclic because every edge
/// increases the local id. AIV nodes that feed another rank are given a rotation.
pub(crate) fn random_expanded(seed: u64, ranks: u32, families: u32, max_count: u32) -> Expanded {
    let mut rng = Rng::new(seed);
    let fams: Vec<(CoreKind, u32, Work)> = (0..families)
        .map(|f| {
            let kind = if f % 2 == 0 { CoreKind::Aic } else { CoreKind::Aiv };
            let count = 1 + rng.below(max_count as u64) as u32;
            let remote_bytes = if kind == CoreKind::Aiv && rng.below(2) == 0 { 1 + rng.below(1 << 16) } else { 0 };
            let work = Work { flops: rng.below(1 << 20), bytes: rng.below(1 << 16), remote_bytes };
            (kind, count, work)
        })
        .collect();
    let per_rank: u32 = fams.iter().map(|f| f.1).sum();
    let mut pairs = Vec::new();
    for rank in 0..ranks {
        for local in 1..per_rank {
            let v = rank * per_rank + local;
            for _ in 0..rng.below(4) {
                let from_rank = if ranks > 1 && rng.below(4) == 0 { rng.below(ranks as u64) as u32 } else { rank };
                let u = from_rank * per_rank + rng.below(local as u64) as u32;
                pairs.push((u, v));
            }
        }
    }
    let mut exp = expanded(ranks, &fams, &pairs);
    for (u, v) in pairs.into_iter().map(|(u, v)| (NodeId::new(u), NodeId::new(v))) {
        let (ru, rv) = (exp.space.rank_of(u).raw(), exp.space.rank_of(v).raw());
        if ru != rv && exp.core_kind(u) == CoreKind::Aiv && exp.rotation[u] == 0 {
            exp.rotation[u] = (rv + ranks - ru) % ranks;
        }
    }
    exp
}

/// A placement with the given queues (row `c`: core `c`'s nodes in order); start and finish
/// times are all 0.
pub(crate) fn placement(nodes: usize, rows: &[&[u32]]) -> Placement {
    let mut core_of = IdVec::filled(nodes, CoreId::new(0));
    let mut position = IdVec::filled(nodes, 0);
    for (c, row) in rows.iter().enumerate() {
        for (i, &v) in row.iter().enumerate() {
            core_of[NodeId::new(v)] = CoreId::from_index(c);
            position[NodeId::new(v)] = i as u32;
        }
    }
    let queues = Csr::from_rows(rows.iter().map(|r| r.iter().copied().map(NodeId::new)));
    let (start_ns, finish_ns) = (IdVec::filled(nodes, 0), IdVec::filled(nodes, 0));
    Placement { core_of, position, queues, start_ns, finish_ns, makespan_ns: 0 }
}
