//! Critical-path list scheduling: which core runs each tile instance, and in which order.
//!
//! An event-driven simulation under the cost model. Simulated time jumps from event to event
//! (a node finishes and frees its core; a node becomes ready), and whenever a core is idle
//! while a node it could run is ready, the core starts the ready node with the highest
//! priority — largest bottom level (in the first pass; see forward-backward improvement below
//! for the others), then smallest rotation, then smallest node id. No core is
//! ever left idle while a node it could run is ready (the schedule is *greedy*, or
//! work-conserving, which is what the (types + 1) × lower-bound guarantee of list scheduling
//! needs), so an urgent node whose inputs arrive late never holds up ready work behind it.
//! (With a shared link, puts to other ranks run only on a rank's link lanes; see below.)
//! The rotation tie-break makes equally urgent puts of rank `r` go to `r+1, r+2, …` in turn,
//! so the ranks do not all write to the same peer at once.
//!
//! # Ready times
//! A node is ready on a core once every predecessor has finished, plus
//! `cost.edge_ns(cross_rank)` for each predecessor on *another* core. So it is ready on every
//! core of its (rank, kind) at `max(finish(u) + edge(u))` over its predecessors `u`; and if
//! all the predecessors reaching that maximum run on one core of the node's own (rank, kind),
//! the node is ready earlier on that core, where it may follow its producer without waiting
//! for a signal. Only the core of the latest predecessors can gain, so a node has at most one
//! such *affine* core.
//!
//! When several cores of a (rank, kind) are idle at once, the most urgent candidate goes
//! first: a node ready only on its affine core goes there; a node ready everywhere goes to an
//! idle core with no affine node waiting or, failing that, to the idle core whose best affine
//! node is the least urgent.
//!
//! # Link lanes
//! A put to another rank (a *link put*: an instance of a vector family with remote bytes and
//! a destination other than its own rank, `rotation != 0`) streams through its rank's link,
//! which all the rank's link puts share. When the cost model has such a link
//! ([`CostModel::link_bytes_per_s`]), each rank gets a few *lanes*: its last vector cores,
//! which run its link puts and nothing else, as many as it takes to fill the link with the
//! puts of the slowest-streaming family (`⌈link / stream⌉`, from [`CostModel::family_put`]),
//! but always leaving one vector core for other work. On a lane a put is charged its exec
//! part plus its bytes at `min(stream, link / lanes)`, its share when every lane streams.
//!
//! The lanes are what makes the table stream: a core runs its entries in order, so a rank
//! never has more link puts in flight than it has lanes, and blocks go out a few at a time in
//! priority order, each at a good fraction of the link, instead of every vector core starting
//! a put at once and all of them crawling to the end together. Consumers are then scheduled
//! for the times their blocks really land. Without a link in the model (the default), or
//! with fewer than two vector cores, there are no lanes and puts run on any vector core,
//! charged as if alone.
//!
//! The schedule stays greedy within each class of cores — AIC, lanes, other vector cores —
//! but a lane may idle while other vector work is ready, and a vector core while a link put
//! is.
//!
//! # Forward-backward improvement
//! Bottom levels see paths, not resources: when the cores of one class or a rank's link are
//! the bottleneck, the most urgent node by bottom level is often not the one to run first.
//! In a MoE layer every GMM1 outranks every GMM2, so the AICs run all the GMM1s first and the
//! combine puts, which need the GMM2s, are left for the end, where they queue on the link.
//! So the first pass is followed by rounds of *forward-backward improvement*, a standard
//! repair for resource-constrained schedules: a *backward* pass schedules the DAG reversed,
//! from the end, under the same cores, lanes and costs, taking first the nodes that finished
//! last in the previous forward pass; a node's finish time in it is then how long the work
//! from that node's start to the end takes, with resources counted, not only the path. The
//! next forward pass uses those as priorities. The backward pass interleaves what the link
//! or a core class paces (a GMM2 of each block soon after its combine), and the forward pass
//! keeps that order. Rounds stop at the first that does not shorten the estimated makespan
//! (at most [`IMPROVEMENT_ROUNDS`]); the shortest forward pass is the result, so the first
//! pass is only ever replaced by a better estimate. Every pass is greedy, so the list
//! scheduling guarantee holds whichever wins.
//!
//! # Deadlock freedom
//! A node starts only after every predecessor has finished, so each core's order is
//! consistent with the order of start times, a topological order of the DAG; the union of
//! DAG edges and per-core order edges is acyclic and the orders cannot deadlock (checked
//! independently by [`super::prove_deadlock_free`]).
//!
//! # Cost
//! At most `1 + 2 · IMPROVEMENT_ROUNDS` passes, each O((V + E) log V): a heap of running nodes by finish time and one of nodes about to become
//! ready; per (rank, class of core) a heap of ready nodes and a stack of idle cores; per core a heap of
//! the nodes affine to it. A node enters each heap at
//! most once and is skipped, when it reaches the top of a heap, if it has started elsewhere.
//! Ready times take one or two passes over each node's predecessors.

use super::cost::{CostModel, ns_at_rate};
use super::priority::{bottom_levels_with, node_costs};
use super::types::Placement;
use crate::expand::Expanded;
use crate::graph::Csr;
use crate::model::{CoreKind, MachineProfile};
use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap};

/// Priority of a ready node in a max-heap: bottom level descending, then rotation ascending,
/// then node id ascending.
type ReadyKey = (u64, Reverse<u32>, Reverse<u32>);

fn node_of(key: ReadyKey) -> u32 {
    key.2.0
}

/// No core.
const NO_CORE: u32 = u32::MAX;

/// Cores are grouped per rank into classes: AIC, vector cores for anything but link puts,
/// and link lanes (vector cores for link puts only).
const CLASSES: u32 = 3;
const LANE: u32 = 2;

fn kind_index(kind: CoreKind) -> u32 {
    match kind {
        CoreKind::Aic => 0,
        CoreKind::Aiv => 1,
    }
}

/// The link lanes of a placement: per rank, the last `count` vector cores, which run that
/// rank's *link puts* (instances of a vector family with remote bytes whose destination is
/// another rank, `rotation != 0`) and nothing else.
#[derive(Debug)]
struct Lanes {
    /// Lane cores per rank; 0 when the cost model has no shared link (or the taskflow no link
    /// puts, or the rank fewer than two vector cores): link puts then run on any vector core.
    count: u32,
    /// Per family: the time of one put on a lane, for vector families with remote bytes.
    put_ns: Vec<Option<u64>>,
}

impl Lanes {
    /// Enough lanes that puts of the slowest-streaming family fill the link, leaving at least
    /// one vector core for other work; each put charged its exec part plus its bytes at its
    /// share of the link when every lane streams (`link / count`), or its stream rate if lower.
    fn new(exp: &Expanded, profile: &MachineProfile, cost: &dyn CostModel) -> Lanes {
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
    fn carries(&self, exp: &Expanded, v: u32) -> bool {
        self.count > 0 && exp.rotation[v as usize] != 0 && self.put_ns[exp.space.family_of(v)].is_some()
    }
}

/// Places every node of `exp` on a core of `profile` and orders each core's nodes, by
/// critical-path list scheduling under `cost`, improved by forward-backward passes (see the
/// module documentation). Deterministic.
///
/// Start times model the cost function: a node starts when a core of its kind is free and
/// every predecessor has finished, plus `cost.edge_ns(cross_rank)` for a predecessor on
/// another core; and it does start then, unless that core runs a more urgent node. With a
/// shared link in `cost`, puts to other ranks run on each rank's link lanes and nowhere else,
/// charged their share of the link.
///
/// # Panics
/// If the DAG has a cycle, if `profile.ranks` differs from the taskflow's ranks, or if the
/// taskflow has a node of a kind the profile has no core of (all refused by earlier checks).
pub fn list_schedule(exp: &Expanded, profile: &MachineProfile, cost: &dyn CostModel) -> Placement {
    assert_eq!(profile.ranks, exp.space.ranks, "profile and taskflow disagree on the number of ranks");
    let setup = Setup::new(exp, profile, cost);
    let levels = bottom_levels_with(exp, &setup.costs, cost);
    let pass = setup.improve(setup.pass(Direction::Forward, levels), IMPROVEMENT_ROUNDS);
    let makespan_ns = pass.makespan_ns();
    let queues = queues_from_positions(&pass.core_of, &pass.position, &pass.queue_len);
    Placement {
        core_of: pass.core_of,
        position: pass.position,
        queues,
        start_ns: pass.start_ns,
        finish_ns: pass.finish_ns,
        makespan_ns,
    }
}

/// What every pass of the scheduler shares. Cores are grouped by (rank, class): group
/// `rank * CLASSES + class`.
struct Setup<'a> {
    exp: &'a Expanded,
    profile: &'a MachineProfile,
    /// Per node: its time on a core (a link put's on a lane).
    costs: Vec<u64>,
    edge_local: u64,
    edge_remote: u64,
    group_of_node: Vec<u32>,
    group_of_core: Vec<u32>,
}

/// At most this many rounds of forward-backward improvement (two passes each) follow the
/// first pass; they stop at the first round that does not shorten the estimated makespan.
const IMPROVEMENT_ROUNDS: usize = 3;

/// Which way a pass walks the DAG.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Direction {
    /// The instance DAG: a node waits for its predecessors.
    Forward,
    /// The DAG reversed: a node waits for its successors, so a pass schedules from the end.
    Backward,
}

/// The outcome of one pass: where and when every node ran.
struct Pass {
    core_of: Vec<u32>,
    position: Vec<u32>,
    queue_len: Vec<u32>,
    start_ns: Vec<u64>,
    finish_ns: Vec<u64>,
}

impl Pass {
    fn makespan_ns(&self) -> u64 {
        self.finish_ns.iter().copied().max().unwrap_or(0)
    }
}

impl<'a> Setup<'a> {
    fn new(exp: &'a Expanded, profile: &'a MachineProfile, cost: &dyn CostModel) -> Self {
        let nodes = exp.nodes();
        let lanes = Lanes::new(exp, profile, cost);
        let mut costs = node_costs(exp, cost);
        for v in 0..nodes as u32 {
            if lanes.carries(exp, v) {
                costs[v as usize] = lanes.put_ns[exp.space.family_of(v)].expect("a lane carries puts only");
            }
        }
        let group_of_node = (0..nodes as u32)
            .map(|v| {
                let class = if lanes.carries(exp, v) { LANE } else { kind_index(exp.core_kind(v)) };
                exp.space.rank_of(v) * CLASSES + class
            })
            .collect();
        let first_lane = profile.cores_per_rank() - lanes.count;
        let group_of_core = (0..profile.total_cores())
            .map(|c| {
                let (rank, local) = profile.split_core(c);
                let class = if local >= first_lane { LANE } else { kind_index(profile.kind_of_local(local)) };
                rank * CLASSES + class
            })
            .collect();
        Setup {
            exp,
            profile,
            costs,
            edge_local: cost.edge_ns(false),
            edge_remote: cost.edge_ns(true),
            group_of_node,
            group_of_core,
        }
    }

    /// Forward-backward improvement of the forward pass `first`: up to `rounds` times, a
    /// backward pass (the most urgent node being the one that finished last) and a forward
    /// pass by the backward finish times (the time from a node's start to the end, resources
    /// included); the shortest forward pass wins, the earlier one on a tie.
    fn improve(&self, first: Pass, rounds: usize) -> Pass {
        let mut best = first;
        for _ in 0..rounds {
            let back = self.pass(Direction::Backward, best.finish_ns.clone());
            let next = self.pass(Direction::Forward, back.finish_ns);
            if next.makespan_ns() >= best.makespan_ns() {
                break;
            }
            best = next;
        }
        best
    }

    /// One list-scheduling pass over the instance DAG or the DAG reversed, most urgent first
    /// by `levels`.
    fn pass(&self, direction: Direction, levels: Vec<u64>) -> Pass {
        let dag = &self.exp.dag;
        let (pred, succ) = match direction {
            Direction::Forward => (&dag.pred, &dag.succ),
            Direction::Backward => (&dag.succ, &dag.pred),
        };
        let mut sim = Sim::new(self, pred, succ, levels);
        sim.run();
        assert!(
            sim.started.iter().all(|&s| s),
            "the instance DAG is acyclic (checked before scheduling), so every node gets placed"
        );
        Pass {
            core_of: sim.core_of,
            position: sim.position,
            queue_len: sim.queue_len,
            start_ns: sim.start_ns,
            finish_ns: sim.finish_ns,
        }
    }
}

/// The state of one pass: an event-driven simulation.
struct Sim<'a> {
    s: &'a Setup<'a>,
    pred: &'a Csr,
    succ: &'a Csr,
    levels: Vec<u64>,

    // Per node.
    waiting_preds: Vec<u32>,
    started: Vec<bool>,
    core_of: Vec<u32>,
    position: Vec<u32>,
    start_ns: Vec<u64>,
    finish_ns: Vec<u64>,

    // Per core.
    queue_len: Vec<u32>,
    busy: Vec<bool>,
    /// The core has an entry in its group's idle stack (possibly outdated).
    in_stack: Vec<bool>,
    /// Idle, with affine nodes waiting: in `pending` while its group is dispatched.
    has_affine: Vec<bool>,
    /// Nodes ready on this core only (their affine core).
    affine: Vec<BinaryHeap<ReadyKey>>,
    dirty_core: Vec<bool>,

    // Per group.
    ready: Vec<BinaryHeap<ReadyKey>>,
    /// Idle cores without affine nodes, most recently freed on top; entries of cores that
    /// have since become busy or gained affine nodes are skipped.
    idle: Vec<Vec<u32>>,
    /// Idle cores, with or without affine nodes.
    idle_count: Vec<u32>,
    cores_in_group: Vec<u32>,
    /// Cores freed, or given an affine node, at the current time.
    dirty_cores: Vec<Vec<u32>>,
    dirty_group: Vec<bool>,
    dirty_groups: Vec<u32>,

    /// Running nodes by finish time: `(finish, node)`, at most one per core.
    running: BinaryHeap<Reverse<(u64, u32)>>,
    /// Nodes about to become ready: `(time, node, core)`, ready on `core` only, or on every
    /// core of their (rank, kind) when `core` is [`NO_CORE`].
    arrivals: BinaryHeap<Reverse<(u64, u32, u32)>>,
    /// While a group is dispatched: its idle cores with affine nodes, keyed by their most
    /// urgent one.
    pending: BTreeSet<(ReadyKey, u32)>,
}

impl<'a> Sim<'a> {
    fn new(s: &'a Setup<'a>, pred: &'a Csr, succ: &'a Csr, levels: Vec<u64>) -> Self {
        let nodes = s.exp.nodes();
        let groups = (CLASSES * s.profile.ranks) as usize;
        let total_cores = s.profile.total_cores() as usize;
        // Every core starts idle; the lowest id is on top of its group's stack.
        let mut idle = vec![Vec::new(); groups];
        for c in (0..total_cores as u32).rev() {
            idle[s.group_of_core[c as usize] as usize].push(c);
        }
        let cores_in_group: Vec<u32> = idle.iter().map(|s| s.len() as u32).collect();

        let waiting_preds: Vec<u32> = (0..nodes as u32).map(|v| pred.degree(v) as u32).collect();
        let sources: Vec<_> =
            (0..nodes as u32).filter(|&v| waiting_preds[v as usize] == 0).map(|v| Reverse((0, v, NO_CORE))).collect();

        Sim {
            s,
            pred,
            succ,
            levels,
            waiting_preds,
            started: vec![false; nodes],
            core_of: vec![NO_CORE; nodes],
            position: vec![0; nodes],
            start_ns: vec![0; nodes],
            finish_ns: vec![0; nodes],
            queue_len: vec![0; total_cores],
            busy: vec![false; total_cores],
            in_stack: vec![true; total_cores],
            has_affine: vec![false; total_cores],
            affine: vec![BinaryHeap::new(); total_cores],
            dirty_core: vec![false; total_cores],
            ready: vec![BinaryHeap::new(); groups],
            idle,
            idle_count: cores_in_group.clone(),
            cores_in_group,
            dirty_cores: vec![Vec::new(); groups],
            dirty_group: vec![false; groups],
            dirty_groups: Vec::new(),
            running: BinaryHeap::new(),
            arrivals: BinaryHeap::from(sources),
            pending: BTreeSet::new(),
        }
    }

    fn key(&self, v: u32) -> ReadyKey {
        (self.levels[v as usize], Reverse(self.s.exp.rotation[v as usize]), Reverse(v))
    }

    /// Advances time from event to event (a node finishes, a node becomes ready); after all
    /// events of one time, starts work on every (rank, kind) where something changed.
    /// Starting a zero-cost node adds an event at the same time, which the next round handles.
    fn run(&mut self) {
        loop {
            let next_finish = self.running.peek().map(|e| e.0.0);
            let next_arrival = self.arrivals.peek().map(|e| e.0.0);
            let Some(now) = next_finish.into_iter().chain(next_arrival).min() else { break };
            while let Some(&Reverse((t, v))) = self.running.peek()
                && t == now
            {
                self.running.pop();
                self.finish(v, now);
            }
            while let Some(&Reverse((t, v, core))) = self.arrivals.peek()
                && t == now
            {
                self.arrivals.pop();
                if !self.started[v as usize] {
                    self.arrive(v, core);
                }
            }
            while let Some(g) = self.dirty_groups.pop() {
                self.dirty_group[g as usize] = false;
                self.dispatch(g, now);
            }
        }
    }

    /// `v` becomes ready on `core` only or, for [`NO_CORE`], on every core of its group.
    fn arrive(&mut self, v: u32, core: u32) {
        let key = self.key(v);
        if core != NO_CORE {
            self.affine[core as usize].push(key);
            self.mark_core(core);
            return;
        }
        let g = self.s.group_of_node[v as usize];
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

    fn mark_core(&mut self, core: u32) {
        if !std::mem::replace(&mut self.dirty_core[core as usize], true) {
            let g = self.s.group_of_core[core as usize];
            self.dirty_cores[g as usize].push(core);
            self.mark_group(g);
        }
    }

    /// `v` finished at `now`: its core is free, and successors whose last predecessor it was
    /// get their ready times.
    fn finish(&mut self, v: u32, now: u64) {
        let core = self.core_of[v as usize];
        let g = self.s.group_of_core[core as usize];
        self.busy[core as usize] = false;
        self.idle_count[g as usize] += 1;
        self.push_idle(core);
        self.mark_core(core);
        let succ = self.succ;
        for &s in succ.row(v) {
            let w = &mut self.waiting_preds[s as usize];
            *w -= 1;
            if *w == 0 {
                self.schedule_ready(s, now);
            }
        }
    }

    /// Adds the events at which `v`, whose predecessors have all finished by `now`, becomes
    /// ready on its affine core (if any) and on every core.
    fn schedule_ready(&mut self, v: u32, now: u64) {
        let (space, pred) = (&self.s.exp.space, self.pred);
        let rank = space.rank_of(v);
        let arrival = |u: u32| {
            let edge = if space.rank_of(u) == rank { self.s.edge_local } else { self.s.edge_remote };
            self.finish_ns[u as usize].saturating_add(edge)
        };
        let (mut everywhere, mut late_core, mut one_core) = (0u64, NO_CORE, true);
        for &u in pred.row(v) {
            let (t, core) = (arrival(u), self.core_of[u as usize]);
            if late_core == NO_CORE || t > everywhere {
                (everywhere, late_core, one_core) = (t, core, true);
            } else if t == everywhere && core != late_core {
                one_core = false;
            }
        }
        debug_assert!(everywhere >= now);
        let g = self.s.group_of_node[v as usize];
        if late_core != NO_CORE && one_core && self.s.group_of_core[late_core as usize] == g {
            let on_core = pred
                .row(v)
                .iter()
                .map(|&u| if self.core_of[u as usize] == late_core { self.finish_ns[u as usize] } else { arrival(u) });
            let on_core = on_core.max().unwrap_or(now);
            if on_core < everywhere {
                self.arrivals.push(Reverse((on_core, v, late_core)));
            }
        }
        self.arrivals.push(Reverse((everywhere, v, NO_CORE)));
    }

    /// Puts an idle core without affine nodes on its group's idle stack (once).
    fn push_idle(&mut self, core: u32) {
        if !std::mem::replace(&mut self.in_stack[core as usize], true) {
            self.idle[self.s.group_of_core[core as usize] as usize].push(core);
        }
    }

    /// Pops an idle core without affine nodes from group `g`'s stack.
    fn pop_plain_idle(&mut self, g: u32) -> Option<u32> {
        while let Some(core) = self.idle[g as usize].pop() {
            let c = core as usize;
            self.in_stack[c] = false;
            if !self.busy[c] && !self.has_affine[c] {
                return Some(core);
            }
        }
        None
    }

    /// The most urgent node of `heap` that has not started, dropping started ones on top.
    fn top_unstarted(heap: &mut BinaryHeap<ReadyKey>, started: &[bool]) -> Option<ReadyKey> {
        while let Some(&key) = heap.peek() {
            if !started[node_of(key) as usize] {
                return Some(key);
            }
            heap.pop();
        }
        None
    }

    /// Files idle `core` under its most urgent affine node in `pending`, or back on the idle
    /// stack if it has none left.
    fn file_idle_core(&mut self, core: u32) {
        let c = core as usize;
        match Self::top_unstarted(&mut self.affine[c], &self.started) {
            Some(key) => {
                self.has_affine[c] = true;
                self.pending.insert((key, core));
            }
            None => {
                self.has_affine[c] = false;
                self.push_idle(core);
            }
        }
    }

    /// Starts ready nodes of group `g` on its idle cores at `now`, most urgent first, until
    /// no core is idle or no node is ready.
    fn dispatch(&mut self, g: u32, now: u64) {
        debug_assert!(self.pending.is_empty());
        for core in std::mem::take(&mut self.dirty_cores[g as usize]) {
            self.dirty_core[core as usize] = false;
            if !self.busy[core as usize] {
                self.file_idle_core(core);
            }
        }
        while self.idle_count[g as usize] > 0 {
            let best_affine = loop {
                match self.pending.last() {
                    Some(&(key, core)) if self.started[node_of(key) as usize] => {
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
                    self.affine[core as usize].pop();
                    self.has_affine[core as usize] = false;
                    self.start(node_of(key), core, now);
                }
                (_, Some(key)) => {
                    self.ready[g as usize].pop();
                    let core = self.pop_plain_idle(g).unwrap_or_else(|| {
                        let (_, core) = self.pending.pop_first().expect("an idle core without affine nodes is stacked");
                        self.has_affine[core as usize] = false;
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

    fn start(&mut self, v: u32, core: u32, now: u64) {
        let (vi, c) = (v as usize, core as usize);
        debug_assert!(!self.busy[c] && !self.started[vi]);
        self.busy[c] = true;
        self.idle_count[self.s.group_of_core[c] as usize] -= 1;
        self.started[vi] = true;
        self.core_of[vi] = core;
        self.position[vi] = self.queue_len[c];
        self.queue_len[c] += 1;
        self.start_ns[vi] = now;
        let finish = now.saturating_add(self.s.costs[vi]);
        self.finish_ns[vi] = finish;
        self.running.push(Reverse((finish, v)));
    }
}

/// Builds the per-core queues (one row per core) from each node's core and position. O(V).
fn queues_from_positions(core_of: &[u32], position: &[u32], queue_len: &[u32]) -> Csr {
    let mut offsets = Vec::with_capacity(queue_len.len() + 1);
    let mut total = 0usize;
    offsets.push(0usize);
    for &len in queue_len {
        total += len as usize;
        offsets.push(total);
    }
    let mut flat = vec![0u32; total];
    for (v, (&core, &pos)) in core_of.iter().zip(position).enumerate() {
        flat[offsets[core as usize] + pos as usize] = v as u32;
    }
    Csr::from_rows((0..queue_len.len()).map(|c| flat[offsets[c]..offsets[c + 1]].iter().copied()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expand::Work;
    use crate::schedule::cost::{PutShape, SimpleCost, UnitCost};
    use crate::schedule::testutil::{expanded, profile, random_expanded};
    use proptest::prelude::*;

    const AIC: CoreKind = CoreKind::Aic;
    const AIV: CoreKind = CoreKind::Aiv;
    const W: Work = Work { flops: 0, bytes: 0, remote_bytes: 0 };

    fn rows(q: &Csr) -> Vec<Vec<u32>> {
        (0..q.nodes() as u32).map(|c| q.row(c).to_vec()).collect()
    }

    /// Every tile 10 ns, edges 3 ns on a rank and 7 ns across ranks.
    struct TenAndEdges;
    impl CostModel for TenAndEdges {
        fn tile_ns(&self, _: CoreKind, _: &Work) -> u64 {
            10
        }
        fn edge_ns(&self, cross_rank: bool) -> u64 {
            if cross_rank { 7 } else { 3 }
        }
    }

    #[test]
    fn fork_runs_on_both_vector_cores_after_the_matmul() {
        // One rank: core 0 = AIC, cores 1 and 2 = AIV. Node 0 (AIC) feeds nodes 1 and 2 (AIV).
        let exp = expanded(1, &[(AIC, 1, W), (AIV, 2, W)], &[(0, 1), (0, 2)]);
        let p = list_schedule(&exp, &profile(1, 2, 1), &UnitCost);
        assert_eq!(p.core_of, vec![0, 1, 2]);
        assert_eq!(p.position, vec![0, 0, 0]);
        assert_eq!(p.start_ns, vec![0, 1, 1]);
        assert_eq!(p.finish_ns, vec![1, 2, 2]);
        assert_eq!(p.makespan_ns, 2);
        assert_eq!(rows(&p.queues), vec![vec![0], vec![1], vec![2]]);
    }

    #[test]
    fn critical_path_goes_first_and_ties_fall_to_the_lower_id() {
        // One AIC core. Node 0 stands alone (level 1); chain 1 → 2 → 3 (levels 3, 2, 1).
        // Order: 1 (3), 2 (2), then 0 and 3 tie at level 1 and the lower id wins.
        let exp = expanded(1, &[(AIC, 4, W)], &[(1, 2), (2, 3)]);
        let p = list_schedule(&exp, &profile(1, 0, 1), &UnitCost);
        assert_eq!(rows(&p.queues), vec![vec![1, 2, 0, 3]]);
        assert_eq!(p.start_ns, vec![2, 0, 1, 3]);
        assert_eq!(p.finish_ns, vec![3, 1, 2, 4]);
        assert_eq!(p.position, vec![2, 0, 1, 3]);
        assert_eq!(p.makespan_ns, 4);
    }

    /// Every tile costs its flops; edges `local` ns on a rank and `remote` ns across ranks.
    #[derive(Debug)]
    struct FlopsCost {
        local: u64,
        remote: u64,
    }
    impl CostModel for FlopsCost {
        fn tile_ns(&self, _: CoreKind, work: &Work) -> u64 {
            work.flops
        }
        fn edge_ns(&self, cross_rank: bool) -> u64 {
            if cross_rank { self.remote } else { self.local }
        }
    }

    const fn flops(flops: u64) -> Work {
        Work { flops, bytes: 0, remote_bytes: 0 }
    }

    #[test]
    fn a_node_waiting_for_its_inputs_does_not_hold_up_ready_work() {
        // One AIC core (0), one AIV core (1). AIC 0 → AIV 2, AIC 1 → AIV 2, AIV 3 alone.
        // Levels: 0, 1: 10 + 3 + 10 = 23; 2, 3: 10. AIC runs 0 [0,10], then 1 [10,20].
        // AIV: 2 is ready only at 20 + 3 = 23, and 3 is ready at 0, so 3 runs [0,10] and 2
        // [23,33]. (Appending in priority order instead would run 2 first, at 23, and 3
        // behind it at 33.)
        let exp = expanded(1, &[(AIC, 2, W), (AIV, 2, W)], &[(0, 2), (1, 2)]);
        let p = list_schedule(&exp, &profile(1, 1, 1), &TenAndEdges);
        assert_eq!(p.core_of, vec![0, 0, 1, 1]);
        assert_eq!(p.start_ns, vec![0, 10, 23, 0]);
        assert_eq!(p.finish_ns, vec![10, 20, 33, 10]);
        assert_eq!(rows(&p.queues), vec![vec![0, 1], vec![3, 2]]);
        assert_eq!(p.makespan_ns, 33);
    }

    #[test]
    fn less_urgent_work_fills_the_gap_before_an_urgent_node_is_ready() {
        // One AIC core (0), one AIV core (1); tiles cost their flops, edges 3 ns.
        // Nodes: AIC a = 0 (10), AIC b = 1 (10), AIV x = 2 (10), AIV y = 3 (5).
        // a → x → b is the critical path (levels 36, 23, 10); y (level 5) stands alone.
        // x's input arrives at 10 + 3 = 13: the vector core runs y in the gap, [0,5], and x
        // still starts at 13. b waits for x: 23 + 3 = 26.
        let exp = expanded(1, &[(AIC, 2, flops(10)), (AIV, 1, flops(10)), (AIV, 1, flops(5))], &[(0, 2), (2, 1)]);
        let p = list_schedule(&exp, &profile(1, 1, 1), &FlopsCost { local: 3, remote: 7 });
        assert_eq!(rows(&p.queues), vec![vec![0, 1], vec![3, 2]]);
        assert_eq!(p.start_ns, vec![0, 26, 13, 0]);
        assert_eq!(p.finish_ns, vec![10, 36, 23, 5]);
        assert_eq!(p.makespan_ns, 36);
    }

    #[test]
    fn a_successor_follows_its_producer_on_the_same_core_and_others_take_free_cores() {
        // One AIC core (0), two AIV cores (1, 2); tiles cost their flops, edges 3 ns.
        // Nodes: AIC p = 0 (7), AIC q = 1 (10), AIV x = 2, a = 3, b = 4 (10 each).
        // p → x → q (levels 33, 23, 10) and a → b (levels 23, 10).
        // At 0: p runs [0,7] on the AIC, a [0,10] on core 1; core 2 has nothing ready.
        // At 10: x is ready everywhere (7 + 3), and b is ready on core 1 only, right after a
        // (on core 2 it would be ready at 13). The more urgent x takes the free core 2, not
        // core 1, so b also starts at 10, on core 1. q: 20 + 3 = 23.
        let exp =
            expanded(1, &[(AIC, 1, flops(7)), (AIC, 1, flops(10)), (AIV, 3, flops(10))], &[(0, 2), (2, 1), (3, 4)]);
        let p = list_schedule(&exp, &profile(1, 2, 1), &FlopsCost { local: 3, remote: 7 });
        assert_eq!(rows(&p.queues), vec![vec![0, 1], vec![3, 4], vec![2]]);
        assert_eq!(p.start_ns, vec![0, 23, 10, 0, 10]);
        assert_eq!(p.finish_ns, vec![7, 33, 20, 10, 20]);
        assert_eq!(p.makespan_ns, 33);
    }

    #[test]
    fn with_no_free_core_an_urgent_node_displaces_the_least_urgent_affine_node() {
        // One AIC core (0), two AIV cores (1, 2); tiles cost their flops, edges 3 ns.
        // AIC p = 0 (7), q = 1 (10), r = 2 (20); AIV x = 3, a1 = 4, a2 = 5, b1 = 6, b2 = 7 (10).
        // p → x → r, a1 → b1 → q, a2 → b2. Levels: x 33, b1 23, b2 10.
        // At 0: p [0,7]; a1 on core 1 and a2 on core 2, [0,10].
        // At 10 both vector cores free up. x is ready everywhere (7 + 3); b1 is ready on core
        // 1 only and b2 on core 2 only (elsewhere at 13). x is the most urgent and there is no
        // free core without an affine node, so it takes core 2 from the least urgent b2; b1
        // starts on core 1. At 20 core 2 is free again and b2 still follows a2 there.
        // AIC: r and q are both ready at 20 + 3 = 23; r is more urgent: r [23,43], q [43,53].
        let exp = expanded(
            1,
            &[(AIC, 1, flops(7)), (AIC, 1, flops(10)), (AIC, 1, flops(20)), (AIV, 5, flops(10))],
            &[(0, 3), (3, 2), (4, 6), (6, 1), (5, 7)],
        );
        let p = list_schedule(&exp, &profile(1, 2, 1), &FlopsCost { local: 3, remote: 7 });
        assert_eq!(rows(&p.queues), vec![vec![0, 2, 1], vec![4, 6], vec![5, 3, 7]]);
        assert_eq!(p.start_ns, vec![0, 43, 23, 10, 0, 0, 10, 20]);
        assert_eq!(p.finish_ns, vec![7, 53, 43, 20, 10, 10, 20, 30]);
        assert_eq!(p.makespan_ns, 53);
    }

    #[test]
    fn same_core_predecessor_costs_no_edge_and_cross_rank_costs_more() {
        // Two ranks, one AIV core each (global cores 1 and 3). Per rank: AIV 0 → AIV 1.
        // Rank 0's node 0 also feeds rank 1's node 3 (a put and its remote reader).
        let exp = expanded(2, &[(AIV, 2, W)], &[(0, 1), (2, 3), (0, 3)]);
        let p = list_schedule(&exp, &profile(1, 1, 2), &TenAndEdges);
        assert_eq!(p.core_of, vec![1, 1, 3, 3]);
        // Node 1 follows node 0 on its own core: no edge cost.
        assert_eq!((p.start_ns[1], p.finish_ns[1]), (10, 20));
        // Node 3 waits for node 2 (same core, 10) and node 0 (other rank, 10 + 7).
        assert_eq!((p.start_ns[3], p.finish_ns[3]), (17, 27));
        assert_eq!(p.makespan_ns, 27);
    }

    #[test]
    fn equally_urgent_puts_go_out_in_rank_rotated_order() {
        // Four ranks, one AIV core each. On every rank, put k writes to rank k, so its
        // rotation is (k - rank) mod 4. All puts are equally urgent: the core sends them in
        // rotation order, so rank r writes to r, r+1, r+2, r+3 and in every time slot the
        // four ranks write to four different peers.
        let ranks = 4;
        let mut exp = expanded(ranks, &[(AIV, 4, W)], &[]);
        for v in 0..16u32 {
            let (rank, k) = (v / 4, v % 4);
            exp.rotation[v as usize] = (k + ranks - rank) % ranks;
        }
        let prof = profile(1, 1, ranks);
        let p = list_schedule(&exp, &prof, &UnitCost);
        for rank in 0..ranks {
            let aiv = rank * prof.cores_per_rank() + 1;
            let dsts: Vec<u32> = p.queues.row(aiv).iter().map(|&v| v % 4).collect();
            let expected: Vec<u32> = (0..4).map(|i| (rank + i) % 4).collect();
            assert_eq!(dsts, expected, "rank {rank}");
        }
        for slot in 0..4u64 {
            let mut dsts: Vec<u32> = (0..16u32).filter(|&v| p.start_ns[v as usize] == slot).map(|v| v % 4).collect();
            dsts.sort_unstable();
            assert_eq!(dsts, vec![0, 1, 2, 3], "slot {slot}");
        }
    }

    #[test]
    fn forward_backward_passes_interleave_stages_that_critical_path_runs_one_after_another() {
        // One AIC core, one AIV core, edges free. Three jobs j: AIC a_j (10) → AIC b_j (5) →
        // AIV p_j (10); a_j = j, b_j = 3 + j, p_j = 6 + j.
        let pairs: Vec<(u32, u32)> = (0..3).flat_map(|j| [(j, 3 + j), (3 + j, 6 + j)]).collect();
        let exp = expanded(1, &[(AIC, 3, flops(10)), (AIC, 3, flops(5)), (AIV, 3, flops(10))], &pairs);
        let prof = profile(1, 1, 1);
        let cost = FlopsCost { local: 0, remote: 0 };
        // By bottom level (a 25, b 15, p 10) the AIC runs every a before any b, so the vector
        // core starts at 35 and ends at 65.
        let setup = Setup::new(&exp, &prof, &cost);
        let first = setup.pass(Direction::Forward, bottom_levels_with(&exp, &setup.costs, &cost));
        assert_eq!(first.start_ns, vec![0, 10, 20, 30, 35, 40, 35, 45, 55]);
        // The backward pass, latest-finishing first, runs p2, p1, p0 on the vector core from
        // the end ([0,10], [10,20], [20,30]) and b2 [10,15], a2 [15,25], b1 [25,30], b0
        // [30,35], a1 [35,45], a0 [45,55] on the AIC. By those finish times (a0 55, a1 45,
        // b0 35, b1 30, a2 25, b2 15) the forward pass interleaves: a0, a1, b0, b1, a2, b2,
        // and the vector core runs p0 [25,35], p1 [35,45], p2 [45,55]: 55, AIC work + one p.
        let p = list_schedule(&exp, &prof, &cost);
        assert_eq!(rows(&p.queues), vec![vec![0, 1, 3, 4, 2, 5], vec![6, 7, 8]]);
        assert_eq!(p.start_ns, vec![0, 10, 30, 20, 25, 40, 25, 35, 45]);
        assert_eq!(p.makespan_ns, 55);
        assert_valid(&exp, &prof, &p, &cost);
        assert_work_conserving(&exp, &prof, &p, &cost);
    }

    /// Tiles cost their flops, edges `edge` ns. A shared link of `link` B/ns; a put runs its
    /// flops, then streams its remote bytes at up to `stream` B/ns (alone: at the lower of the
    /// two rates).
    #[derive(Debug)]
    struct LinkCost {
        link: u64,
        stream: u64,
        edge: u64,
    }
    impl CostModel for LinkCost {
        fn tile_ns(&self, _: CoreKind, work: &Work) -> u64 {
            work.flops + work.remote_bytes.div_ceil(self.stream.min(self.link))
        }
        fn edge_ns(&self, _: bool) -> u64 {
            self.edge
        }
        fn link_bytes_per_s(&self) -> Option<u64> {
            Some(self.link * 1_000_000_000)
        }
        fn family_put(&self, _: usize, _: CoreKind, work: &Work) -> PutShape {
            PutShape { exec_ns: work.flops, bytes: work.remote_bytes, stream_bytes_per_s: self.stream * 1_000_000_000 }
        }
    }

    /// [`LinkCost`] without the link: puts are charged as if alone and run anywhere.
    struct NoLink(LinkCost);
    impl CostModel for NoLink {
        fn tile_ns(&self, core: CoreKind, work: &Work) -> u64 {
            self.0.tile_ns(core, work)
        }
        fn edge_ns(&self, cross_rank: bool) -> u64 {
            self.0.edge_ns(cross_rank)
        }
    }

    /// Two ranks of one AIC (local core 0) and four vector cores (1..=4). Per rank: four puts
    /// (2 flops, 60 remote bytes; put 0 to its own rank, puts 1–3 to the other), then three
    /// vector tiles of 10 flops. Rank 0 is nodes 0..7, rank 1 nodes 7..14.
    fn puts_and_vector_work() -> Expanded {
        let mut exp = expanded(2, &[(AIV, 4, Work { flops: 2, bytes: 0, remote_bytes: 60 }), (AIV, 3, flops(10))], &[]);
        for v in [1, 2, 3, 8, 9, 10] {
            exp.rotation[v] = 1;
        }
        exp
    }

    #[test]
    fn with_a_shared_link_a_rank_streams_its_puts_on_a_few_dedicated_vector_cores() {
        // Link 6 B/ns, a put streams at most 4 B/ns: two puts fill the link, so the last two
        // vector cores (3, 4) are lanes. On a lane a put gets min(4, 6 / 2) = 3 B/ns: 2 + 20 = 22.
        // The local put 0 leaves the link alone: 2 + 60 / 4 = 17, on a core that is not a lane.
        // Lanes: puts 1 and 2 at [0, 22], put 3 [22, 44] on the lane freed last (core 4).
        // Cores 1, 2 run put 0 [0, 17] and the vector tiles 4 [0, 10], 5 [10, 20], 6 [17, 27]
        // while lane cores would be free at 22: nothing but puts runs on a lane.
        let exp = puts_and_vector_work();
        let prof = profile(1, 4, 2);
        let cost = LinkCost { link: 6, stream: 4, edge: 0 };
        let p = list_schedule(&exp, &prof, &cost);
        let shift = |row: &[u32], by: u32| row.iter().map(|v| v + by).collect::<Vec<_>>();
        let rank0: Vec<Vec<u32>> = vec![vec![], vec![0, 6], vec![4, 5], vec![1], vec![2, 3]];
        let expected: Vec<Vec<u32>> = rank0.iter().cloned().chain(rank0.iter().map(|r| shift(r, 7))).collect();
        assert_eq!(rows(&p.queues), expected);
        assert_eq!(&p.start_ns[..7], &[0, 0, 0, 22, 0, 10, 17]);
        assert_eq!(&p.finish_ns[..7], &[17, 22, 22, 44, 10, 20, 27]);
        assert_eq!(p.makespan_ns, 44);
        assert_valid(&exp, &prof, &p, &cost);
        assert_work_conserving(&exp, &prof, &p, &cost);

        // Without the link, every put is charged alone (2 + 60 / 4 = 17) and all four go at once;
        // the vector tiles follow at 17 on the cores freed last first.
        let p = list_schedule(&exp, &prof, &NoLink(cost));
        assert_eq!(&rows(&p.queues)[..5], &[vec![], vec![0], vec![1, 6], vec![2, 5], vec![3, 4]]);
        assert_eq!(p.makespan_ns, 27);
    }

    #[test]
    fn lanes_leave_a_vector_core_for_other_work_and_need_two() {
        let exp = puts_and_vector_work();
        // A link 100 times a put's stream would want 100 lanes; two vector cores give one lane
        // (local core 2) and one core for everything else. On the lane: 2 + 60 / 1 = 62 each.
        let cost = LinkCost { link: 100, stream: 1, edge: 0 };
        let p = list_schedule(&exp, &profile(1, 2, 2), &cost);
        assert_eq!(&rows(&p.queues)[..3], &[vec![], vec![0, 4, 5, 6], vec![1, 2, 3]]);
        assert_eq!(p.finish_ns[3], 3 * 62);
        assert_valid(&exp, &profile(1, 2, 2), &p, &cost);
        // With a single vector core there is no lane: everything runs there, puts charged alone.
        let p = list_schedule(&exp, &profile(1, 1, 2), &cost);
        assert_eq!(p.queues.row(1), &[0, 1, 2, 3, 4, 5, 6]);
        assert_eq!(p.makespan_ns, 4 * 62 + 30);
        // One rank: every put is local, so there is no lane either.
        let one = expanded(1, &[(AIV, 4, Work { flops: 2, bytes: 0, remote_bytes: 60 })], &[]);
        let p = list_schedule(&one, &profile(1, 2, 1), &cost);
        assert_eq!(rows(&p.queues), vec![vec![], vec![0, 3], vec![1, 2]]);
    }

    /// Checks everything a placement promises, for any DAG.
    fn assert_valid(exp: &Expanded, prof: &MachineProfile, p: &Placement, cost: &dyn CostModel) {
        let lanes = expected_lanes(exp, prof, cost);
        let n = exp.nodes();
        assert_eq!(p.queues.nodes(), prof.total_cores() as usize);
        assert_eq!(p.queues.edges(), n);
        let mut seen = vec![false; n];
        for core in 0..prof.total_cores() {
            let (rank, local) = prof.split_core(core);
            let row = p.queues.row(core);
            for (i, &v) in row.iter().enumerate() {
                assert!(!seen[v as usize], "node {v} queued twice");
                seen[v as usize] = true;
                assert_eq!(p.core_of[v as usize], core);
                assert_eq!(p.position[v as usize] as usize, i);
                assert_eq!(exp.space.rank_of(v), rank, "node {v} runs on its own rank");
                assert_eq!(prof.kind_of_local(local), exp.core_kind(v), "node {v} runs on its kind");
                assert_eq!(
                    on_lane(prof, lanes, core),
                    is_link_put(exp, lanes, v),
                    "node {v}: link puts, and only they, run on the {lanes} lanes"
                );
                if i > 0 {
                    assert!(p.start_ns[v as usize] >= p.finish_ns[row[i - 1] as usize], "core {core} overlaps");
                }
            }
        }
        for (v, c) in expected_ns(exp, cost, lanes).into_iter().enumerate() {
            assert_eq!(p.finish_ns[v], p.start_ns[v] + c, "node {v} runs for its cost");
        }
        for (u, v) in exp.dag.succ.pairs() {
            let (ui, vi) = (u as usize, v as usize);
            let mut ready = p.finish_ns[ui];
            if p.core_of[ui] != p.core_of[vi] {
                ready += cost.edge_ns(exp.space.rank_of(u) != exp.space.rank_of(v));
            } else {
                assert!(p.position[ui] < p.position[vi], "{u} before {v} on their core");
            }
            assert!(p.start_ns[vi] >= ready, "edge {u} → {v}: start {} < {ready}", p.start_ns[vi]);
        }
        assert_eq!(p.makespan_ns, p.finish_ns.iter().copied().max().unwrap_or(0));
    }

    /// Lanes per rank by the rule the module documents: with a shared link and link puts, enough
    /// to fill the link with the slowest-streaming put family, at most one fewer than the
    /// vector cores; otherwise none.
    fn expected_lanes(exp: &Expanded, prof: &MachineProfile, cost: &dyn CostModel) -> u32 {
        let Some(link) = cost.link_bytes_per_s().filter(|&l| l > 0) else { return 0 };
        let puts: Vec<usize> = (0..exp.family_core.len())
            .filter(|&f| exp.family_core[f] == AIV && exp.family_work[f].remote_bytes > 0)
            .collect();
        let used =
            (0..exp.nodes() as u32).any(|v| exp.rotation[v as usize] != 0 && puts.contains(&exp.space.family_of(v)));
        if prof.aiv_per_rank() < 2 || !used {
            return 0;
        }
        let stream = |f: usize| cost.family_put(f, AIV, &exp.family_work[f]).stream_bytes_per_s.clamp(1, link);
        let need = puts.iter().map(|&f| link.div_ceil(stream(f))).max().expect("some put family is used");
        need.min(u64::from(prof.aiv_per_rank() - 1)) as u32
    }

    fn is_link_put(exp: &Expanded, lanes: u32, v: u32) -> bool {
        lanes > 0 && exp.rotation[v as usize] != 0 && exp.core_kind(v) == AIV && exp.work(v).remote_bytes > 0
    }

    fn on_lane(prof: &MachineProfile, lanes: u32, core: u32) -> bool {
        prof.split_core(core).1 >= prof.cores_per_rank() - lanes
    }

    /// Per node: its cost, or for a link put its exec part plus its bytes at its stream rate
    /// or the link's bandwidth over the lanes, whichever is lower.
    fn expected_ns(exp: &Expanded, cost: &dyn CostModel, lanes: u32) -> Vec<u64> {
        let mut costs = node_costs(exp, cost);
        for v in (0..exp.nodes() as u32).filter(|&v| is_link_put(exp, lanes, v)) {
            let f = exp.space.family_of(v);
            let put = cost.family_put(f, AIV, &exp.family_work[f]);
            let rate = put.stream_bytes_per_s.min(cost.link_bytes_per_s().unwrap() / u64::from(lanes));
            costs[v as usize] = put.exec_ns + ns_at_rate(put.bytes, rate);
        }
        costs
    }

    /// When `v` may start on `core` under `cost`: every predecessor has finished, plus the
    /// edge cost for those on other cores.
    fn ready_on(exp: &Expanded, p: &Placement, cost: &dyn CostModel, v: u32, core: u32) -> u64 {
        let arrival = |u: u32| {
            let finish = p.finish_ns[u as usize];
            if p.core_of[u as usize] == core {
                finish
            } else {
                finish + cost.edge_ns(exp.space.rank_of(u) != exp.space.rank_of(v))
            }
        };
        exp.dag.pred.row(v).iter().map(|&u| arrival(u)).max().unwrap_or(0)
    }

    /// No core idles while a node it could run is ready: for every node `v` and every core
    /// `c` of its rank and kind that may run it (a lane for a link put, a vector core that is
    /// not a lane for any other vector node), `c` runs something at every moment from when `v`
    /// is ready on `c` until `v` starts.
    fn assert_work_conserving(exp: &Expanded, prof: &MachineProfile, p: &Placement, cost: &dyn CostModel) {
        let lanes = expected_lanes(exp, prof, cost);
        for v in 0..exp.nodes() as u32 {
            let rank = exp.space.rank_of(v);
            let start = p.start_ns[v as usize];
            let cores = prof.cores_of(exp.core_kind(v));
            let link_put = is_link_put(exp, lanes, v);
            for local in cores.filter(|&l| on_lane(prof, lanes, rank * prof.cores_per_rank() + l) == link_put) {
                let core = rank * prof.cores_per_rank() + local;
                let ready = ready_on(exp, p, cost, v, core);
                // The end of the busy stretch of `core` that began at or before `ready`.
                let mut busy_until = ready;
                for &w in p.queues.row(core) {
                    let (s, f) = (p.start_ns[w as usize], p.finish_ns[w as usize]);
                    if busy_until >= start {
                        break;
                    }
                    if f > busy_until {
                        assert!(
                            s <= busy_until,
                            "core {core} idles over [{busy_until}, {s}) while node {v}, ready there at {ready}, waits until {start}"
                        );
                        busy_until = f;
                    }
                }
                assert!(
                    busy_until >= start,
                    "core {core} idles from {busy_until} while node {v}, ready there at {ready}, waits until {start}"
                );
            }
        }
    }

    proptest! {
        #[test]
        fn no_core_idles_while_a_node_it_could_run_is_ready(
            ranks in 1u32..=3,
            families in prop::collection::vec((any::<bool>(), 1u32..=5, 0u64..=20), 1..=6),
            raw_edges in prop::collection::vec((any::<u32>(), any::<u32>(), 0u32..3, 0u32..3), 0..=60),
            cores in (1u32..=3, 1u32..=2),
            edge_ns in (0u64..=5, 0u64..=9),
            rotate in any::<bool>(),
        ) {
            let fams: Vec<(CoreKind, u32, Work)> =
                families.iter().map(|&(aic, count, f)| (if aic { AIC } else { AIV }, count, flops(f))).collect();
            let per_rank: u32 = fams.iter().map(|f| f.1).sum();
            // Every edge goes from a smaller local id to a larger one, on any ranks: acyclic.
            let pairs: Vec<(u32, u32)> = raw_edges
                .iter()
                .filter_map(|&(a, b, ra, rb)| {
                    let (a, b) = (a % per_rank, b % per_rank);
                    (a != b).then(|| ((ra % ranks) * per_rank + a.min(b), (rb % ranks) * per_rank + a.max(b)))
                })
                .collect();
            let mut exp = expanded(ranks, &fams, &pairs);
            if rotate {
                for (v, r) in exp.rotation.iter_mut().enumerate() {
                    *r = (v as u32 * 7) % ranks;
                }
            }
            let prof = profile(cores.0, cores.1, ranks);
            let cost = FlopsCost { local: edge_ns.0, remote: edge_ns.1 };
            let p = list_schedule(&exp, &prof, &cost);
            assert_valid(&exp, &prof, &p, &cost);
            assert_work_conserving(&exp, &prof, &p, &cost);
        }

        #[test]
        fn with_a_link_puts_stay_on_their_lanes_and_other_cores_never_idle(
            seed in any::<u64>(),
            ranks in 2u32..=3,
            aiv_per_aic in 1u32..=4,
            link in 1u64..=8,
            stream in 1u64..=8,
            edge in 0u64..=3,
        ) {
            let exp = random_expanded(seed, ranks, 6, 10);
            let prof = profile(1, aiv_per_aic, ranks);
            let cost = LinkCost { link, stream, edge };
            let p = list_schedule(&exp, &prof, &cost);
            assert_valid(&exp, &prof, &p, &cost);
            assert_work_conserving(&exp, &prof, &p, &cost);
        }
    }

    #[test]
    fn random_schedules_respect_every_dependency_and_core() {
        for seed in 0..150 {
            let ranks = 1 + (seed % 3) as u32;
            let exp = random_expanded(seed, ranks, 5, 12);
            let prof = profile(2, 2, ranks);
            let link = LinkCost { link: 3, stream: 1, edge: 2 };
            for cost in [&UnitCost as &dyn CostModel, &SimpleCost::default(), &TenAndEdges, &link] {
                let p = list_schedule(&exp, &prof, cost);
                assert_valid(&exp, &prof, &p, cost);
                assert_work_conserving(&exp, &prof, &p, cost);
                // Improvement keeps the first pass unless it finds a shorter schedule.
                let setup = Setup::new(&exp, &prof, cost);
                let first = setup.pass(Direction::Forward, bottom_levels_with(&exp, &setup.costs, cost));
                assert!(p.makespan_ns <= first.makespan_ns());
            }
        }
    }

    #[test]
    fn scheduling_is_deterministic() {
        let exp = random_expanded(7, 3, 6, 20);
        let prof = profile(2, 2, 3);
        let cost = SimpleCost::default();
        assert_eq!(list_schedule(&exp, &prof, &cost), list_schedule(&exp, &prof, &cost));
    }

    #[test]
    #[should_panic(expected = "profile test has no aic core for node 0")]
    fn a_node_of_a_kind_without_cores_is_a_caller_bug() {
        let exp = expanded(1, &[(AIC, 1, W)], &[]);
        list_schedule(&exp, &profile(0, 1, 1), &UnitCost);
    }

    #[test]
    fn empty_taskflow_gives_empty_queues() {
        let exp = expanded(2, &[(AIC, 0, W)], &[]);
        let p = list_schedule(&exp, &profile(1, 2, 2), &UnitCost);
        assert_eq!(p.queues.nodes(), 6);
        assert_eq!(p.queues.edges(), 0);
        assert_eq!(p.makespan_ns, 0);
    }

    /// A layered DAG of about 10^6 nodes over 8 ranks: AIC and AIV layers alternate, each
    /// node reads two nodes of the previous layer, and every fourth layer reads across ranks.
    /// Also proves and synchronises it. Run with
    /// `cargo test --release -p hpmoe-core -- --ignored million --nocapture`.
    #[test]
    #[ignore = "large: run in release to see scheduling time at 10^6 nodes"]
    fn million_node_layered_dag_schedules_and_syncs() {
        let (ranks, layers, width) = (8u32, 50u32, 2_500u32);
        let families: Vec<(CoreKind, u32, Work)> = (0..layers)
            .map(|l| {
                (if l % 2 == 0 { AIC } else { AIV }, width, Work { flops: 1 << 24, bytes: 1 << 16, remote_bytes: 0 })
            })
            .collect();
        let per_rank = layers * width;
        let mut pairs = Vec::with_capacity((ranks * per_rank * 2) as usize);
        for rank in 0..ranks {
            for l in 1..layers {
                let src_rank = if l % 4 == 0 { (rank + l) % ranks } else { rank };
                for i in 0..width {
                    let v = rank * per_rank + l * width + i;
                    let prev = src_rank * per_rank + (l - 1) * width;
                    pairs.push((prev + i, v));
                    pairs.push((prev + (i * 7 + 1) % width, v));
                }
            }
        }
        let exp = expanded(ranks, &families, &pairs);
        assert_eq!(exp.nodes(), 1_000_000);
        let prof = MachineProfile::ascend910b(ranks);
        let t = std::time::Instant::now();
        let p = list_schedule(&exp, &prof, &SimpleCost::default());
        eprintln!("list_schedule: {} nodes, {} edges in {:?}", exp.nodes(), exp.dag.edges(), t.elapsed());
        assert_eq!(p.queues.edges(), exp.nodes());
        assert!(p.makespan_ns > 0);
        let t = std::time::Instant::now();
        assert_eq!(crate::schedule::prove_deadlock_free(&exp.dag, &p.queues), Ok(()));
        eprintln!("prove_deadlock_free: {:?}", t.elapsed());
        let t = std::time::Instant::now();
        let plan = crate::schedule::plan_sync(&exp, &p);
        eprintln!(
            "plan_sync: {} → {} cross-core edges in {:?}",
            plan.cross_edges_before,
            plan.cross_edges_after,
            t.elapsed()
        );
        assert!(plan.cross_edges_after <= plan.cross_edges_before);
    }
}
