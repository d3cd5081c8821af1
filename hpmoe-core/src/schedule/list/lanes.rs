//! The link lanes of a rank: the vector cores that run its puts to other ranks, and what a
//! put costs on one (see the module documentation of [`super`]).

use super::super::cost::{CostModel, ns_at_rate};
use crate::expand::Expanded;
use crate::model::{CoreKind, MachineProfile};

/// The link lanes of a placement: per rank, the last `count` vector cores, which run that
/// rank's *link puts* (instances of a vector family with remote bytes whose destination is
/// another rank, `rotation != 0`) and nothing else.
#[derive(Debug)]
pub(super) struct Lanes {
    /// Lane cores per rank; 0 when the cost model has no shared link (or the taskflow no link
    /// puts, or the rank fewer than two vector cores): link puts then run on any vector core.
    pub(super) count: u32,
    /// Per family: the time of one put on a lane, for vector families with remote bytes.
    pub(super) put_ns: Vec<Option<u64>>,
}

impl Lanes {
    /// Enough lanes that puts of the slowest-streaming family fill the link, leaving at least
    /// one vector core for other work; each put charged its exec part plus its bytes at its
    /// share of the link when every lane streams (`link / count`), or its stream rate if lower.
    pub(super) fn new(exp: &Expanded, profile: &MachineProfile, cost: &dyn CostModel) -> Lanes {
        let families = exp.family_core.len();
        let none = Lanes { count: 0, put_ns: vec![None; families] };
        let Some(link) = cost.link_bytes_per_s().filter(|&l| l > 0) else { return none };
        let aiv = profile.aiv_per_rank();
        let is_put = |f: usize| exp.family_core[f] == CoreKind::Aiv && exp.family_work[f].remote_bytes > 0;
        let any_link_put =
            (0..exp.nodes() as u32).any(|v| exp.rotation[v as usize] != 0 && is_put(exp.space.family_of(v)));
        if aiv < 2 || !any_link_put {
            return none;
        }
        let shapes: Vec<_> =
            (0..families).map(|f| is_put(f).then(|| cost.family_put(f, CoreKind::Aiv, &exp.family_work[f]))).collect();
        let need = shapes.iter().flatten().map(|s| link.div_ceil(s.stream_bytes_per_s.clamp(1, link))).max();
        let count = need.unwrap_or(1).clamp(1, u64::from(aiv - 1));
        let share = link / count;
        let put_ns = shapes
            .iter()
            .map(|s| s.map(|s| s.exec_ns.saturating_add(ns_at_rate(s.bytes, s.stream_bytes_per_s.min(share).max(1)))))
            .collect();
        Lanes { count: count as u32, put_ns }
    }

    /// Whether `v` is a link put that runs on a lane.
    pub(super) fn carries(&self, exp: &Expanded, v: u32) -> bool {
        self.count > 0 && exp.rotation[v as usize] != 0 && self.put_ns[exp.space.family_of(v)].is_some()
    }
}
