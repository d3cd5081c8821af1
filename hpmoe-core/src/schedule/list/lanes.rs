//! The link lanes of a rank: the vector cores that run its puts to other ranks, and what a
//! put costs on one (see the module documentation of [`super`]).

use super::super::cost::{CostModel, PutShape, ns_at_rate};
use crate::expand::Expanded;
use crate::ids::NodeId;
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
    /// Per family: its put's shape ([`CostModel::family_put`]), for vector families with
    /// remote bytes (none without lanes).
    pub(super) shapes: Vec<Option<PutShape>>,
}

impl Lanes {
    /// Enough lanes that puts of every family keep the link busy ([`lanes_to_fill`]), and
    /// `extra` more (see "More lanes beyond one server" in the module documentation of
    /// [`super`]), leaving at least one vector core for other work; each put charged its exec
    /// part plus its bytes at its share of the link when every lane streams (`link / count`),
    /// or its stream rate if lower.
    pub(super) fn new(exp: &Expanded, profile: &MachineProfile, cost: &dyn CostModel, extra: u64) -> Lanes {
        let families = exp.family_core.len();
        let none = Lanes { count: 0, put_ns: vec![None; families], shapes: vec![None; families] };
        let Some(link) = cost.link_bytes_per_s().filter(|&l| l > 0) else { return none };
        let aiv = profile.aiv_per_rank();
        let is_put = |f: usize| exp.family_core[f] == CoreKind::Aiv && exp.family_work[f].remote_bytes > 0;
        let any_link_put = exp.rotation.iter().any(|(v, &r)| r != 0 && is_put(exp.space.family_of(v)));
        if aiv < 2 || !any_link_put {
            return none;
        }
        let shapes: Vec<_> =
            (0..families).map(|f| is_put(f).then(|| cost.family_put(f, CoreKind::Aiv, &exp.family_work[f]))).collect();
        let need = shapes.iter().flatten().map(|s| lanes_to_fill(s, link)).max();
        let count = need.unwrap_or(1).saturating_add(extra).clamp(1, u64::from(aiv - 1));
        let share = link / count;
        let put_ns = shapes
            .iter()
            .map(|s| s.map(|s| s.exec_ns.saturating_add(ns_at_rate(s.bytes, s.stream_bytes_per_s.min(share).max(1)))))
            .collect();
        Lanes { count: count as u32, put_ns, shapes }
    }

    /// Whether `v` is a link put that runs on a lane.
    #[inline]
    pub(super) fn carries(&self, exp: &Expanded, v: NodeId) -> bool {
        self.count > 0 && exp.rotation[v] != 0 && self.put_ns[exp.space.family_of(v)].is_some()
    }
}

/// How many lanes keep a link of `link` bytes/s busy with puts shaped like `put`: a lane
/// spends a put's cycle on its fixed part (`exec_ns`: setup, the quiet after the bytes) and
/// its bytes at its stream rate (at most the link), and the link needs the time of the bytes
/// at its own rate, so `⌈cycle / (bytes / link)⌉` — but at most one more than the stream rate
/// alone needs (`⌈link / stream⌉`): that one streams while another does a put's fixed part,
/// and puts whose fixed part outlasts their bytes (a few bytes of counts) cannot fill the link
/// however many lanes they get. A put that streams at least as fast as the link thus still
/// gets two lanes when it has a fixed part: with one, the link idles through every put's setup
/// and quiet (on the A3 profile 3.5 µs of a 1.8 MB put's 20 µs).
pub(super) fn lanes_to_fill(put: &PutShape, link: u64) -> u64 {
    let stream = put.stream_bytes_per_s.clamp(1, link);
    let cycle = put.exec_ns.saturating_add(ns_at_rate(put.bytes, stream));
    let on_link = u128::from(put.bytes.max(1)) * 1_000_000_000;
    let to_fill = (u128::from(cycle) * u128::from(link)).div_ceil(on_link);
    let streaming = link.div_ceil(stream);
    to_fill.min(u128::from(streaming) + 1).max(1) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put(exec_ns: u64, bytes: u64, stream_bytes_per_s: u64) -> PutShape {
        PutShape { exec_ns, bytes, stream_bytes_per_s }
    }

    #[test]
    fn lanes_cover_the_fixed_part_and_the_stream_rate() {
        let link = 1_000_000_000; // 1 B/ns
        // No fixed part: as many lanes as the stream rate falls short of the link.
        assert_eq!(lanes_to_fill(&put(0, 1000, 1_000_000_000), link), 1);
        assert_eq!(lanes_to_fill(&put(0, 1000, 2_000_000_000), link), 1);
        assert_eq!(lanes_to_fill(&put(0, 1000, 500_000_000), link), 2);
        assert_eq!(lanes_to_fill(&put(0, 1000, 400_000_000), link), 3);
        // A fixed part: one more lane covers it while the others stream; a put faster than
        // the link streams at the link's rate.
        assert_eq!(lanes_to_fill(&put(1, 1000, 4_000_000_000), link), 2);
        assert_eq!(lanes_to_fill(&put(1000, 1000, 1_000_000_000), link), 2);
        assert_eq!(lanes_to_fill(&put(100, 1000, 500_000_000), link), 3);
        assert_eq!(lanes_to_fill(&put(100, 1000, 400_000_000), link), 3);
        // A fixed part longer than the bytes: still one lane more than streaming needs.
        assert_eq!(lanes_to_fill(&put(1001, 1000, 1_000_000_000), link), 2);
        assert_eq!(lanes_to_fill(&put(3500, 8, 1_000_000_000), link), 2);
        assert_eq!(lanes_to_fill(&put(3500, 0, 1_000_000_000), link), 2);
        assert_eq!(lanes_to_fill(&put(3500, 8, 500_000_000), link), 3);
    }
}
