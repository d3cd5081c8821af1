//! The order in which a rank's link puts go out: round by round by destination, when the
//! rounds stay in step (see "Link lanes" in the module documentation of [`super`]).

use crate::expand::Expanded;
use crate::ids::{IdVec, NodeId};
use std::collections::BTreeMap;

/// The round in which node `v` of `exp` goes out among its rank's puts, by its destination
/// (`rank + rotation`): shifted so that in every round each rank is written by exactly one
/// rank, and, when ranks sit `ranks_per_server` to a server, alternating between
/// destinations on the sender's own server and on others (round `within · servers + across`
/// goes to the die `within` places on in its server, on the server `across` places on). So a
/// rank's lanes rarely all cross servers at once, and a receiver rarely takes more puts at
/// once than a sender has lanes. Without servers (`None`, or one server), the round is the
/// rotation. Also the tie-break among equally urgent nodes that are not link puts.
pub(super) fn send_order(exp: &Expanded, v: NodeId, ranks_per_server: Option<u32>) -> u32 {
    let ranks = exp.space.ranks.max(1);
    let size = ranks_per_server.unwrap_or(ranks).clamp(1, ranks);
    let servers = ranks.div_ceil(size);
    let rank = exp.space.rank_of(v).raw();
    let to = exp.destination(v).raw();
    let within = (to % size + size - rank % size) % size;
    let across = (to / size + servers - rank / size) % servers;
    within * servers + across
}

/// Per node of `exp`, the send round [`Setup`](super::Setup) orders equally urgent nodes by:
/// a link put's own ([`send_order`]; `link_put` says which nodes are), and a node feeding link
/// puts the earliest round among them, so that of equally urgent producers the one whose block
/// goes out first runs first; every other node its own [`send_order`] (0 for a node that writes
/// nowhere else).
///
/// Lanes that send round by round keep each receiver to one sender only while every round's
/// puts are ready in their turn. Taken by node id instead, every rank ran the producers of one
/// destination's blocks last (on the balanced DeepSeek-V3 training step at EP 16, the last
/// forward combine puts of 13 ranks all went to rank 14 together, 39 planned landing there at
/// once), and a crowded receiver in the run throws the ranks out of step: the training step
/// ran 1.102× its bound there, 1.030× with this order (README, "Producers in their puts'
/// rounds").
pub(super) fn send_orders(
    exp: &Expanded,
    ranks_per_server: Option<u32>,
    link_put: impl Fn(NodeId) -> bool,
) -> IdVec<NodeId, u32> {
    let mut rounds: IdVec<NodeId, u32> = exp.space.node_ids().map(|v| send_order(exp, v, ranks_per_server)).collect();
    // The earliest round among each producer's link puts, `u32::MAX` for none.
    let mut feeds = IdVec::filled(exp.nodes(), u32::MAX);
    for put in exp.space.node_ids().filter(|&v| link_put(v)) {
        for &producer in exp.dag.pred.row(put) {
            feeds[producer] = feeds[producer].min(rounds[put]);
        }
    }
    for (v, &round) in feeds.iter() {
        if round != u32::MAX && !link_put(v) {
            rounds[v] = round;
        }
    }
    rounds
}

/// The turn of link put `v` of `exp`, whose send round is `round`, on a lane that goes by
/// round: its family first, in declaration order, then its round. A rank's puts of one family
/// go out round by round; a put of a later family waits for the ready puts of earlier ones,
/// even of a later round. Families are declared in dependency order, so in a taskflow with
/// several put families (a backward: the output gradient out, then the input gradient back;
/// a training step: four) the later family's puts become ready while the earlier one still
/// streams, and taken by round alone a later family's early round would overtake the earlier
/// family's late rounds, delaying the blocks whose consumers are waiting (on the DeepSeek-V3
/// backward at EP 16: AICs waiting 1.2 ms per core for the output gradient's rows instead of
/// 0.4 ms).
pub(super) fn lane_turn(exp: &Expanded, v: NodeId, round: u32) -> u64 {
    ((exp.space.family_of(v) as u64) << 32) | u64::from(round)
}

/// Loads within 1/`EVEN_WITHIN` of the largest are even (about 1.6%).
const EVEN_WITHIN: u64 = 64;

/// Whether ranks sending round by round stay in step: every rank sends its link puts
/// (`link_put(v)`) to the same number of destinations, and the planned time of a rank's puts
/// to one destination (`planned(v)`, ns) is the same for every (rank, destination) pair,
/// within 1/[`EVEN_WITHIN`] of the largest. Then a round takes every sender the same time and each
/// receiver has one sender at a time. With uneven loads (natural MoE routing: popular experts
/// draw more blocks) a sender done with a light destination moves on while another still
/// writes there, the rounds drift apart, and the lanes keep to priority order instead.
pub(super) fn rounds_stay_in_step(
    exp: &Expanded,
    link_put: impl Fn(NodeId) -> bool,
    planned: impl Fn(NodeId) -> u64,
) -> bool {
    let ranks = exp.space.ranks.max(1);
    let mut load: BTreeMap<(u32, u32), u64> = BTreeMap::new();
    for v in exp.space.node_ids().filter(|&v| link_put(v)) {
        let (rank, to) = (exp.space.rank_of(v).raw(), exp.destination(v).raw());
        *load.entry((rank, to)).or_default() += planned(v);
    }
    let mut destinations = vec![0u32; ranks as usize];
    for &(rank, _) in load.keys() {
        destinations[rank as usize] += 1;
    }
    let (least, most) = load.values().fold((u64::MAX, 0), |(lo, hi), &l| (lo.min(l), hi.max(l)));
    destinations.windows(2).all(|w| w[0] == w[1]) && most - least.min(most) <= most / EVEN_WITHIN
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expand::Work;
    use crate::model::CoreKind;
    use crate::schedule::testutil::expanded;

    /// `ranks` ranks of `ranks` puts each; put k of every rank writes to rank k.
    fn all_to_all(ranks: u32) -> Expanded {
        let mut exp = expanded(ranks, &[(CoreKind::Aiv, ranks, Work { flops: 0, bytes: 0, remote_bytes: 1 })], &[]);
        for v in 0..ranks * ranks {
            let (rank, k) = (v / ranks, v % ranks);
            exp.rotation[NodeId::new(v)] = (k + ranks - rank) % ranks;
        }
        exp
    }

    #[test]
    fn with_servers_a_ranks_puts_alternate_between_servers_and_each_round_hits_every_rank() {
        // Four ranks, two per server. Rank r's order: itself, the far server's rank in its
        // place, its own server's other rank, the far server's other rank.
        let ranks = 4;
        let exp = all_to_all(ranks);
        let order = |v: u32| send_order(&exp, NodeId::new(v), Some(2));
        for rank in 0..ranks {
            let mut puts: Vec<u32> = (rank * ranks..(rank + 1) * ranks).collect();
            puts.sort_by_key(|&v| order(v));
            let crosses: Vec<bool> = puts.iter().map(|&v| (v % ranks) / 2 != rank / 2).collect();
            assert_eq!(crosses, vec![false, true, false, true], "rank {rank}");
        }
        for round in 0..ranks {
            let mut dsts: Vec<u32> = (0..16u32).filter(|&v| order(v) == round).map(|v| v % ranks).collect();
            dsts.sort_unstable();
            assert_eq!(dsts, vec![0, 1, 2, 3], "round {round}");
        }
    }

    #[test]
    fn every_round_writes_each_rank_once_whatever_the_server_size() {
        // 12 ranks: servers of 1, 2, 3, 4, 6 and 12 divide them into whole servers; a rank's
        // rounds are then 0..12, each once, and each round reaches every rank once.
        let ranks = 12;
        let exp = all_to_all(ranks);
        for size in [1, 2, 3, 4, 6, 12] {
            let order = |v: u32| send_order(&exp, NodeId::new(v), Some(size));
            for rank in 0..ranks {
                let mut rounds: Vec<u32> = (rank * ranks..(rank + 1) * ranks).map(order).collect();
                rounds.sort_unstable();
                assert_eq!(rounds, (0..ranks).collect::<Vec<_>>(), "size {size}, rank {rank}");
            }
            for round in 0..ranks {
                let mut dsts: Vec<u32> = (0..ranks * ranks).filter(|&v| order(v) == round).map(|v| v % ranks).collect();
                dsts.sort_unstable();
                assert_eq!(dsts, (0..ranks).collect::<Vec<_>>(), "size {size}, round {round}");
            }
        }
    }

    #[test]
    fn rounds_stay_in_step_only_when_every_pair_carries_the_same_load() {
        let exp = all_to_all(4);
        let link_put = |v: NodeId| exp.rotation[v] != 0;
        assert!(rounds_stay_in_step(&exp, link_put, |_| 640));
        // One put of rank 0 to rank 1 (node 1) 1/64 longer still counts as even; more does not.
        assert!(rounds_stay_in_step(&exp, link_put, |v| if v.raw() == 1 { 650 } else { 640 }));
        assert!(!rounds_stay_in_step(&exp, link_put, |v| if v.raw() == 1 { 651 } else { 640 }));
        // Rank 3 sends nothing to rank 0 (node 12): ranks differ in their destinations.
        assert!(!rounds_stay_in_step(&exp, |v| link_put(v) && v.raw() != 12, |_| 640));
        // No link puts at all: nothing to keep in step.
        assert!(rounds_stay_in_step(&exp, |_| false, |_| 640));
    }

    #[test]
    fn a_producer_takes_the_earliest_round_of_the_link_puts_it_feeds() {
        // Four ranks of 4 producers (local 0..4) and 4 puts (local 4..8, put `4 + k` to rank
        // `rank + k`). Producer 0 feeds the put of round 3; producer 1 those of rounds 2 and 1;
        // producer 2 only the rank's put to itself, which is not a link put; producer 3 none.
        let ranks = 4;
        let work = Work { flops: 1, bytes: 0, remote_bytes: 0 };
        let put = Work { flops: 0, bytes: 0, remote_bytes: 1 };
        let pairs: Vec<(u32, u32)> =
            (0..ranks).flat_map(|r| [(0, 7), (1, 6), (1, 5), (2, 4)].map(|(a, b)| (8 * r + a, 8 * r + b))).collect();
        let mut exp = expanded(ranks, &[(CoreKind::Aic, 4, work), (CoreKind::Aiv, 4, put)], &pairs);
        for r in 0..ranks {
            for k in 0..4 {
                exp.rotation[NodeId::new(8 * r + 4 + k)] = k;
            }
        }
        let rounds = send_orders(&exp, None, |v| exp.rotation[v] != 0);
        for r in 0..ranks {
            let of = |local: u32| rounds[NodeId::new(8 * r + local)];
            assert_eq!((0..4).map(of).collect::<Vec<_>>(), vec![3, 1, 0, 0], "producers of rank {r}");
            assert_eq!((4..8).map(of).collect::<Vec<_>>(), vec![0, 1, 2, 3], "puts of rank {r}");
        }
        // With no link puts every node keeps its own round.
        let alone = send_orders(&exp, None, |_| false);
        assert!(exp.space.node_ids().all(|v| alone[v] == send_order(&exp, v, None)));
    }

    #[test]
    fn without_servers_or_with_one_the_round_is_the_rotation() {
        let exp = all_to_all(6);
        for servers in [None, Some(6), Some(16)] {
            assert!(exp.space.node_ids().all(|v| send_order(&exp, v, servers) == exp.rotation[v]), "{servers:?}");
        }
    }
}
