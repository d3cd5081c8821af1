//! The critical chain of a simulated run: back from the tile that ends it, the stretches of
//! tiles one core ran back to back, each released by a tile of the stretch before it (on any
//! core of any rank). A tile starts when its core's previous tile is done or, if later, when
//! the signal that completes its wait is issued (`TileRecord::released_by`); the chain follows
//! whichever held it. So it says on which rank, and behind which compute, lane or receiver, the
//! makespan is decided, which is not always the busiest rank (`network_breakdown`).

use hpmoe_core::ids::NodeId;
use hpmoe_host::sim::{SimResult, TileRecord};
use std::cmp::Reverse;
use std::collections::BTreeMap;

/// Tiles one core ran back to back, each started as soon as the one before it was done.
#[derive(Clone, Debug)]
pub struct Stretch<'a> {
    /// In the order the core ran them.
    pub tiles: Vec<&'a TileRecord>,
    /// The tile whose signal released the first of them after their core was free; `None` if
    /// the first is its core's first tile and waited for no such signal.
    pub released_by: Option<&'a TileRecord>,
    /// When the core was done with the tile it ran before the first (0 if none).
    pub core_free_ns: u64,
}

impl Stretch<'_> {
    /// The first tile of the stretch.
    pub fn first(&self) -> &TileRecord {
        self.tiles[0]
    }

    /// The last tile of the stretch.
    pub fn last(&self) -> &TileRecord {
        self.tiles[self.tiles.len() - 1]
    }
}

/// Per tile of `tiles`, the tile its core ran just before it (by arrival), if among `tiles`.
pub fn previous_on_core<'a>(tiles: &[&'a TileRecord]) -> BTreeMap<NodeId, &'a TileRecord> {
    let mut in_core_order = tiles.to_vec();
    in_core_order.sort_by_key(|t| (t.core, t.arrive_ns, t.node));
    in_core_order.windows(2).filter(|w| w[0].core == w[1].core).map(|w| (w[1].node, w[0])).collect()
}

/// The critical chain of `run`, latest stretch first, at most `most` stretches: the first ends
/// with the tile that ends the run (the latest to be done; the lowest node on a tie), and each
/// next one ends with the tile that released the previous one's first tile.
pub fn critical_chain(run: &SimResult, most: usize) -> Vec<Stretch<'_>> {
    let previous = previous_on_core(&run.tiles.iter().collect::<Vec<_>>());
    // The tile whose signal released `t`, if it was issued after `t`'s core was free.
    let released_late = |t: &TileRecord| {
        let free = previous.get(&t.node).map_or(0, |p| p.done_ns);
        // `run.tiles` is indexed by node id.
        t.released_by.map(|u| &run.tiles[u.index()]).filter(|u| u.done_ns > free)
    };
    let mut chain = Vec::new();
    let mut last = run.tiles.iter().max_by_key(|t| (t.done_ns, Reverse(t.node)));
    while let Some(end) = last
        && chain.len() < most
    {
        let mut tiles = vec![end];
        while released_late(tiles[tiles.len() - 1]).is_none()
            && let Some(&p) = previous.get(&tiles[tiles.len() - 1].node)
        {
            tiles.push(p);
        }
        tiles.reverse();
        let released_by = released_late(tiles[0]);
        let core_free_ns = previous.get(&tiles[0].node).map_or(0, |p| p.done_ns);
        chain.push(Stretch { tiles, released_by, core_free_ns });
        last = released_by;
    }
    chain
}

#[cfg(test)]
mod tests {
    use super::*;
    use hpmoe_core::cost::{CostProfile, TaskflowCost};
    use hpmoe_host::moe::MoeShape;
    use hpmoe_host::sim;

    /// On a simulated run of the tiny layer at two ranks (forward and backward), the chain is
    /// what it says: it starts with the run's last tile, every stretch is one core's tiles back
    /// to back, each is released by the last tile of the next, and it goes back in time to a
    /// core's first tile.
    #[test]
    fn the_chain_of_a_run_is_back_to_back_stretches_joined_by_their_releases() {
        let shape = MoeShape::tiny(2);
        for tf in [shape.taskflow().unwrap(), shape.backward_taskflow().unwrap()] {
            let cost = TaskflowCost::new(&tf, CostProfile::ascend_a3_die());
            let compiled = hpmoe_core::compile_with(&tf, &cost, &Default::default()).unwrap();
            let run = sim::simulate(&compiled, &cost).unwrap();
            let chain = critical_chain(&run, usize::MAX);
            assert!(!chain.is_empty());
            assert_eq!(chain[0].last().done_ns, run.makespan_ns, "{}", tf.name);
            for (i, stretch) in chain.iter().enumerate() {
                for w in stretch.tiles.windows(2) {
                    assert_eq!(w[0].core, w[1].core);
                    assert!(w[0].done_ns <= w[1].start_ns);
                    // Held by its core, not by a signal issued after the core was free.
                    let by = w[1].released_by.map(|u| &run.tiles[u.index()]);
                    assert!(by.is_none_or(|u| u.done_ns <= w[0].done_ns), "{}", tf.name);
                }
                match (stretch.released_by, chain.get(i + 1)) {
                    (Some(u), Some(next)) => {
                        assert_eq!(u.node, next.last().node);
                        assert_eq!(stretch.first().released_by, Some(u.node));
                        assert!(stretch.core_free_ns < u.done_ns && u.done_ns <= stretch.first().start_ns);
                    }
                    (None, None) => {
                        // The chain ends at a core's first tile, released by no later signal.
                        let first = stretch.first();
                        assert!(run.tiles.iter().all(|t| t.core != first.core || t.arrive_ns >= first.arrive_ns));
                    }
                    (released, next) => panic!("{}: released {released:?}, next {next:?}", tf.name),
                }
            }
        }
    }
}
