//! The reduction's walk over the visiting order (see [`super`] for the algorithm), on one
//! worker or, on a large schedule, two.
//!
//! # Two workers
//! The cores are split in two ranges of consecutive ids holding about half the nodes each;
//! a worker visits the nodes of its range in the global visiting order and computes for each
//! exactly what one worker would: a node's result depends only on its core predecessor's
//! clock (the same worker's), on its predecessors' immutable records (core, position,
//! visiting index), on the clocks of the predecessors whose edges it keeps, and on the marked
//! producers already signalled on its own core (the same worker's). So the kept edges are the
//! one-worker ones whatever the interleaving; only which arena slot holds which clock differs.
//!
//! A worker reads a clock of the other's only after the other has published (a release
//! store of its progress: the visiting index of its next node) that it has visited the
//! producer; dependencies point backwards in the visiting order and each worker visits its
//! nodes in that order, so the worker holding the earliest unvisited node never waits, and
//! the two never wait for each other. A clock is freed by whichever worker visits the last
//! successor of its node (an atomic count of unvisited successors); a slot of the other's
//! arena goes back to it through its inbox, for reuse only after every reader has read it.
//! Every decrement of a node's count happens after the node's visit: a successor either kept
//! the edge (and waited for the visit) or found it implied by facts that only clocks written
//! after the visit carry.

use super::{At, CLOCK_CAP, Fact, cap_window_survivors, finished_position, merge_facts};
use crate::graph::{Csr, Dag};
use crate::ids::NodeId;
use crate::schedule::Placement;
use crate::schedule::proof::{CoreChain, Proved};
use std::cmp::Reverse;
use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::thread::Thread;

/// No clock stored: the slot field of an [`At`] before its node is visited and when its node
/// has no successor.
pub(super) const NO_SLOT: u32 = u32::MAX;

/// The kept edges (row `v`: `v`'s kept predecessors, ascending) of the walk over
/// `proved.order` on `workers` (1 or 2) workers, each node's clock capped at `cap` facts; `at`
/// per node as [`super`] builds it (clock slots [`NO_SLOT`]). With them, the number of edges
/// between different cores the walk considered (every one of the DAG's).
pub(super) fn walk(
    dag: &Dag,
    placement: &Placement,
    proved: &Proved,
    at: Vec<At>,
    cap: usize,
    workers: usize,
) -> (Csr, u64) {
    let nodes = dag.nodes();
    let Proved { chain, order } = proved;
    // Worker 0 takes the cores below `split`: the first core id by which half the nodes are
    // queued (with one worker, every core).
    let split = if workers >= 2 {
        let mut queued = 0;
        placement
            .queues
            .row_ids()
            .find(|&c| {
                queued += placement.queues.degree(c);
                2 * queued >= nodes
            })
            .map_or(u32::MAX, |c| c.raw() + 1)
    } else {
        u32::MAX
    };
    let worker_of = |core: u32| usize::from(core >= split);
    let mut visits: [Vec<u32>; 2] = [Vec::new(), Vec::new()];
    // Per worker: the edges into its nodes, the most it can keep (room made up front, so its
    // kept edges are written once rather than copied as they grow).
    let mut in_edges = [0usize; 2];
    for (i, &v) in order.iter().enumerate() {
        let w = worker_of(at[v.index()].core);
        visits[w].push(i as u32);
        in_edges[w] += dag.pred.degree(v);
    }
    let shared = Shared {
        dag,
        chain,
        order,
        at,
        split,
        alone: visits[0].is_empty() || visits[1].is_empty(),
        cap,
        arenas: [0, 1].map(|w| Arena::new(visits[w].len(), cap.min(placement.queues.nodes()))),
        progress: [0, 1].map(|w| Progress(AtomicUsize::new(visits[w].first().map_or(usize::MAX, |&i| i as usize)))),
        waiting: [0, 1].map(|_| Progress(AtomicUsize::new(usize::MAX))),
        threads: [OnceLock::new(), OnceLock::new()],
        inbox: [Mutex::new(Vec::new()), Mutex::new(Vec::new())],
    };
    let shared = &shared;
    let kept = if visits[1].is_empty() || visits[0].is_empty() {
        let me = usize::from(visits[0].is_empty());
        vec![Worker::new(shared, me, in_edges[me]).run(&visits[me])]
    } else {
        let (first, second) = (&visits[0], &visits[1]);
        std::thread::scope(|s| {
            let other = s.spawn(move || Worker::new(shared, 1, in_edges[1]).run(second));
            let kept = Worker::new(shared, 0, in_edges[0]).run(first);
            vec![kept, other.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))]
        })
    };
    (rows_of(nodes, &kept), kept.iter().map(|k| k.cross).sum())
}

/// The rows a worker kept: the flat predecessors, each row sorted by node id, and per
/// consumer with a row, the consumer and its row's length; and how many cross-core edges
/// into its nodes it considered.
#[derive(Default)]
struct Kept {
    flat: Vec<NodeId>,
    rows: Vec<(NodeId, u32)>,
    cross: u64,
}

/// The kept edges of every worker as one graph: row `v`, `v`'s kept predecessors.
fn rows_of(nodes: usize, kept: &[Kept]) -> Csr {
    let mut offsets = vec![0u32; nodes + 1];
    for &(v, len) in kept.iter().flat_map(|k| &k.rows) {
        offsets[v.index() + 1] = len;
    }
    for i in 0..nodes {
        offsets[i + 1] += offsets[i];
    }
    let mut targets = vec![NodeId::new(0); offsets[nodes] as usize];
    for k in kept {
        let mut from = 0;
        for &(v, len) in &k.rows {
            let (to, len) = (offsets[v.index()] as usize, len as usize);
            targets[to..to + len].copy_from_slice(&k.flat[from..from + len]);
            from += len;
        }
    }
    Csr::from_parts(offsets, targets)
}

/// What both workers read: the graph, the per-node records and counts, the two arenas and
/// the workers' progress.
struct Shared<'a> {
    dag: &'a Dag,
    chain: &'a CoreChain,
    order: &'a [NodeId],
    at: Vec<At>,
    /// Cores below this belong to worker 0.
    split: u32,
    /// One worker visits every node.
    alone: bool,
    cap: usize,
    /// Worker `w`'s clocks.
    arenas: [Arena; 2],
    /// Worker `w` has visited every node of its own whose visiting index is below this.
    progress: [Progress; 2],
    /// Worker `w` is parked (or about to park) until the other's progress passes this
    /// visiting index; `usize::MAX` while it is not waiting.
    waiting: [Progress; 2],
    /// Worker `w`'s thread, to wake it when it is parked.
    threads: [OnceLock<Thread>; 2],
    /// Slots of worker `w`'s arena the other worker freed, for `w` to reuse.
    inbox: [Mutex<Vec<u32>>; 2],
}

/// A worker's progress (or what it waits for), alone on its cache line (the other worker
/// reads it while it writes).
#[repr(align(128))]
struct Progress(AtomicUsize);

impl Shared<'_> {
    fn worker_of(&self, core: u32) -> usize {
        usize::from(core >= self.split)
    }

    /// Publishes that worker `me` has visited every node of its own below visiting index
    /// `next`, and wakes the other worker if it waits for one of them (see
    /// [`Worker::wait_for`]).
    fn publish(&self, me: usize, next: usize) {
        self.progress[me].0.store(next, Ordering::SeqCst);
        let other = 1 - me;
        if self.waiting[other].0.load(Ordering::SeqCst) < next
            && let Some(thread) = self.threads[other].get()
        {
            thread.unpark();
        }
    }

    /// Counts one more visited successor of `p`; true if it was the last.
    fn visited_successor(&self, p: NodeId) -> bool {
        let count = &self.at[p.index()].unvisited;
        if self.alone {
            // No other thread touches the count: a plain load and store, not a locked update.
            let left = count.load(Ordering::Relaxed) - 1;
            count.store(left, Ordering::Relaxed);
            left == 0
        } else {
            count.fetch_sub(1, Ordering::AcqRel) == 1
        }
    }
}

/// One worker's own state.
struct Worker<'s, 'a> {
    s: &'s Shared<'a>,
    me: usize,
    /// The other worker's progress as last read (it only grows).
    seen: usize,
    known: Vec<Fact>,
    scratch: Vec<Fact>,
    other: Vec<Fact>,
    /// `v`'s cross-core predecessors: (visiting index reversed, node, core, position).
    candidates: Vec<(Reverse<u32>, NodeId, u32, u32)>,
    kept: Kept,
    /// (marked producer, core) pairs with a kept edge into that core (one of this worker's):
    /// its later tiles there are covered (the order visits a core's tiles in queue order).
    signalled: HashSet<u64, BuildHasherDefault<PairHasher>>,
    /// Free slots of this worker's arena, and the first never used.
    free: Vec<u32>,
    fresh: u32,
    /// Slots of the other worker's arena this one freed, not yet handed over.
    outbox: Vec<u32>,
}

/// Freed slots handed to their arena's worker at a time.
const HAND_OVER: usize = 256;

impl<'s, 'a> Worker<'s, 'a> {
    /// Worker `me`, whose nodes have `in_edges` edges into them.
    fn new(s: &'s Shared<'a>, me: usize, in_edges: usize) -> Self {
        Worker {
            s,
            me,
            seen: 0,
            known: Vec::with_capacity(2 * CLOCK_CAP),
            scratch: Vec::with_capacity(2 * CLOCK_CAP),
            other: Vec::with_capacity(2 * CLOCK_CAP),
            candidates: Vec::new(),
            kept: Kept { flat: Vec::with_capacity(in_edges), ..Kept::default() },
            signalled: HashSet::default(),
            free: Vec::new(),
            fresh: 0,
            outbox: Vec::new(),
        }
    }

    /// Visits the nodes at `visits` (indices into the order, ascending); the kept edges.
    fn run(mut self, visits: &[u32]) -> Kept {
        let s = self.s;
        // Should this worker panic, the other must not wait for it forever.
        let _finished = Finished(s, self.me);
        if !s.alone {
            // Before any wait of this worker: the other wakes it through this.
            let _ = s.threads[self.me].set(std::thread::current());
        }

        for (k, &i) in visits.iter().enumerate() {
            self.visit(s.order[i as usize]);
            let next = visits.get(k + 1).map_or(usize::MAX, |&n| n as usize);
            if s.alone {
                s.progress[self.me].0.store(next, Ordering::Release);
            } else {
                s.publish(self.me, next);
            }
        }
        self.kept
    }

    fn visit(&mut self, v: NodeId) {
        let s = self.s;
        let At { core, position, .. } = s.at[v.index()];
        // What the node before `v` on its core knew, and `v` itself (that clock has its own
        // core's fact, for the position before `v`'s).
        self.known.clear();
        if let Some(prev) = s.chain.prev[v].get() {
            s.arenas[self.me].read(s.at[prev.index()].slot(), (0, u64::MAX), &mut self.known);
            let own = self.known.binary_search_by_key(&core, |f| f.0).expect("a clock always has its own core's fact");
            self.known[own].1 = position;
        } else {
            self.known.push((core, position));
        }

        self.candidates.clear();
        self.candidates.extend(s.dag.pred.row(v).iter().filter_map(|&u| {
            let from = &s.at[u.index()];
            (from.core != core).then_some((Reverse(from.order), u, from.core, from.position))
        }));
        // Visiting indices are distinct: the order is the one sorting by index alone gives.
        self.candidates.sort_unstable_by_key(|c| c.0);
        self.kept.cross += self.candidates.len() as u64;
        let row = self.kept.flat.len();
        for ci in 0..self.candidates.len() {
            let (Reverse(order), u, from_core, from_position) = self.candidates[ci];
            let implied = if order & 1 == 1 {
                !self.signalled.insert(u64::from(u.raw()) << 32 | u64::from(core))
            } else {
                finished_position(&self.known, from_core) >= Some(from_position)
            };
            if !implied {
                self.kept.flat.push(u);
                let owner = s.worker_of(from_core);
                if owner != self.me {
                    self.wait_for(owner, (order >> 1) as usize);
                }
                // A full clock takes only the facts that may survive its cap.
                let range =
                    if self.known.len() >= s.cap { cap_window_survivors(&self.known, core) } else { (0, u64::MAX) };
                s.arenas[owner].read(s.at[u.index()].slot(), range, &mut self.other);
                merge_facts(&mut self.known, &self.other, &mut self.scratch, core, s.cap);
            }
        }

        let kept_row = &mut self.kept.flat[row..];
        if !kept_row.is_empty() {
            kept_row.sort_unstable();
            self.kept.rows.push((v, kept_row.len() as u32));
        }

        for p in s.chain.union_pred(s.dag, v) {
            if s.visited_successor(p) {
                self.release(p);
            }
        }
        // None of `v`'s successors is visited yet: it has a successor iff its count is not 0.
        if s.at[v.index()].unvisited.load(Ordering::Relaxed) > 0 {
            let slot = self.take_slot();
            s.arenas[self.me].write(slot, &self.known);
            s.at[v.index()].clock.store(slot, Ordering::Relaxed);
        }
    }

    /// Waits until worker `owner` has visited the node at visiting index `index`: spins a
    /// little (the other is usually about to get there), then parks until the other wakes it
    /// ([`Shared::publish`]), so that on a busy machine a waiting worker leaves the core to
    /// the one it waits for instead of spinning or yielding in turn with it.
    fn wait_for(&mut self, owner: usize, index: usize) {
        let s = self.s;
        let mut spins = 0u32;
        while self.seen <= index {
            self.seen = s.progress[owner].0.load(Ordering::Acquire);
            if self.seen > index {
                break;
            }
            if spins < SPINS {
                std::hint::spin_loop();
                spins += 1;
                continue;
            }
            // Announce the wait, then look again: `publish` stores its progress before it
            // reads this, so (both sequentially consistent) either this sees the progress or
            // `publish` sees the wait and wakes this worker. A stale wake-up only loops.
            s.waiting[self.me].0.store(index, Ordering::SeqCst);
            self.seen = s.progress[owner].0.load(Ordering::SeqCst);
            if self.seen <= index {
                std::thread::park();
            }
            s.waiting[self.me].0.store(usize::MAX, Ordering::Relaxed);
        }
    }

    /// Frees the clock of `p`, whose successors have all been visited.
    fn release(&mut self, p: NodeId) {
        let s = self.s;
        let slot = s.at[p.index()].slot();
        if slot == NO_SLOT {
            return;
        }
        if s.worker_of(s.at[p.index()].core) == self.me {
            self.free.push(slot);
        } else {
            self.outbox.push(slot);
            if self.outbox.len() >= HAND_OVER {
                s.inbox[1 - self.me].lock().unwrap_or_else(|e| e.into_inner()).append(&mut self.outbox);
            }
        }
    }

    /// A free slot of this worker's arena: one it freed, one the other worker handed back,
    /// or a new one.
    fn take_slot(&mut self) -> u32 {
        if self.free.is_empty() {
            std::mem::swap(&mut self.free, &mut self.s.inbox[self.me].lock().unwrap_or_else(|e| e.into_inner()));
        }
        self.free.pop().unwrap_or_else(|| {
            self.fresh += 1;
            self.fresh - 1
        })
    }
}

/// Marks a worker done, however it leaves [`Worker::run`] (and wakes the other, should it
/// wait).
struct Finished<'s, 'a>(&'s Shared<'a>, usize);

impl Drop for Finished<'_, '_> {
    fn drop(&mut self) {
        let Finished(s, me) = *self;
        s.publish(me, usize::MAX);
    }
}

/// Spins of a waiting worker before it parks.
const SPINS: u32 = 256;

impl At {
    /// The slot of the node's clock ([`NO_SLOT`] before it is visited or without successors).
    fn slot(&self) -> u32 {
        self.clock.load(Ordering::Relaxed)
    }
}

/// Slots per chunk of an [`Arena`].
const CHUNK_SLOTS: usize = 1 << 10;

/// One worker's clocks, in fixed-width slots (a clock has at most one fact per core and at
/// most `cap` facts), in chunks allocated as needed and never moved, so that the other worker
/// can read a slot while this one writes others. A slot holds its clock's length, then its
/// facts (`core << 32 | position`). At most one slot per node of the worker is in use.
struct Arena {
    chunks: Vec<OnceLock<Box<[AtomicU64]>>>,
    /// Entries per slot: the length and `width` facts.
    stride: usize,
}

impl Arena {
    fn new(nodes: usize, width: usize) -> Self {
        Arena { chunks: (0..nodes.div_ceil(CHUNK_SLOTS)).map(|_| OnceLock::new()).collect(), stride: width + 1 }
    }

    /// The entries of `slot`.
    fn entries(&self, slot: u32) -> &[AtomicU64] {
        let (chunk, index) = (slot as usize / CHUNK_SLOTS, slot as usize % CHUNK_SLOTS);
        let chunk =
            self.chunks[chunk].get_or_init(|| (0..CHUNK_SLOTS * self.stride).map(|_| AtomicU64::new(0)).collect());
        &chunk[index * self.stride..(index + 1) * self.stride]
    }

    /// Stores `facts` in `slot`.
    fn write(&self, slot: u32, facts: &[Fact]) {
        let entries = self.entries(slot);
        assert!(facts.len() < entries.len(), "a clock has at most one fact per core and at most `cap` facts");
        entries[0].store(facts.len() as u64, Ordering::Relaxed);
        for (e, &(core, position)) in entries[1..].iter().zip(facts) {
            e.store(u64::from(core) << 32 | u64::from(position), Ordering::Relaxed);
        }
    }

    /// The facts of the clock in `slot` whose cores lie in `lo..=hi`, into `out`.
    fn read(&self, slot: u32, (lo, hi): (u64, u64), out: &mut Vec<Fact>) {
        assert_ne!(slot, NO_SLOT, "a clock read after its release");
        let entries = self.entries(slot);
        let len = entries[0].load(Ordering::Relaxed) as usize;
        let facts = &entries[1..=len];
        let core = |i: usize| facts[i].load(Ordering::Relaxed) >> 32;
        let (start, end) = (partition_point(len, |i| core(i) < lo), partition_point(len, |i| core(i) <= hi));
        out.clear();
        out.extend(facts[start..end.max(start)].iter().map(|f| {
            let f = f.load(Ordering::Relaxed);
            ((f >> 32) as u32, f as u32)
        }));
    }
}

/// The first index in `0..len` for which `below` is false (`below` true then false).
fn partition_point(len: usize, below: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, len);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if below(mid) { lo = mid + 1 } else { hi = mid }
    }
    lo
}

/// A hasher for the `(producer, core)` keys of the signalled set, packed in one `u64`: a
/// multiply that folds its high half into the low one (the keys are distinct integers; no
/// adversary chooses them).
#[derive(Default)]
struct PairHasher(u64);

impl Hasher for PairHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, key: u64) {
        let m = u128::from(self.0 ^ key) * 0x9e37_79b9_7f4a_7c15;
        self.0 = (m as u64) ^ ((m >> 64) as u64);
    }
}
