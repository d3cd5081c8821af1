//! Critical-path list scheduling: which core runs each tile instance, and in which order.
//!
//! An event-driven simulation under the cost model. Simulated time jumps from event to event
//! (a node finishes and frees its core; a node becomes ready), and whenever a core is idle
//! while a node it could run is ready, the core starts the ready node with the highest
//! priority — largest bottom level, a sink (a node nothing waits for) ranked with the other
//! readers of the input it waits for last (`priority::priorities_along`), in the first
//! pass (see forward-backward improvement below for the others), then earliest send round,
//! then smallest node id. No core is
//! ever left idle while a node it could run is ready (the schedule is *greedy*, or
//! work-conserving, which is what the (types + 1) × lower-bound guarantee of list scheduling
//! needs), so an urgent node whose inputs arrive late never holds up ready work behind it.
//! (With a shared link, puts to other ranks run only on a rank's link lanes; see below.)
//! The send round tie-break ([`order::send_orders`]) makes equally urgent puts of rank `r` go
//! to `r+1, r+2, …` in turn (and equally urgent producers of those puts run in the same
//! order), so the ranks do not all write to the same peer at once; when the cost model puts
//! ranks on servers ([`CostModel::ranks_per_server`]), the turns alternate
//! between peers on other servers and on the rank's own, so a rank's puts do not all cross
//! servers at once.
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
//! # Which idle core
//! Of the idle cores with no affine node waiting, a node takes the one freed last, unless the input
//! that made it ready last comes from another server ([`CostModel::ranks_per_server`]): then the
//! one idle longest. Such a node starts in the run when its put lands, and beyond one server the
//! run's puts drift from the plan's times (the puts in flight share the tier; the run is 1–8%
//! longer than the plan there). On the core freed last it would sit right behind the tile that ran
//! there, so nodes the plan readies one after another as puts land — a rank's weighted sums, as the
//! combine's rounds come in — stacked on one core, and when their puts landed closer together in
//! the run they ran one after another while the rank's other vector cores idled: on the DeepSeek-V3
//! forward at EP 64 one vector core of rank 47 ran 23 of its rank's 64 weighted sums back to back
//! and ended the run 0.57 ms after the last combine put had landed (4.4% of the run). The core idle
//! longest deals such nodes out over the idle cores instead. Which idle core a node takes hardly
//! moves the plan (no plan of the passes measured moved); it moves the table's queues. Measured
//! side by side (docs/history.md, "Nodes fed from another server on the core idle longest (stop
//! 40)"): the forward at EP 64 and 128 runs 1.111 → 1.072× and 1.080 → 1.066× its bound, the INT8
//! forward at EP 128 1.139 → 1.111×, the INT8 forward at EP 64 loses 0.8 points under ±1% timing
//! noise and no other pass more than 0.3; within a server nothing changes. Dealing out every node
//! fed by another rank also moves passes within a server (the natural training step at EP 8 and
//! 8192 tokens a rank 1.092 → 1.102× under noise), and every node, the INT8 forward at EP 64 by 7
//! points.
//!
//! # Link lanes
//! A put to another rank (a *link put*: an instance of a vector family with remote bytes and
//! a destination other than its own rank, `rotation != 0`) streams through its rank's link,
//! which all the rank's link puts share. When the cost model has such a link
//! ([`CostModel::link_bytes_per_s`]), each rank gets a few *lanes*: its last vector cores,
//! which run its link puts and nothing else, as many as it takes to keep the link busy with
//! the puts of every family: a put's cycle on a lane (its fixed part — setup, quiet — plus its
//! bytes at its stream rate) over the time its bytes take at the link's rate, rounded up
//! (`lanes::lanes_to_fill`, from [`CostModel::family_put`]), so one lane streams while another
//! does a put's fixed part; but always leaving one vector core for other work. On a lane a put is charged its exec
//! part plus its bytes at `min(stream, link / lanes)`, its share when every lane streams, and
//! planned at the time the cost model expects of it ([`CostModel::node_tile_ns`]), as every
//! other node is: a put likely to skip its bytes at run time is planned shorter.
//!
//! When every rank's puts to each destination take the same planned time
//! ([`order::rounds_stay_in_step`]), a lane takes its ready puts by send round
//! ([`order::send_order`]), not by priority — family by family in declaration order
//! ([`order::lane_turn`]), so a later family's puts do not overtake an earlier one's that
//! consumers wait for: every rank then sends round by round in step, each
//! receiver takes the puts of one sender at a time, as many as a sender has lanes, and no
//! receiver is crowded while another idles. Ordered by priority instead, the puts in flight
//! spread unevenly over the receivers (on the calibrated A3 network a die's ejection sat idle
//! 27–29% of the balanced DeepSeek-V3 run at EP 8 while others took up to 8 puts at once; the
//! `network_breakdown` example measures it). With uneven loads (natural routing) the rounds
//! drift apart, and lanes keep to priority order with the send round as tie-break.
//!
//! The lanes are what makes the table stream: a core runs its entries in order, so a rank
//! never has more link puts in flight than it has lanes, and blocks go out a few at a time in
//! priority order, each at a good fraction of the link, instead of every vector core starting
//! a put at once and all of them crawling to the end together. Consumers are then scheduled
//! for the times their blocks really land. Without a link in the model (the default), or
//! with fewer than two vector cores, there are no lanes and puts run on any vector core,
//! charged as if alone.
//!
//! # The server tier
//! When the cost model's network has servers ([`CostModel::network_limits`]), a put to another
//! server also passes its rank's cross-server bandwidth, slower than the link (on the
//! calibrated A3 die 61 GB/s against 112) and shared by every put the rank sends across:
//! with a lane's share of the link alone the plan would have a rank's puts cross as fast as
//! its lanes stream, and beyond one server the consumers of their blocks, planned for bytes
//! that cannot be out yet, wait (on the DeepSeek-V3 layer the forward at EP 32 and 64 ran at
//! 1.35× and 1.31× its bound, the backward at 1.31× and 1.39×). So a lane's put across
//! servers books its bytes and half its fixed part on its rank's tier, one put after another,
//! and is done when the tier is done with them or its link share is, whichever is later, plus
//! its fixed part with the longer quiet ([`net`]; the half fixed part: the time the run's tier,
//! shared among the puts in flight, leaves idle while they finish, which the measurements
//! favour since stop 38). Everything downstream — ready times, the lane's next put, the
//! improvement rounds — then follows when the bytes can really be out. The receivers' ejection
//! is not booked: within a server the lanes' round order already keeps each receiver to one
//! sender at a time, and booked first come, first served or shared among the puts in flight,
//! it made the plans of the balanced backward and the INT8 forward at EP 16 slower in the
//! simulator (0.8–2.5%), so the plan keeps the rule that measured better. The round order
//! holds only while each round's puts are ready in their turn, so the producers of link puts
//! break ties by their puts' rounds too ([`order::send_orders`]); ordered by node id, they
//! left one destination's blocks last on every rank, and on the balanced training step at EP
//! 16 the plan sent the last forward combine puts of 13 ranks into one receiver at once
//! (`network_breakdown`'s `plan` column; booking receivers or capping the puts landing on one
//! instead moved the passes both ways: docs/history.md, "Receivers the plan crowds (stop
//! 34)"). A run drifts out of the plan's step all the same, so when the lanes go by round the
//! table keeps each receiver to the plan's order of senders ([`super::pacing`]).
//!
//! # More lanes beyond one server
//! The lanes' count keeps the link busy while every lane streams at its share of it. Beyond one
//! server a lane holding a put across servers streams at its share of its rank's tier, slower
//! (61 GB/s a die against 112 on the calibrated A3), and the link's share it leaves idles
//! unless another lane has a put to send meanwhile: on the DeepSeek-V3 forward at EP 32 the
//! plan's three lanes were busy to 11.5 ms for 8.1 ms of the link's bytes, and the forward ran
//! 1.12× its bound. More lanes keep more puts streaming, but each put then takes longer at its
//! smaller share of the link, which delays the first blocks that consumers wait for (the
//! backward's matrix cores wait for the output gradient's first rows: one lane more ran the
//! balanced backward at EP 32 1.028 → 1.036× its bound). Which wins depends on the layer. So
//! when a layer has puts across servers and its first pass is not within
//! [`IMPROVEMENT_TOLERANCE`] of the lower bound without the lanes' term (which more lanes would
//! lower), the scheduler plans it again, improvement rounds included, with one lane per rank
//! more and then two ([`EXTRA_LANES_TRIED`]), and keeps each extra lane only if its plan is
//! shorter than the one with a lane fewer by more than 1/[`EXTRA_LANE_GAIN`] (1%), a margin: the
//! run is 1–8% longer than the plan beyond one server, and smaller gains in the plan went
//! either way in the run (one lane more for every layer across servers, measured side by side:
//! the natural forward at EP 32 1.099 → 1.138× its bound, its plan 0.05% shorter; the training
//! step at EP 128 1.171 → 1.185×, its plan 0.02% longer). Kept only where the plan gains more,
//! no pass measured ran slower, with exact times or under ±1% timing noise (docs/history.md,
//! "More lanes beyond one server (stop 39)"). Within a server the lanes are the link's alone.
//! The trial costs one or two more plans of such a layer, the first beside the layer's own
//! improvement rounds on a second core when the layer is large; a plan already near its bound
//! (the 10^6-instance layer of `schedule_scale`, within 1% of its tier) tries none.
//!
//! # The HBM
//! A die's cores share its HBM ([`CostModel::hbm_bytes_per_s`]), and the cost model prices a
//! tile at one core's memory rates. A matrix tile asks little of it (on the DeepSeek-V3 layer a
//! die's 24 AICs together at most half its bandwidth), but a memory-bound vector tile asks a
//! lot: the backward's `scale_dout`, 64–256 tiles a rank ready at once at its start, asks
//! 3.2–3.7× what the HBM delivers when every vector core but the lanes runs one, so on rank 0
//! of the natural backward at EP 8 it ran until 0.94 ms where the plan had it done at 0.29 ms,
//! and the puts and matrix tiles behind it started later than the plan had them. So in a layer
//! that fits one server and whose link puts, if it has any, go by send round, every vector tile
//! other than a lane's put books its expected HBM bytes ([`CostModel::node_hbm_bytes`]) on its
//! rank's HBM, first come, first served, and is done when the later of its own time and its
//! bytes is ([`hbm`]). Measured side by side (`ratio_sweep`; docs/history.md, "The die's HBM in
//! the plan (stop 36)"): within a server every pass gains or stays put (the natural backward at
//! EP 8 and 16 1.056 → 1.034× and 1.069 → 1.037× its bound); booked beyond one server, or on
//! layers whose rounds drift apart, it made the forward and the INT8 forward slower (up to 12
//! points at EP 64), so the plan books it only where it measured a gain.
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
//! (at most [`IMPROVEMENT_ROUNDS`]), and none starts once the best pass is within
//! [`IMPROVEMENT_TOLERANCE`] of the lower bound (the critical path and each kind's work per
//! core, [`super::lower_bound_of`], and the resources the passes book: each rank's link puts
//! over its lanes, each rank's bytes across servers at its tier's rate), which no round can beat; the shortest forward pass is the result, so the first
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
//! At most `1 + 2 · IMPROVEMENT_ROUNDS` passes (up to `1 + EXTRA_LANES_TRIED` times that when
//! more lanes are tried, above), each O((V + E) log V): a heap of running nodes by finish time and one of nodes about to become
//! ready; per (rank, class of core) a heap of ready nodes and a queue of idle cores; per core a heap of
//! the nodes affine to it. A node enters each heap at
//! most once and is skipped, when it reaches the top of a heap, if it has started elsewhere.
//! Ready times take one or two passes over each node's predecessors.

mod booked;
mod hbm;
mod heap;
mod lanes;
mod net;
mod order;
mod sim;
#[cfg(test)]
mod tests;

use super::CostModel;
use super::Placement;
use super::bound::lower_bound_along;
use super::pacing::Receivers;
#[cfg(test)]
use super::priority::priorities_with;
use super::priority::{Edges, node_costs, priorities_along};
use crate::expand::Expanded;
use crate::graph::Csr;
use crate::ids::{CoreId, IdVec, NodeId};
use crate::model::{CoreKind, MachineProfile};
use crate::side_by_side::{WORTH_A_THREAD_FROM, both};
use lanes::Lanes;
use std::borrow::Cow;

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
    let order = exp.dag.topo_order().expect("the instance DAG is acyclic (checked before scheduling)");
    list_schedule_then(exp, &order, profile, cost, usize::MAX, |_, _| ()).placement
}

/// A placement, what [`list_schedule_then`] computed from it, and how long scheduling took.
pub(crate) struct Scheduled<R> {
    /// [`list_schedule`]'s placement.
    pub placement: Placement,
    /// `then` of `placement`.
    pub then: R,
    /// Wall-clock time from the start until `placement` was known (for benchmarks).
    pub schedule_time: std::time::Duration,
}

/// [`list_schedule`], and `then` of its placement: the same result as `then(&list_schedule(..))`,
/// sooner on a machine with a second core. `then` is also given the receivers whose puts the
/// table paces ([`super::pacing`]): `Some` when the link lanes go by send round. `order` is a
/// topological order of the instance DAG (the pipeline's, computed once per plan); the result
/// does not depend on which.
///
/// When the DAG has at least `overlap_from` nodes and a forward-backward round runs, `then`
/// runs on another thread on the first pass's placement while the round does. If no round
/// beats the first pass (at 10^6 nodes of the MoE layer none would: the first pass is within
/// the tolerance of the server tier's bound, so no round runs there), that placement is the
/// result and `then` of it is ready when the round ends; otherwise `then` runs again on the
/// better placement and the speculative result is dropped. `then` must be a function of the
/// placement alone, so the result never depends on which thread ran it or when. When more
/// lanes are tried ("More lanes beyond one server" in the module documentation), the plan with
/// a lane more runs beside the first plan's improvement rounds (from `overlap_from` nodes; one
/// after the other below), a second lane more, if any, after them, and `then` runs once, on the
/// plan kept, with its receivers.
pub(crate) fn list_schedule_then<R: Send>(
    exp: &Expanded,
    order: &[NodeId],
    profile: &MachineProfile,
    cost: &dyn CostModel,
    overlap_from: usize,
    then: impl Fn(&Placement, Option<&Receivers>) -> R + Sync,
) -> Scheduled<R> {
    assert_eq!(profile.ranks, exp.space.ranks, "profile and taskflow disagree on the number of ranks");
    let start = std::time::Instant::now();
    let (setup, levels) = Setup::with_levels(exp, order, profile, cost, 0);
    let receivers = setup.receivers();
    let setup = &setup;
    let first_pass = move || placement_of(setup.pass(Direction::Forward, levels));
    let (first, mut bound) = if exp.nodes() >= overlap_from {
        // From this size on `round_may_help` below always wants the lower bound: it is
        // computed beside the first pass (a function of the setup alone).
        std::thread::scope(|s| {
            let bound = s.spawn(|| setup.lower_bounds());
            let first = first_pass();
            (first, Some(bound.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))))
        })
    } else {
        (first_pass(), None)
    };
    if setup.more_lanes_may_help(&first, &mut bound) {
        // The plan with a lane more does not depend on this one's improvement rounds: on a
        // large DAG the two run side by side (the rounds need only the setup; the cost model,
        // which the trial's setup reads, stays on this thread).
        let lanes = setup.lanes;
        let (placement, one_more) = both(
            exp.nodes() >= overlap_from,
            || setup.improve(&first, &mut bound).unwrap_or(first),
            || lanes_trial(exp, order, profile, cost, 1, lanes),
        );
        let (placement, receivers) = with_more_lanes(exp, order, profile, cost, (placement, receivers), one_more);
        let schedule_time = start.elapsed();
        let then = then(&placement, receivers.as_ref());
        return Scheduled { placement, then, schedule_time };
    }
    let then = |placement: &Placement| then(placement, receivers.as_ref());
    let (better, then_result) = if exp.nodes() < overlap_from || !setup.round_may_help(&first, &mut bound) {
        (setup.improve(&first, &mut bound), None)
    } else {
        std::thread::scope(|s| {
            let speculative = s.spawn(|| then(&first));
            match setup.improve(&first, &mut bound) {
                None => {
                    let r = speculative.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
                    (None, Some(r))
                }
                // The result of the first placement is not wanted: the sequential order never
                // computes it. (The scope waits for the thread.)
                Some(better) => (Some(better), None),
            }
        })
    };
    let placement = better.unwrap_or(first);
    let schedule_time = start.elapsed();
    let then = then_result.unwrap_or_else(|| then(&placement));
    Scheduled { placement, then, schedule_time }
}

/// A plan with lanes per rank more than the link needs ([`lanes_trial`]).
struct LanesTrial {
    plan: Placement,
    /// The receivers its table paces.
    receivers: Option<Receivers>,
    /// Its lanes per rank.
    lanes: u32,
}

/// The plan, improvement rounds included, with `extra` lanes per rank more than the link needs,
/// or `None` if that leaves no more lanes than `lanes` (no vector core left to make one of).
fn lanes_trial(
    exp: &Expanded,
    order: &[NodeId],
    profile: &MachineProfile,
    cost: &dyn CostModel,
    extra: u64,
    lanes: u32,
) -> Option<LanesTrial> {
    let (setup, levels) = Setup::with_levels(exp, order, profile, cost, extra);
    if setup.lanes <= lanes {
        return None;
    }
    let first = placement_of(setup.pass(Direction::Forward, levels));
    let plan = setup.improve(&first, &mut None).unwrap_or(first);
    Some(LanesTrial { plan, receivers: setup.receivers(), lanes: setup.lanes })
}

/// `best` (a placement, and the receivers its table paces), or the plan with one or two lanes
/// per rank more ([`EXTRA_LANES_TRIED`]) if that is shorter by more than 1/[`EXTRA_LANE_GAIN`]:
/// each extra lane kept only if it gains that much over the one fewer (see "More lanes beyond
/// one server" in the module documentation). `one_more` is the trial with one lane more.
fn with_more_lanes(
    exp: &Expanded,
    order: &[NodeId],
    profile: &MachineProfile,
    cost: &dyn CostModel,
    mut best: (Placement, Option<Receivers>),
    one_more: Option<LanesTrial>,
) -> (Placement, Option<Receivers>) {
    let mut trial = one_more;
    let mut extra = 1;
    while let Some(LanesTrial { plan, receivers, lanes }) = trial {
        let makespan = best.0.makespan_ns;
        if plan.makespan_ns >= makespan - makespan / EXTRA_LANE_GAIN {
            break;
        }
        best = (plan, receivers);
        if extra == EXTRA_LANES_TRIED {
            break;
        }
        extra += 1;
        trial = lanes_trial(exp, order, profile, cost, extra, lanes);
    }
    best
}

/// The placement of a pass: its per-core queues built from each node's core and position.
fn placement_of(pass: Pass) -> Placement {
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
    /// A topological order of the instance DAG (for the lower bound).
    order: Cow<'a, [NodeId]>,
    profile: &'a MachineProfile,
    /// Per node: its time on a core (a link put's on a lane).
    costs: Vec<u64>,
    /// Per node: its send round ([`order::send_orders`]: a link put's own, a producer's the
    /// earliest of its link puts'), the order of a lane's puts when `lanes_by_round`, and the
    /// tie-break among equally urgent nodes.
    send_order: IdVec<NodeId, u32>,
    /// Lanes take their puts by send round, not by priority
    /// ([`order::rounds_stay_in_step`]).
    lanes_by_round: bool,
    /// When a lane's put to another server is done, if the cost model has a server tier
    /// ([`net`]); every other node takes its `costs` entry.
    net: Option<net::Net>,
    /// When a vector tile's HBM bytes are done, if the layer books them ([`hbm`]).
    hbm: Option<hbm::Hbm>,
    edge_local: u64,
    edge_remote: u64,
    group_of_node: IdVec<NodeId, u32>,
    group_of_core: IdVec<CoreId, u32>,
    /// Link lanes per rank ([`Lanes::count`]).
    lanes: u32,
    /// Ranks a server holds, when the cost model puts ranks on servers
    /// ([`net::ranks_per_server`], as the tier takes it; see "Which idle core" in the module
    /// documentation).
    ranks_per_server: Option<u32>,
}

/// Beyond one server, at most this many lanes per rank more than the link needs are planned
/// (see "More lanes beyond one server" in the module documentation).
const EXTRA_LANES_TRIED: u64 = 2;

/// A lane more is kept only if it shortens the plan by more than 1/`EXTRA_LANE_GAIN` (1%).
const EXTRA_LANE_GAIN: u64 = 100;

/// The lower bounds of a setup's passes ([`Setup::lower_bounds`]).
#[derive(Clone, Copy, Debug)]
struct Bounds {
    /// The critical path, each kind's work per core and each rank's server tier.
    without_lanes: u64,
    /// Each rank's link puts over its lanes.
    lanes: u64,
}

impl Bounds {
    /// The lower bound of every pass.
    fn ns(self) -> u64 {
        self.without_lanes.max(self.lanes)
    }
}

/// At most this many rounds of forward-backward improvement (two passes each) follow the
/// first pass; they stop at the first round that does not shorten the estimated makespan.
const IMPROVEMENT_ROUNDS: usize = 3;

/// Improvement stops once the best makespan is within 1/`IMPROVEMENT_TOLERANCE` (about 1.6%)
/// of the lower bound: no round could then shorten it by more than that.
const IMPROVEMENT_TOLERANCE: u64 = 64;

/// `makespan` is not within 1/[`IMPROVEMENT_TOLERANCE`] of `bound`: a plan could be that much
/// shorter.
fn beyond_tolerance(makespan: u64, bound: u64) -> bool {
    makespan.saturating_sub(bound) >= makespan / IMPROVEMENT_TOLERANCE
}

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
    core_of: IdVec<NodeId, CoreId>,
    position: IdVec<NodeId, u32>,
    queue_len: IdVec<CoreId, u32>,
    start_ns: IdVec<NodeId, u64>,
    finish_ns: IdVec<NodeId, u64>,
}

impl Pass {
    fn makespan_ns(&self) -> u64 {
        self.finish_ns.values().copied().max().unwrap_or(0)
    }
}

impl<'a> Setup<'a> {
    /// The setup of `exp`, computing a topological order of its DAG.
    #[cfg(test)]
    fn new(exp: &'a Expanded, profile: &'a MachineProfile, cost: &dyn CostModel) -> Self {
        let order = exp.dag.topo_order().expect("the instance DAG is acyclic (checked before scheduling)");
        Setup::along(exp, Cow::Owned(order), profile, cost)
    }

    /// The setup of `exp`, whose DAG has the topological order `order`.
    #[cfg(test)]
    fn along(exp: &'a Expanded, order: Cow<'a, [NodeId]>, profile: &'a MachineProfile, cost: &dyn CostModel) -> Self {
        let lanes = Lanes::new(exp, profile, cost, 0);
        let costs = lane_costs(exp, &lanes, cost);
        Setup::of_costs(exp, order, profile, cost, &lanes, costs)
    }

    /// The setup of `exp`, whose DAG has the topological order `order`, and the first pass's
    /// priorities ([`priorities_along`]): a function of the nodes' costs and the DAG alone,
    /// so on a large DAG computed on a second thread while this one builds the rest of the
    /// setup, from [`WORTH_A_THREAD_FROM`] nodes (on its own copy of the costs; the result is
    /// the same either way). With `extra` lanes per rank more than the link needs.
    fn with_levels(
        exp: &'a Expanded,
        order: &'a [NodeId],
        profile: &'a MachineProfile,
        cost: &dyn CostModel,
        extra: u64,
    ) -> (Self, Vec<u64>) {
        let lanes = Lanes::new(exp, profile, cost, extra);
        let costs = lane_costs(exp, &lanes, cost);
        let edges = Edges::of(cost);
        let (levels, setup) = both(
            // At 10^6 nodes each takes some 50 ms.
            exp.nodes() >= WORTH_A_THREAD_FROM,
            || priorities_along(exp, order, &costs, edges),
            || Setup::of_costs(exp, Cow::Borrowed(order), profile, cost, &lanes, costs.clone()),
        );
        (setup, levels)
    }

    /// The setup of `exp` with `lanes` and the nodes' `costs` ([`lane_costs`]).
    fn of_costs(
        exp: &'a Expanded,
        order: Cow<'a, [NodeId]>,
        profile: &'a MachineProfile,
        cost: &dyn CostModel,
        lanes: &Lanes,
        costs: Vec<u64>,
    ) -> Self {
        let group_of_node = exp
            .space
            .node_ids()
            .map(|v| {
                let class = if lanes.carries(exp, v) { LANE } else { kind_index(exp.core_kind(v)) };
                exp.space.rank_of(v).raw() * CLASSES + class
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
        let lanes_by_round = order::rounds_stay_in_step(exp, |v| lanes.carries(exp, v), |v| costs[v.index()]);
        let net = net::Net::new(exp, cost, &lanes.shapes, lanes.count, |v| lanes.carries(exp, v));
        let hbm = hbm::Hbm::new(exp, cost, lanes_by_round, |v| lanes.carries(exp, v));
        Setup {
            exp,
            order,
            profile,
            costs,
            send_order: order::send_orders(exp, cost.ranks_per_server(), |v| lanes.carries(exp, v)),
            lanes_by_round,
            net,
            hbm,
            edge_local: cost.edge_ns(false),
            edge_remote: cost.edge_ns(true),
            group_of_node,
            group_of_core,
            lanes: lanes.count,
            ranks_per_server: net::ranks_per_server(cost, exp.space.ranks),
        }
    }

    /// The receivers of the link puts the table paces ([`super::pacing`]): `None` unless the
    /// lanes go by send round.
    fn receivers(&self) -> Option<Receivers> {
        let link_puts = self.group_of_node.iter().filter(|&(_, &g)| g % CLASSES == LANE).map(|(v, _)| v);
        self.lanes_by_round.then(|| Receivers::new(self.exp, link_puts))
    }

    /// Forward-backward improvement of the forward pass `first`: up to `rounds` times, a
    /// backward pass (the most urgent node being the one that finished last) and a forward
    /// pass by the backward finish times (the time from a node's start to the end, resources
    /// included); the shortest forward pass wins, the earlier one on a tie. Returns the
    /// winner if it is not `first`.
    ///
    /// A round can at best bring the makespan down to the lower bound of every pass
    /// ([`Self::lower_bounds`]), so none runs once the best is within
    /// [`IMPROVEMENT_TOLERANCE`] of that bound (`bound` caches it).
    fn improve(&self, first: &Placement, bound: &mut Option<Bounds>) -> Option<Placement> {
        let mut best: Option<Placement> = None;
        for _ in 0..IMPROVEMENT_ROUNDS {
            let current = best.as_ref().unwrap_or(first);
            if !self.round_may_help(current, bound) {
                break;
            }
            let back = self.pass(Direction::Backward, current.finish_ns.clone().into_vec());
            let next = self.pass(Direction::Forward, back.finish_ns.into_vec());
            if next.makespan_ns() >= current.makespan_ns {
                break;
            }
            best = Some(placement_of(next));
        }
        best
    }

    /// Whether a round of improvement may shorten `best`: it is not within
    /// [`IMPROVEMENT_TOLERANCE`] of the lower bound (`bound` caches it), and rounds are allowed.
    fn round_may_help(&self, best: &Placement, bound: &mut Option<Bounds>) -> bool {
        if IMPROVEMENT_ROUNDS == 0 {
            return false;
        }
        beyond_tolerance(best.makespan_ns, bound.get_or_insert_with(|| self.lower_bounds()).ns())
    }

    /// Whether a plan with more lanes may be shorter than `first`'s: the layer has puts across
    /// servers, and `first` is not within [`IMPROVEMENT_TOLERANCE`] of the lower bound without
    /// the lanes' term (`bound` caches the bounds), which more lanes lower.
    fn more_lanes_may_help(&self, first: &Placement, bound: &mut Option<Bounds>) -> bool {
        // A tier exists only for puts on lanes (`Net::new`), so with one there are lanes.
        if self.net.is_none() {
            return false;
        }
        beyond_tolerance(first.makespan_ns, bound.get_or_insert_with(|| self.lower_bounds()).without_lanes)
    }

    /// The lower bound on the makespan of every pass, forward or backward ([`Bounds::ns`]), for
    /// tests.
    #[cfg(test)]
    fn lower_bound_ns(&self) -> u64 {
        self.lower_bounds().ns()
    }

    /// A lower bound on the makespan of every pass, forward or backward: the largest of
    /// [`super::lower_bound_of`] the pass costs (the critical path, each kind's work per core) and
    /// the resources only the passes book — each rank's link lanes, which run its link puts
    /// and nothing else (their least times over the lanes), and each rank's server tier
    /// ([`net::Net::tier_bound_ns`]); the lanes' term apart from the others.
    fn lower_bounds(&self) -> Bounds {
        let compute = lower_bound_along(self.exp, &self.order, self.profile, &self.costs).ns();
        let ranks = self.exp.space.ranks as usize;
        let mut lanes = vec![0u64; ranks];
        for &g in self.group_of_core.values() {
            if g % CLASSES == LANE {
                lanes[(g / CLASSES) as usize] += 1;
            }
        }
        let mut lane_work = vec![0u64; ranks];
        for (v, &g) in self.group_of_node.iter() {
            if g % CLASSES == LANE {
                // What `sim` charges it: its cost, or at least its tier booking's least time.
                let least = match &self.net {
                    Some(net) if net.times(v) => net.least_ns(v),
                    _ => self.costs[v.index()],
                };
                let w = &mut lane_work[(g / CLASSES) as usize];
                *w = w.saturating_add(least);
            }
        }
        let lane = lane_work.iter().zip(&lanes).filter(|&(_, &n)| n > 0).map(|(&w, &n)| w.div_ceil(n)).max();
        let tier = self.net.as_ref().map_or(0, |net| net.tier_bound_ns(self.exp));
        Bounds { without_lanes: compute.max(tier), lanes: lane.unwrap_or(0) }
    }

    /// One list-scheduling pass over the instance DAG or the DAG reversed, most urgent first
    /// by `levels`.
    fn pass(&self, direction: Direction, levels: Vec<u64>) -> Pass {
        let dag = &self.exp.dag;
        let (pred, succ) = match direction {
            Direction::Forward => (&dag.pred, &dag.succ),
            Direction::Backward => (&dag.succ, &dag.pred),
        };
        let pass = sim::run(self, pred, succ, levels, direction);
        assert!(
            pass.queue_len.values().map(|&n| n as usize).sum::<usize>() == self.exp.nodes(),
            "the instance DAG is acyclic (checked before scheduling), so every node gets placed"
        );
        pass
    }
}

/// Per node: its time on a core, a link put's on a lane ([`Lanes::put_ns`]).
fn lane_costs(exp: &Expanded, lanes: &Lanes, cost: &dyn CostModel) -> Vec<u64> {
    let mut costs = node_costs(exp, cost);
    for v in exp.space.node_ids() {
        if lanes.carries(exp, v) {
            // Planned as every other node is, at the time the cost model expects (a put
            // likely to skip its bytes at run time expects less; see `node_costs`).
            let put_ns = lanes.put_ns[exp.space.family_of(v)].expect("a lane carries puts only");
            costs[v.index()] = cost.node_tile_ns(v, put_ns);
        }
    }
    costs
}

/// Builds the per-core queues (one row per core) from each node's core and position. O(V).
fn queues_from_positions(
    core_of: &IdVec<NodeId, CoreId>,
    position: &IdVec<NodeId, u32>,
    queue_len: &IdVec<CoreId, u32>,
) -> Csr<CoreId, NodeId> {
    let mut offsets = Vec::with_capacity(queue_len.len() + 1);
    let mut total = 0u32;
    offsets.push(0u32);
    for &len in queue_len.values() {
        total = total.checked_add(len).expect("queued nodes fit u32 offsets");
        offsets.push(total);
    }
    let mut flat = vec![NodeId::new(0); total as usize];
    for (v, &core) in core_of.iter() {
        flat[(offsets[core.index()] + position[v]) as usize] = v;
    }
    Csr::from_parts(offsets, flat)
}
