//! Synchronisation reduction: drop the cross-core edges that other synchronisation already
//! implies (transitive reduction restricted to edges between different cores).
//!
//! A dependency `u → v` between nodes of the *same* core needs nothing: the core runs `u`
//! before `v` (the placement is deadlock-free, so `u` is queued first). Between different
//! cores it needs a wait on `v` and a signal from `u` — unless `u` is already known to have
//! finished when `v` may start, because of the order of `v`'s core and of the waits that
//! are kept.
//!
//! # Algorithm: sparse vector clocks
//! Nodes are visited in a topological order of DAG ∪ core order. Each node `x` gets a
//! *clock*: a sorted list of `(core, position)` facts, each meaning "every node at this
//! position or earlier on this core has finished by the time `x` finishes". For a node `v`:
//! 1. `known` starts as `{(core(v), position(v))}` merged with the clock of the node just
//!    before `v` on its core (merging keeps the larger position per core).
//! 2. `v`'s cross-core predecessors are taken in *decreasing* topological index, so a
//!    predecessor that others can reach through kept synchronisation is considered after
//!    them. Predecessor `u` is redundant iff `known` already has a position ≥ `position(u)`
//!    for `core(u)`; otherwise the edge is kept and `u`'s clock is merged into `known`.
//! 3. `known` becomes `v`'s clock, kept only while some successor of `v` (in DAG ∪ core
//!    order) has not been visited; clock buffers are then reused.
//!
//! # Soundness
//! By induction over the visiting order, every fact of every clock is true. The start fact
//! is about `v` itself. The node before `v` on its core finishes before `v` starts, so its
//! facts hold for `v`; a kept edge `u → v` becomes a wait, so `u` finishes before `v` starts
//! and its facts hold too. Dropping facts (the cap below) only forgets true things. A core
//! runs its queue in order, so "position `p` of core `c` has finished" implies every earlier
//! position has. Hence when `known` covers `position(u)` on `core(u)`, `u` really has
//! finished before `v` starts and the edge is redundant. The facts used to drop an edge come
//! only from `v`'s core predecessor and from edges already *kept* (the synchronisation that
//! will exist), never from another dropped edge, so two edges can never justify each
//! other's removal.
//!
//! This relies on "finished" meaning that a tile's effects are visible to whatever is ordered
//! after it. For tiles that write into another rank, visibility of the data is known only
//! from the put's own signal, so [`plan_sync`](super::plan_sync) marks such tiles
//! ([`reduce_cross_core_edges_keeping`]): an edge out of a marked tile `u` is never implied by
//! clocks (they say when `u` finished, not when its data landed), only by **an earlier consumer
//! of `u` on the consumer's own core**: if `u → w` is kept and `w` is before `v` on `v`'s core,
//! then `w` started only after `u`'s own signal reached it (its data had landed), and `v` starts
//! after `w` finished, so `u → v` needs no signal of its own. A put announcing to many tiles
//! of one core thus signals the first of them only; the result still does not depend on when
//! a put's data lands.
//!
//! # Exactness and cost
//! With clocks never capped, the result is the exact transitive reduction of the cross-core
//! edges: a kept edge `u → v` has no other path from `u` to `v` through core order and kept
//! edges (such a path would end either in `v`'s core predecessor, whose clock already covers
//! `u`, or in a kept edge from a node `w` that `u` reaches, which has a larger topological
//! index, was considered first and covers `u`). Clocks are capped at [`CLOCK_CAP`] entries,
//! keeping the entries of the cores nearest to the node's own core by id (its own rank and the
//! neighbouring ones), which at worst keeps a few redundant edges. Time O(E · CLOCK_CAP +
//! E log E) and memory O(V + E + live clocks · CLOCK_CAP).
//!
//! At scale (10^5–10^6 nodes, thousands of cores) the time goes into merging capped clocks
//! and into cache misses on reading them: on the 10^6-instance MoE layer of the
//! `schedule_scale` bench every edge crosses cores and 86% are kept, so nearly every edge
//! merges a producer's clock (28 facts on average), and about 250 000 clocks (some 64 MB) are
//! alive at once, so a read of one is a trip to memory. So a merge into a full clock skips, by
//! binary search, the facts the cap would drop anyway (on many ranks, most facts of a remote
//! producer's clock); the cap itself is a binary search; step 1 copies the core
//! predecessor's clock instead of merging it; a merge that brings no new core raises positions
//! in place; each node's core, position, visiting index, the slot of its clock and its count
//! of unvisited successors sit side by side in 20 bytes (one cache miss per predecessor, for
//! judging the edge and for counting the visit); and clocks live, length first, in
//! fixed-width slots of an arena, so reading a predecessor's clock is one more miss, not
//! three. From [`WORTH_A_THREAD_FROM`] (2^16) nodes on, the walk runs on two threads, each
//! visiting the nodes of one half of the cores in the same global order ([`walk`] says why
//! that keeps the same edges). None of this changes the result. (A merge that walks outwards from the own core's fact, taking the nearer of the
//! two sides at each step and so never reading what the cap drops, measured slower than the
//! plain merge and cap: 0.9–1.5 s against 0.6–0.9 s for the stage at 10^6.)

use super::Placement;
use super::proof::{Proved, prove_with_order};
use crate::graph::{Csr, Dag};
use crate::ids::NodeId;
use crate::side_by_side::WORTH_A_THREAD_FROM;
use std::sync::atomic::AtomicU32;

mod walk;

/// Most `(core, position)` facts one node's clock keeps.
pub const CLOCK_CAP: usize = 32;

/// `(core, position)`: every node at `position` or earlier on `core` has finished.
type Fact = (u32, u32);

/// Per node: the cross-core predecessors that still need an explicit wait (row `v`, sorted
/// by node id), for `placement`'s per-core orders. Every cross-core edge is a candidate for
/// removal; see the module documentation for the algorithm and its soundness.
///
/// # Panics
/// If the placement's orders deadlock (prove them with
/// [`prove_deadlock_free`](super::prove_deadlock_free) first) or do not queue every node once.
pub fn reduce_cross_core_edges(dag: &Dag, placement: &Placement) -> Csr {
    reduce_with_cap(dag, placement, &proved(dag, placement), |_| false, CLOCK_CAP)
}

/// [`reduce_cross_core_edges`], except that a cross-core edge *out of* a node `u` for which
/// `keep_all_from` is true is dropped only when an earlier node of the consumer's core keeps
/// its edge from `u` (see the module documentation). Used for tiles that write into other
/// ranks, whose data is known to have landed only through their own signal.
pub fn reduce_cross_core_edges_keeping(
    dag: &Dag,
    placement: &Placement,
    keep_all_from: impl Fn(NodeId) -> bool,
) -> Csr {
    reduce_counting(dag, placement, &proved(dag, placement), keep_all_from, CLOCK_CAP).0
}

/// [`reduce_cross_core_edges_keeping`] with the core chains and the order of the placement's
/// deadlock proof ([`super::proof::prove_with_order`] of `placement.queues`), instead of
/// building them again; with the number of dependency edges between different cores (before
/// the reduction), which the walk counts on its way.
pub(crate) fn reduce_proved_counting(
    dag: &Dag,
    placement: &Placement,
    proved: &Proved,
    keep_all_from: impl Fn(NodeId) -> bool,
) -> (Csr, u64) {
    reduce_counting(dag, placement, proved, keep_all_from, CLOCK_CAP)
}

/// The core chains and union order of `placement`, for the reduction.
///
/// # Panics
/// If the placement deadlocks or does not queue every node once.
fn proved(dag: &Dag, placement: &Placement) -> Proved {
    prove_with_order(dag, &placement.queues).unwrap_or_else(|cycle| {
        panic!("the placement deadlocks (cycle {cycle:?}); prove it deadlock-free before reducing")
    })
}

fn reduce_with_cap(
    dag: &Dag,
    placement: &Placement,
    proved: &Proved,
    keep_all_from: impl Fn(NodeId) -> bool,
    cap: usize,
) -> Csr {
    reduce_counting(dag, placement, proved, keep_all_from, cap).0
}

/// [`reduce_with_cap`], and the number of cross-core edges before the reduction.
fn reduce_counting(
    dag: &Dag,
    placement: &Placement,
    proved: &Proved,
    keep_all_from: impl Fn(NodeId) -> bool,
    cap: usize,
) -> (Csr, u64) {
    // Two workers keep the same edges as one; from this size on they take about half the wall
    // time for the same CPU (10^5 nodes: 48–50 ms against 91–98 ms, the plan's CPU 240–260 ms
    // against 260–280 ms; a 160 320-node natural-routing layer in the macro: 116–125 ms against
    // 197–227 ms).
    let workers = if dag.nodes() >= WORTH_A_THREAD_FROM { 2 } else { 1 };
    reduce_on(dag, placement, proved, keep_all_from, cap, workers)
}

/// [`reduce_counting`] on `workers` (1 or 2) workers: the same edges and count either way.
fn reduce_on(
    dag: &Dag,
    placement: &Placement,
    proved: &Proved,
    keep_all_from: impl Fn(NodeId) -> bool,
    cap: usize,
    workers: usize,
) -> (Csr, u64) {
    // What the walk reads of a predecessor, side by side: one cache miss per predecessor
    // instead of one per array.
    let mut at: Vec<At> = placement
        .core_of
        .iter()
        .map(|(v, core)| At {
            core: core.raw(),
            position: placement.position[v],
            order: u32::from(keep_all_from(v)),
            clock: AtomicU32::new(walk::NO_SLOT),
            unvisited: AtomicU32::new(
                u32::try_from(dag.succ.degree(v) + usize::from(proved.chain.next[v].is_some()))
                    .expect("edge counts fit u32"),
            ),
        })
        .collect();
    for (i, &v) in proved.order.iter().enumerate() {
        at[v.index()].order |= u32::try_from(i << 1).expect("node count fits u32 with a bit to spare");
    }
    walk::walk(dag, placement, proved, at, cap, workers)
}

/// What the reduction reads of a node, in 20 bytes: its core (raw: the cap measures distances
/// between core ids), its position there, its index in the visiting order and whether every
/// cross-core edge out of it is kept (`order`: the index times two, plus one if kept), the
/// arena slot of its clock while stored (written once, when the node is visited), and how many
/// of its successors in DAG ∪ core order are not visited yet (its clock is freed when none
/// is). One cache miss per predecessor gives all of it: a successor's visit reads the record
/// to judge the edge, then counts itself in the same record.
#[derive(Debug)]
struct At {
    core: u32,
    position: u32,
    order: u32,
    clock: AtomicU32,
    unvisited: AtomicU32,
}

/// The largest position of `core` known finished, if any.
fn finished_position(facts: &[Fact], core: u32) -> Option<u32> {
    facts.binary_search_by_key(&core, |f| f.0).ok().map(|i| facts[i].1)
}

/// `acc := acc ∪ other`, keeping the larger position per core, then capped to `cap` facts
/// around `own_core` (which `acc` must contain). `scratch` is a reusable buffer.
///
/// When `acc` is full, only the facts of `other` that could survive the cap are merged: those
/// of cores `acc` already has, or nearer `own_core` than `acc`'s farthest core (the one
/// [`cap_facts`] would drop first). Any other fact of `other` ranks behind all `cap` facts
/// of `acc` and would be dropped again, so the result is the same, at the cost of two binary
/// searches instead of a walk over `other`.
fn merge_facts(acc: &mut Vec<Fact>, other: &[Fact], scratch: &mut Vec<Fact>, own_core: u32, cap: usize) {
    let other = if acc.len() >= cap { facts_that_may_survive(acc, other, own_core) } else { other };
    if other.is_empty() || raise_in_place(acc, other) {
        return;
    }
    scratch.clear();
    let (mut i, mut j) = (0, 0);
    while i < acc.len() && j < other.len() {
        let (a, b) = (acc[i], other[j]);
        if a.0 == b.0 {
            scratch.push((a.0, a.1.max(b.1)));
            i += 1;
            j += 1;
        } else if a.0 < b.0 {
            scratch.push(a);
            i += 1;
        } else {
            scratch.push(b);
            j += 1;
        }
    }
    scratch.extend_from_slice(&acc[i..]);
    scratch.extend_from_slice(&other[j..]);
    std::mem::swap(acc, scratch);
    cap_facts(acc, own_core, cap);
}

/// When every core of `other` already has a fact in `acc` (both sorted by core), raises those
/// facts' positions to `other`'s, in place, and returns true: the merge then adds no core, so
/// `acc` keeps its length and the cap has nothing to drop (`acc` holds at most `cap` facts).
/// Otherwise returns false, with some of `acc`'s positions possibly raised already, which the
/// full merge (taking the larger position per core) does again to the same effect.
fn raise_in_place(acc: &mut [Fact], other: &[Fact]) -> bool {
    let mut i = 0;
    for &(core, position) in other {
        while i < acc.len() && acc[i].0 < core {
            i += 1;
        }
        match acc.get_mut(i) {
            Some(fact) if fact.0 == core => fact.1 = fact.1.max(position),
            _ => return false,
        }
        i += 1;
    }
    true
}

/// The facts of `other` (sorted by core) whose cores lie in [`cap_window_survivors`]'s range.
fn facts_that_may_survive<'a>(acc: &[Fact], other: &'a [Fact], own_core: u32) -> &'a [Fact] {
    let (lo, hi) = cap_window_survivors(acc, own_core);
    let start = other.partition_point(|f| u64::from(f.0) < lo);
    let end = other.partition_point(|f| u64::from(f.0) <= hi);
    &other[start..end.max(start)]
}

/// The cores (`lo..=hi`) whose facts may survive merging into a full, capped `acc` around
/// `own_core`: those in the range `acc` spans, or that rank before `acc`'s farthest core by
/// distance to `own_core`, ties to the lower id (the order [`cap_facts`] keeps).
fn cap_window_survivors(acc: &[Fact], own_core: u32) -> (u64, u64) {
    let (first, last) = (u64::from(acc[0].0), u64::from(acc[acc.len() - 1].0));
    let own = u64::from(own_core);
    let (left, right) = (own - first, last - own);
    if left > right {
        // The first core is the farthest: anything to the right nearer than it may enter.
        (first, last.max((own + left).saturating_sub(1)))
    } else {
        // The last core is the farthest (or ties with the first and has the higher id):
        // anything to the left at most as far may enter.
        (first.min(own.saturating_sub(right)), last)
    }
}

/// Keeps the `cap` facts whose cores are nearest `own_core` by id (ties to the lower id):
/// in a list sorted by core they form a window around `own_core`'s fact.
fn cap_facts(facts: &mut Vec<Fact>, own_core: u32, cap: usize) {
    if facts.len() <= cap {
        return;
    }
    let own = facts.binary_search_by_key(&own_core, |f| f.0).expect("a clock always has its own core's fact");
    // The window is `lo..lo + cap` for the first `lo` (among those keeping `own` inside) where
    // sliding right would not help: the fact it would drop is no farther than the one it
    // would take in (a tie keeps the lower id). Dropped facts get farther as `lo` grows and
    // taken ones nearer, so that is a binary search.
    let (mut lo, mut hi) = ((own + 1).saturating_sub(cap), own.min(facts.len() - cap));
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if own_core - facts[mid].0 > facts[mid + cap].0 - own_core {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    facts.copy_within(lo..lo + cap, 0);
    facts.truncate(cap);
}

#[cfg(test)]
mod tests;
