//! The scheduler's network beyond the sender's link: when a link put to another server is
//! done (see "The server tier" in the module documentation of [`super`]).
//!
//! A put on a lane streams at its share of its rank's link (`lanes::Lanes::put_ns`). A put to
//! another server also passes its rank's cross-server bandwidth, which every such put of the
//! rank shares: the scheduler books each put's bytes on it first come, first served, and half
//! the put's fixed part with them — a tier of `R` bytes/s booked until `until` carries `b`
//! bytes of a put started at `t`, with a fixed part `F`, until `max(until, t) + b / R + F / 2`
//! — and the put's bytes are out when the later of its link share and the tier is done with
//! them; its fixed part (setup, the quiet) follows, the quiet a round trip at the cross-server
//! latency. A simplification of the max-min sharing the simulator applies to the same tier
//! (`hpmoe-host`'s `sim::fabric`): the same bytes through the same bandwidth, so the tier
//! never carries more than its bandwidth in the plan either, but served one put after another
//! instead of side by side.
//!
//! The half fixed part: booked first come, first served, one lane's bytes would fill another's
//! fixed part exactly; in the run the puts in flight share the tier, a rank's lanes take their
//! fixed parts more nearly together, and the tier idles meanwhile (with two lanes in step, a
//! whole fixed part per two puts). Measured at stop 38 with the run under ±1% timing noise per
//! tile (`sim::TimingNoise`, mean of three seeds; README, "The scheduler's server tier"), half a
//! fixed part took the backward at EP 32 / 64 / 128 from 1.043 / 1.061 / 1.080× its bound to
//! 1.030 / 1.034 / 1.051×, and cost no pass more than 0.8 points (the forward at EP 128).

use super::super::cost::{CostModel, NetworkLimits, PutShape, ns_at_rate};
use super::booked::Booked;
use crate::expand::Expanded;
use crate::ids::{IdVec, NodeId, RankId};

/// What the server tier charges the link puts of one taskflow.
#[derive(Debug)]
pub(super) struct Net {
    /// Per node: the index in `puts` of its put to another server, if it is a link put on a
    /// lane that crosses ([`NOT_TIMED`] if not). Four bytes a node rather than a whole
    /// `Option<CrossPut>` (32): every node a pass starts asks, and with the wider array that
    /// read was 6% of the samples of a 10^6-node pass in `perf`'s profile.
    slot: IdVec<NodeId, u32>,
    /// The puts to other servers, in node order.
    puts: Vec<(NodeId, CrossPut)>,
}

/// The slot of a node that is not a put to another server.
const NOT_TIMED: u32 = u32::MAX;

/// A put across servers holds its rank's tier for its bytes and `1 / FIXED_PART_SHARE` of its
/// fixed part (see the module documentation).
const FIXED_PART_SHARE: u64 = 2;

/// One link put to another server, as planned.
#[derive(Clone, Copy, Debug)]
struct CrossPut {
    /// How long it holds its rank's tier: its expected bytes ([`CostModel::node_put_bytes`]) at
    /// the tier's rate and `1 / FIXED_PART_SHARE` of its fixed part (see the module
    /// documentation); 0 for a put without bytes, which does not use the tier.
    held_ns: u64,
    /// Its bytes at its share of the link, ns.
    stream_ns: u64,
    /// Its fixed part (setup, a quiet at the cross-server latency), expected, ns.
    fixed_ns: u64,
}

/// The ranks a server holds under `cost` ([`CostModel::ranks_per_server`]) for a taskflow of
/// `ranks` ranks, in `1..=ranks`: the size the tier and the scheduler's idle-core rule (see
/// "Which idle core" in the module documentation of [`super`]) divide rank ids by. `None`
/// without servers.
pub(super) fn ranks_per_server(cost: &dyn CostModel, ranks: u32) -> Option<u32> {
    cost.ranks_per_server().map(|per_server| per_server.clamp(1, ranks.max(1)))
}

impl Net {
    /// The server tier of `cost` for the link puts `carries` selects, each of its family's
    /// `shapes`, on `lanes` lanes per rank; `None` when the cost model has no server tier or
    /// the taskflow no put to another server (every put then takes its planned time).
    pub(super) fn new(
        exp: &Expanded,
        cost: &dyn CostModel,
        shapes: &[Option<PutShape>],
        lanes: u32,
        carries: impl Fn(NodeId) -> bool,
    ) -> Option<Net> {
        let link = cost.link_bytes_per_s()?;
        let per_server = ranks_per_server(cost, exp.space.ranks)?;
        let NetworkLimits { cross_server_bytes_per_s, cross_server_extra_ns } = cost.network_limits()?;
        let share = link / u64::from(lanes.max(1));
        let cross_server = cross_server_bytes_per_s.max(1);
        let cross_put = |v: NodeId| {
            let shape = shapes[exp.space.family_of(v)].filter(|_| carries(v))?;
            let (from, to) = (exp.space.rank_of(v).raw(), exp.destination(v).raw());
            if from / per_server == to / per_server {
                return None;
            }
            let bytes = cost.node_put_bytes(v, shape.bytes);
            let fixed_ns = cost.node_tile_ns(v, shape.exec_ns.saturating_add(cross_server_extra_ns));
            let held_ns =
                if bytes > 0 { ns_at_rate(bytes, cross_server).saturating_add(fixed_ns / FIXED_PART_SHARE) } else { 0 };
            Some(CrossPut {
                held_ns,
                stream_ns: ns_at_rate(bytes, shape.stream_bytes_per_s.min(share).max(1)),
                fixed_ns,
            })
        };
        let mut puts = Vec::new();
        let slot = exp
            .space
            .node_ids()
            .map(|v| match cross_put(v) {
                Some(put) => {
                    puts.push((v, put));
                    u32::try_from(puts.len() - 1).expect("puts are nodes, whose ids fit u32")
                }
                None => NOT_TIMED,
            })
            .collect();
        (!puts.is_empty()).then_some(Net { slot, puts })
    }

    /// The put to another server of node `v`, if this tier times it.
    #[inline]
    fn put(&self, v: NodeId) -> Option<&CrossPut> {
        let slot = self.slot[v];
        (slot != NOT_TIMED).then(|| &self.puts[slot as usize].1)
    }

    /// The least time node `v`, a put this tier times, keeps its lane busy: its bytes at its
    /// link share, then its fixed part ([`Self::book`] never returns less after `now`).
    ///
    /// # Panics
    /// If `v` is not a put this tier times.
    pub(super) fn least_ns(&self, v: NodeId) -> u64 {
        let put = self.put(v).expect("only puts to other servers are timed");
        put.stream_ns.saturating_add(put.fixed_ns)
    }

    /// A lower bound on the makespan of any pass: on each rank's tier, [`Self::book`] holds
    /// the tier for one put after another from time 0 on (`CrossPut::held_ns`), so the last of
    /// them is out no sooner than all of their holds together, and its fixed part follows (at
    /// least the shortest fixed part of a put with bytes). The largest over the ranks.
    pub(super) fn tier_bound_ns(&self, exp: &Expanded) -> u64 {
        let ranks = exp.space.ranks as usize;
        // Per rank: the tier's busy time, and the shortest fixed part (`None`: no put with bytes).
        let (mut busy, mut fixed) = (vec![0u64; ranks], vec![None::<u64>; ranks]);
        for &(v, put) in self.puts.iter().filter(|(_, p)| p.held_ns > 0) {
            let r = exp.space.rank_of(v).index();
            busy[r] = busy[r].saturating_add(put.held_ns);
            fixed[r] = Some(fixed[r].map_or(put.fixed_ns, |f| f.min(put.fixed_ns)));
        }
        busy.iter().zip(&fixed).filter_map(|(&b, &f)| Some(b.saturating_add(f?))).max().unwrap_or(0)
    }

    /// Whether node `v` is a put to another server this tier times.
    pub(super) fn times(&self, v: NodeId) -> bool {
        self.slot[v] != NOT_TIMED
    }

    /// Books the put of node `v` (of rank `from`) starting at `now` on its rank's tier and
    /// returns when its core is done with it: its bytes out, the tier holding half its fixed
    /// part with them ([`Net`]'s rule), then its fixed part.
    ///
    /// # Panics
    /// If `v` is not a put this tier times.
    pub(super) fn book(&self, booked: &mut Booked, v: NodeId, from: RankId, now: u64) -> u64 {
        let put = *self.put(v).expect("only puts to other servers are booked");
        let mut out = now.saturating_add(put.stream_ns);
        if put.held_ns > 0 {
            out = out.max(booked.book(from, now, put.held_ns));
        }
        out.saturating_add(put.fixed_ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expand::Work;
    use crate::model::CoreKind;
    use crate::schedule::list_schedule;
    use crate::schedule::testutil::{expanded, profile};

    /// A link of 4 B/ns, servers of two ranks, a tier of 1 B/ns and 10 ns more latency.
    struct Tiered;

    impl CostModel for Tiered {
        fn tile_ns(&self, _: CoreKind, _: &Work) -> u64 {
            1
        }
        fn edge_ns(&self, _: bool) -> u64 {
            0
        }
        fn link_bytes_per_s(&self) -> Option<u64> {
            Some(4_000_000_000)
        }
        fn ranks_per_server(&self) -> Option<u32> {
            Some(2)
        }
        fn network_limits(&self) -> Option<NetworkLimits> {
            Some(NetworkLimits { cross_server_bytes_per_s: 1_000_000_000, cross_server_extra_ns: 10 })
        }
    }

    #[test]
    fn puts_to_other_servers_queue_at_their_ranks_tier_and_others_are_not_timed() {
        // Four ranks, two per server; every rank puts 100 bytes to each rank.
        let ranks = 4;
        let mut exp = expanded(ranks, &[(CoreKind::Aiv, ranks, Work { flops: 0, bytes: 0, remote_bytes: 100 })], &[]);
        for v in 0..ranks * ranks {
            let (rank, k) = (v / ranks, v % ranks);
            exp.rotation[NodeId::new(v)] = (k + ranks - rank) % ranks;
        }
        let shape = PutShape { exec_ns: 5, bytes: 100, stream_bytes_per_s: u64::MAX };
        let net = Net::new(&exp, &Tiered, &[Some(shape)], 2, |v| exp.rotation[v] != 0).unwrap();
        // Rank 0 (node k puts to rank k): ranks 2 and 3 are on the other server.
        assert_eq!((0..4).map(|v| net.times(NodeId::new(v))).collect::<Vec<_>>(), vec![false, false, true, true]);
        let mut booked = Booked::idle(ranks);
        // Alone: 100 bytes at the tier's 1 B/ns (the link share, 2 B/ns, is faster) with half
        // the fixed part (15 / 2 = 7 ns) on the tier, then the fixed part and the longer quiet.
        let book =
            |booked: &mut Booked, v: u32, from: u32, now: u64| net.book(booked, NodeId::new(v), RankId::new(from), now);
        assert_eq!(book(&mut booked, 2, 0, 0), 107 + 5 + 10);
        // The second waits for the tier, held until 107; another rank's tier is free.
        assert_eq!(book(&mut booked, 3, 0, 50), 107 + 107 + 15);
        assert_eq!(book(&mut booked, 4 * 2, 2, 50), 50 + 107 + 15);
        // Once the tier is free again, a put takes its time alone.
        assert_eq!(book(&mut booked, 2, 0, 1000), 1000 + 107 + 15);
    }

    #[test]
    fn without_a_server_tier_or_puts_across_servers_nothing_is_timed() {
        let mut exp = expanded(2, &[(CoreKind::Aiv, 2, Work { flops: 0, bytes: 0, remote_bytes: 100 })], &[]);
        exp.rotation = IdVec::from_vec(vec![0, 1, 0, 1]);
        let shape = PutShape { exec_ns: 5, bytes: 100, stream_bytes_per_s: u64::MAX };
        // Two ranks on one server of two.
        assert!(Net::new(&exp, &Tiered, &[Some(shape)], 2, |_| true).is_none());
    }

    /// [`Tiered`] without its server tier: the lanes' share of the link alone.
    struct LinkOnly;

    impl CostModel for LinkOnly {
        fn tile_ns(&self, core: CoreKind, work: &Work) -> u64 {
            Tiered.tile_ns(core, work)
        }
        fn edge_ns(&self, cross_rank: bool) -> u64 {
            Tiered.edge_ns(cross_rank)
        }
        fn link_bytes_per_s(&self) -> Option<u64> {
            Tiered.link_bytes_per_s()
        }
        fn ranks_per_server(&self) -> Option<u32> {
            Tiered.ranks_per_server()
        }
    }

    #[test]
    fn a_planned_schedule_never_crosses_servers_faster_than_the_tier() {
        // Four ranks, two per server, every rank putting 1000 bytes to each rank: two puts of
        // 1000 bytes leave each rank for the other server, 2000 ns at the tier's 1 B/ns.
        let ranks = 4;
        let mut exp = expanded(ranks, &[(CoreKind::Aiv, ranks, Work { flops: 0, bytes: 0, remote_bytes: 1000 })], &[]);
        for v in 0..ranks * ranks {
            let (rank, k) = (v / ranks, v % ranks);
            exp.rotation[NodeId::new(v)] = (k + ranks - rank) % ranks;
        }
        let machine = profile(1, 4, ranks);
        let tiered = list_schedule(&exp, &machine, &Tiered);
        for rank in 0..ranks {
            let across: Vec<usize> = (rank * ranks..(rank + 1) * ranks)
                .filter(|&v| (v % ranks) / 2 != rank / 2)
                .map(|v| v as usize)
                .collect();
            let first = across.iter().map(|&v| tiered.start_ns.as_slice()[v]).min().unwrap();
            let last = across.iter().map(|&v| tiered.finish_ns.as_slice()[v]).max().unwrap();
            assert!(last - first >= 2000, "rank {rank}: {first}..{last}");
        }
        // Without the tier the plan has them cross at the lanes' share of the link.
        assert!(list_schedule(&exp, &machine, &LinkOnly).makespan_ns < 2000);
    }
}
