//! One list-scheduling pass: an event-driven simulation of the cores under the cost model
//! (see the module documentation of [`super`] for the rules it follows).

use super::booked::Booked;
use super::heap::QuadHeap;
use super::{CLASSES, Direction, LANE, Pass, Setup, order};
use crate::graph::Csr;
use crate::ids::{CoreId, Id, IdVec, NodeId, OptId};
use std::cmp::Reverse;
use std::collections::{BTreeSet, VecDeque};

/// Priority of a ready node in a max-heap: bottom level descending, then send round
/// ascending, then node id ascending; for a link put on a lane when lanes go by round
/// (`Setup::lanes_by_round`), its turn first ([`order::lane_turn`]: family, then send round;
/// in a backward pass the last turn first). Packed into one integer, ordered as the tuple
/// `(level, Reverse(round), Reverse(node))`: `level << 64 | !round << 32 | !node`. (One
/// integer compares in a few instructions where the tuple branches field by field; the heaps
/// are most of a pass's time at 10^6 nodes. Keys are distinct, as each holds its node, so any
/// heap pops them in the same order.)
type ReadyKey = u128;

fn ready_key(level: u64, round: u32, v: NodeId) -> ReadyKey {
    u128::from(level) << 64 | u128::from(!round) << 32 | u128::from(!v.raw())
}

fn node_of(key: ReadyKey) -> NodeId {
    NodeId::new(!(key as u32))
}

/// A running node in a min-heap by finish time: `finish << 32 | node`, ordered as the tuple
/// `(finish, node)`.
type RunningKey = Reverse<u128>;

fn running_key(finish: u64, v: NodeId) -> RunningKey {
    Reverse(u128::from(finish) << 32 | u128::from(v.raw()))
}

/// A node about to become ready in a min-heap: `time << 64 | node << 32 | core`, ordered as
/// the tuple `(time, node, core)`, none (`u32::MAX`) after every core.
type ArrivalKey = Reverse<u128>;

fn arrival_key(time: u64, v: NodeId, core: OptId<CoreId>) -> ArrivalKey {
    let core = core.get().map_or(crate::ids::RESERVED, CoreId::raw);
    Reverse(u128::from(time) << 64 | u128::from(v.raw()) << 32 | u128::from(core))
}

fn arrival_of(key: ArrivalKey) -> (u64, NodeId, OptId<CoreId>) {
    let k = key.0;
    ((k >> 64) as u64, NodeId::new((k >> 32) as u32), CoreId::try_new(k as u32).into())
}

/// Runs one pass over the DAG whose predecessor and successor rows are `pred` and `succ` (the
/// instance DAG, or it reversed), most urgent first by `levels`: where and when every node ran.
/// A node never placed (only on a cyclic DAG) has no queue position: the caller checks.
pub(super) fn run<'a>(s: &'a Setup<'a>, pred: &'a Csr, succ: &'a Csr, levels: Vec<u64>, direction: Direction) -> Pass {
    let mut sim = Sim::new(s, pred, succ, levels, direction);
    sim.run();
    Pass {
        core_of: sim.core_of.map(|c| c.get().unwrap_or(CoreId::new(0))),
        position: sim.position,
        queue_len: sim.queue_len,
        start_ns: sim.start_ns,
        finish_ns: sim.finish_ns,
    }
}

/// The state of one pass: an event-driven simulation.
struct Sim<'a> {
    s: &'a Setup<'a>,
    pred: &'a Csr,
    succ: &'a Csr,
    levels: IdVec<NodeId, u64>,

    // Per node.
    waiting_preds: IdVec<NodeId, u32>,
    started: IdVec<NodeId, bool>,
    /// None until placed.
    core_of: IdVec<NodeId, OptId<CoreId>>,
    position: IdVec<NodeId, u32>,
    start_ns: IdVec<NodeId, u64>,
    finish_ns: IdVec<NodeId, u64>,

    // Per core.
    queue_len: IdVec<CoreId, u32>,
    busy: IdVec<CoreId, bool>,
    /// The core has an entry in its group's idle queue (possibly outdated).
    in_queue: IdVec<CoreId, bool>,
    /// Idle, with affine nodes waiting: in `pending` while its group is dispatched.
    has_affine: IdVec<CoreId, bool>,
    /// Nodes ready on this core only (their affine core).
    affine: IdVec<CoreId, QuadHeap<ReadyKey>>,
    dirty_core: IdVec<CoreId, bool>,

    // Per group.
    ready: Vec<QuadHeap<ReadyKey>>,
    /// Idle cores without affine nodes in the order they were filed idle, the most recent at
    /// the back; entries of cores that have since become busy or gained affine nodes are
    /// skipped, and a core whose entry is still queued keeps its place when it is filed idle
    /// again (one that ran an affine node since: it counts as idle since its earlier filing).
    idle: Vec<VecDeque<CoreId>>,
    /// The input that made the node ready last came from another server
    /// ([`Sim::schedule_ready`]): the node takes the idle core that has been idle longest, not
    /// the one freed last.
    late_input_across: IdVec<NodeId, bool>,
    /// Idle cores, with or without affine nodes.
    idle_count: Vec<u32>,
    cores_in_group: Vec<u32>,
    /// Cores freed, or given an affine node, at the current time.
    dirty_cores: Vec<Vec<CoreId>>,
    dirty_group: Vec<bool>,
    dirty_groups: Vec<u32>,

    /// Running nodes by finish time: `(finish, node)`, at most one per core.
    running: QuadHeap<RunningKey>,
    /// Nodes about to become ready: `(time, node, core)`, ready on `core` only, or on every
    /// core of their (rank, kind) when `core` is none (which orders after every core).
    arrivals: QuadHeap<ArrivalKey>,
    /// The sources' arrivals at time 0, in key order, before `next_source`: merged with
    /// `arrivals` as if they were in it. (A sorted run costs nothing to take from; heaped, the
    /// many sources of a large taskflow cost a sift through a deep heap each.)
    sources: Vec<ArrivalKey>,
    next_source: usize,
    /// While a group is dispatched: its idle cores with affine nodes, keyed by their most
    /// urgent one.
    pending: BTreeSet<(ReadyKey, CoreId)>,
    /// Which way the pass walks the DAG: a lane of a backward pass, which schedules from the
    /// end, takes its puts in the reverse of the forward turn order.
    direction: Direction,
    /// What the server tier has booked so far ([`super::net::Net::book`]).
    booked: Booked,
    /// What the HBM has booked so far ([`super::hbm::Hbm::book`]).
    hbm_booked: Booked,
}

impl<'a> Sim<'a> {
    fn new(s: &'a Setup<'a>, pred: &'a Csr, succ: &'a Csr, levels: Vec<u64>, direction: Direction) -> Self {
        let nodes = s.exp.nodes();
        let groups = (CLASSES * s.profile.ranks) as usize;
        let total_cores = s.profile.total_cores() as usize;
        // Every core starts idle; the lowest id at the back of its group's queue (taken first
        // as the most recently freed), the highest at the front (as the longest idle).
        let mut idle = vec![VecDeque::new(); groups];
        for (c, &g) in s.group_of_core.iter().rev() {
            idle[g as usize].push_back(c);
        }
        let cores_in_group: Vec<u32> = idle.iter().map(|s| s.len() as u32).collect();

        let waiting_preds: IdVec<NodeId, u32> = pred.row_ids().map(|v| pred.degree(v) as u32).collect();
        let sources: Vec<_> =
            waiting_preds.iter().filter(|&(_, &w)| w == 0).map(|(v, _)| arrival_key(0, v, OptId::NONE)).collect();

        Sim {
            s,
            pred,
            succ,
            levels: IdVec::from_vec(levels),
            waiting_preds,
            started: IdVec::filled(nodes, false),
            core_of: IdVec::filled(nodes, OptId::NONE),
            position: IdVec::filled(nodes, 0),
            start_ns: IdVec::filled(nodes, 0),
            finish_ns: IdVec::filled(nodes, 0),
            queue_len: IdVec::filled(total_cores, 0),
            busy: IdVec::filled(total_cores, false),
            in_queue: IdVec::filled(total_cores, true),
            has_affine: IdVec::filled(total_cores, false),
            affine: IdVec::filled(total_cores, QuadHeap::new()),
            dirty_core: IdVec::filled(total_cores, false),
            ready: vec![QuadHeap::new(); groups],
            idle,
            late_input_across: IdVec::filled(nodes, false),
            idle_count: cores_in_group.clone(),
            cores_in_group,
            dirty_cores: vec![Vec::new(); groups],
            dirty_group: vec![false; groups],
            dirty_groups: Vec::new(),
            running: QuadHeap::new(),
            arrivals: QuadHeap::new(),
            sources,
            next_source: 0,
            pending: BTreeSet::new(),
            direction,
            booked: Booked::idle(s.profile.ranks),
            hbm_booked: Booked::idle(s.profile.ranks),
        }
    }

    fn key(&self, v: NodeId) -> ReadyKey {
        let round = self.s.send_order[v];
        // A lane takes its ready puts round by round when the rounds stay in step (see "Link
        // lanes" in the module docs).
        if self.s.lanes_by_round && self.s.group_of_node[v] % CLASSES == LANE {
            // A backward pass schedules from the end: its lanes take the last turn first, so
            // that the times it hands the next forward pass mirror the forward's order.
            let turn = order::lane_turn(self.s.exp, v, round);
            let first = match self.direction {
                Direction::Forward => u64::MAX - turn,
                Direction::Backward => turn,
            };
            return ready_key(first, 0, v);
        }
        ready_key(self.levels[v], round, v)
    }

    /// Advances time from event to event (a node finishes, a node becomes ready); after all
    /// events of one time, starts work on every (rank, kind) where something changed.
    /// Starting a zero-cost node adds an event at the same time, which the next round handles.
    fn run(&mut self) {
        loop {
            let next_finish = self.running.peek().map(|e| (e.0 >> 32) as u64);
            let next_arrival = self.peek_arrival().map(|e| arrival_of(e).0);
            let Some(now) = next_finish.into_iter().chain(next_arrival).min() else { break };
            while let Some(&Reverse(k)) = self.running.peek()
                && (k >> 32) as u64 == now
            {
                self.running.pop();
                self.finish(NodeId::new(k as u32), now);
            }
            while let Some(key) = self.peek_arrival()
                && let (t, v, core) = arrival_of(key)
                && t == now
            {
                self.pop_arrival();
                if !self.started[v] {
                    self.arrive(v, core);
                }
            }
            while let Some(g) = self.dirty_groups.pop() {
                self.dirty_group[g as usize] = false;
                self.dispatch(g, now);
            }
        }
    }

    /// The next arrival: the first of the sources' run and the heap.
    fn peek_arrival(&self) -> Option<ArrivalKey> {
        // Min-heap keys are `Reverse`d: the larger key comes first.
        let source = self.sources.get(self.next_source).copied();
        match (source, self.arrivals.peek().copied()) {
            (Some(s), Some(h)) => Some(s.max(h)),
            (s, h) => s.or(h),
        }
    }

    /// Drops the arrival [`Self::peek_arrival`] returns.
    fn pop_arrival(&mut self) {
        let source = self.sources.get(self.next_source);
        if source.is_some() && self.arrivals.peek().is_none_or(|h| source > Some(h)) {
            self.next_source += 1;
        } else {
            self.arrivals.pop();
        }
    }

    /// `v` becomes ready on `core` only or, for none, on every core of its group.
    fn arrive(&mut self, v: NodeId, core: OptId<CoreId>) {
        let key = self.key(v);
        if let Some(core) = core.get() {
            self.affine[core].push(key);
            self.mark_core(core);
            return;
        }
        let g = self.s.group_of_node[v];
        if self.cores_in_group[g as usize] == 0 {
            panic!("profile {} has no {} core for node {v}", self.s.profile.name, self.s.exp.core_kind(v));
        }
        self.ready[g as usize].push(key);
        self.mark_group(g);
    }

    fn mark_group(&mut self, g: u32) {
        if !std::mem::replace(&mut self.dirty_group[g as usize], true) {
            self.dirty_groups.push(g);
        }
    }

    fn mark_core(&mut self, core: CoreId) {
        if !std::mem::replace(&mut self.dirty_core[core], true) {
            let g = self.s.group_of_core[core];
            self.dirty_cores[g as usize].push(core);
            self.mark_group(g);
        }
    }

    /// `v` finished at `now`: its core is free, and successors whose last predecessor it was
    /// get their ready times.
    fn finish(&mut self, v: NodeId, now: u64) {
        let core = self.core_of[v].get().expect("a finished node was placed");
        let g = self.s.group_of_core[core];
        self.busy[core] = false;
        self.idle_count[g as usize] += 1;
        self.push_idle(core);
        self.mark_core(core);
        let succ = self.succ;
        for &s in succ.row(v) {
            let w = &mut self.waiting_preds[s];
            *w -= 1;
            if *w == 0 {
                self.schedule_ready(s, now);
            }
        }
    }

    /// Adds the events at which `v`, whose predecessors have all finished by `now`, becomes
    /// ready on its affine core (if any) and on every core.
    fn schedule_ready(&mut self, v: NodeId, now: u64) {
        let (space, preds) = (&self.s.exp.space, self.pred.row(v));
        let rank = space.rank_of(v);
        let arrival = |u: NodeId| {
            let edge = if space.rank_of(u) == rank { self.s.edge_local } else { self.s.edge_remote };
            self.finish_ns[u].saturating_add(edge)
        };
        let server = |u: NodeId| self.s.ranks_per_server.map(|per_server| space.rank_of(u).raw() / per_server);
        let own_server = server(v);
        let (mut everywhere, mut late_core, mut one_core, mut late_across) = (0u64, OptId::NONE, true, false);
        for &u in preds {
            let (t, core, across) = (arrival(u), self.core_of[u], server(u) != own_server);
            if late_core.is_none() || t > everywhere {
                (everywhere, late_core, one_core, late_across) = (t, core, true, across);
            } else if t == everywhere {
                one_core &= core == late_core;
                late_across |= across;
            }
        }
        self.late_input_across[v] = late_across;
        debug_assert!(everywhere >= now);
        let g = self.s.group_of_node[v];
        if let Some(late) = late_core.get()
            && one_core
            && self.s.group_of_core[late] == g
        {
            let on_core =
                preds.iter().map(|&u| if self.core_of[u] == late_core { self.finish_ns[u] } else { arrival(u) });
            let on_core = on_core.max().unwrap_or(now);
            if on_core < everywhere {
                self.arrivals.push(arrival_key(on_core, v, late_core));
            }
        }
        self.arrivals.push(arrival_key(everywhere, v, OptId::NONE));
    }

    /// Puts an idle core without affine nodes at the back of its group's idle queue (once).
    fn push_idle(&mut self, core: CoreId) {
        if !std::mem::replace(&mut self.in_queue[core], true) {
            self.idle[self.s.group_of_core[core] as usize].push_back(core);
        }
    }

    /// Takes an idle core without affine nodes from group `g`'s queue for node `v`: the core
    /// freed last, or for a node whose latest input came from another server the one idle
    /// longest (see "Which idle core" in the module docs).
    fn pop_plain_idle(&mut self, g: u32, v: NodeId) -> Option<CoreId> {
        let (queue, longest_idle) = (&mut self.idle[g as usize], self.late_input_across[v]);
        while let Some(core) = if longest_idle { queue.pop_front() } else { queue.pop_back() } {
            self.in_queue[core] = false;
            if !self.busy[core] && !self.has_affine[core] {
                return Some(core);
            }
        }
        None
    }

    /// The most urgent node of `heap` that has not started, dropping started ones on top.
    fn top_unstarted(heap: &mut QuadHeap<ReadyKey>, started: &IdVec<NodeId, bool>) -> Option<ReadyKey> {
        while let Some(&key) = heap.peek() {
            if !started[node_of(key)] {
                return Some(key);
            }
            heap.pop();
        }
        None
    }

    /// Files idle `core` under its most urgent affine node in `pending`, or back in the idle
    /// queue if it has none left.
    fn file_idle_core(&mut self, core: CoreId) {
        match Self::top_unstarted(&mut self.affine[core], &self.started) {
            Some(key) => {
                self.has_affine[core] = true;
                self.pending.insert((key, core));
            }
            None => {
                self.has_affine[core] = false;
                self.push_idle(core);
            }
        }
    }

    /// Starts ready nodes of group `g` on its idle cores at `now`, most urgent first, until
    /// no core is idle or no node is ready.
    fn dispatch(&mut self, g: u32, now: u64) {
        debug_assert!(self.pending.is_empty());
        for core in std::mem::take(&mut self.dirty_cores[g as usize]) {
            self.dirty_core[core] = false;
            if !self.busy[core] {
                self.file_idle_core(core);
            }
        }
        while self.idle_count[g as usize] > 0 {
            let best_affine = loop {
                match self.pending.last() {
                    Some(&(key, core)) if self.started[node_of(key)] => {
                        self.pending.pop_last();
                        self.file_idle_core(core);
                    }
                    other => break other.copied(),
                }
            };
            let best_ready = Self::top_unstarted(&mut self.ready[g as usize], &self.started);
            match (best_affine, best_ready) {
                (None, None) => break,
                (Some((key, core)), _) if best_ready.is_none_or(|r| key >= r) => {
                    self.pending.pop_last();
                    self.affine[core].pop();
                    self.has_affine[core] = false;
                    self.start(node_of(key), core, now);
                }
                (_, Some(key)) => {
                    self.ready[g as usize].pop();
                    let core = self.pop_plain_idle(g, node_of(key)).unwrap_or_else(|| {
                        let (_, core) = self.pending.pop_first().expect("an idle core without affine nodes is queued");
                        self.has_affine[core] = false;
                        core
                    });
                    self.start(node_of(key), core, now);
                }
                (Some(_), None) => unreachable!("an affine node with no ready node is taken above"),
            }
        }
        debug_assert!(self.pending.is_empty(), "every idle core of the group has run out of affine nodes");
        self.pending.clear();
    }

    fn start(&mut self, v: NodeId, core: CoreId, now: u64) {
        debug_assert!(!self.busy[core] && !self.started[v]);
        self.busy[core] = true;
        self.idle_count[self.s.group_of_core[core] as usize] -= 1;
        self.started[v] = true;
        self.core_of[v] = OptId::some(core);
        self.position[v] = self.queue_len[core];
        self.queue_len[core] += 1;
        self.start_ns[v] = now;
        let own = now.saturating_add(self.s.costs[v.index()]);
        let rank = || self.s.exp.space.rank_of(v);
        let finish = match (&self.s.net, &self.s.hbm) {
            (Some(net), _) if net.times(v) => net.book(&mut self.booked, v, rank(), now),
            (_, Some(hbm)) => hbm.book(&mut self.hbm_booked, v, rank(), now, own),
            _ => own,
        };
        self.finish_ns[v] = finish;
        self.running.push(running_key(finish, v));
    }
}
