//! Hardware cross-core flags, where they are provably sound.
//!
//! The scheduler synchronises every kept cross-core dependency with a monotone counter in global
//! memory. An AIC and its own two AIVs can instead use a hardware flag (`CrossCoreSetFlag<2, _>`
//! on the AIC bumps a 0..15 counter on *both* its AIVs; `CrossCoreWaitFlag` blocks while it is 0
//! and then decrements it), which costs no global-memory round trip. A flag is a counter shared
//! by every use of its id on those cores, so a wrong use releases the wrong tile or overflows
//! (more than 15 pending sets is an error that can freeze the device). This module decides, per
//! AIC, which dependencies the flag carries; every other dependency stays on a counter.
//!
//! # The rule
//!
//! A kept dependency `u → v` may use the flag when, on one rank, `u` runs on an AIC `c` and `v`
//! on one of `c`'s own AIVs (local AIV `v` belongs to AIC `v / 2`). Walking `c`'s list in order,
//! a producer `u` becomes the `j`-th flag set if all of these hold:
//!
//! 1. **one wait per set, in order.** Each AIV does exactly one wait per set of its AIC. For each
//!    own AIV that holds a consumer of `u`, that consumer comes after the AIV's previous flag
//!    consumer, and its wait releases at set `j` (its earlier, unconsumed sets are drained by the
//!    same tile first). An AIV without a consumer of `u` drains set `j` before its next flag
//!    consumer, or at the end of its list. Since sets happen in list order, the consumer of set
//!    `j` starts after `u` has finished, which is the dependency; draining earlier sets first
//!    never waits longer than set `j` itself.
//! 2. **back-pressure.** When `j > 15`, on each AIV the wait for set `j − 15` must happen before
//!    set `j`: it is the wait of the AIV's first flag consumer with a set index in
//!    `j − 15 .. j − 1` (there must be one), and some tile of `c`'s list up to `u` must depend on
//!    a tile at or after that consumer in the AIV's list. Then at most 15 sets are ever pending.
//!    (Induction over time: the first overflow would need set `j` before wait `j − 15`, but the
//!    dependency path orders them and uses only earlier, still-correct synchronisation.)
//!
//! `u`'s consumers on its own AIVs then drop that dependency from their counter (their target
//! falls by one, to no wait at all when nothing else is left), and `u` no longer signals it.
//! Everything else (other AICs' AIVs, AIV → AIC, other ranks) stays on counters.
//!
//! # What is not done, and why
//!
//! * **AIV → AIC.** In mode 2 the AIC's flag counter rises only once *both* AIVs have set it, so
//!   a single AIV producer would need its partner to issue a matching "empty" set; how far one
//!   AIV may run ahead of the other in that pairing is not documented, so no bound on pending
//!   sets can be proven. These dependencies stay on counters.
//! * **More than one flag id.** Every id the libraries leave free would do; the default pool has
//!   exactly one (15), since the Matmul API holds 0–7, catlass 8–10 and `SyncAll` 11–14.
//!
//! Flag planning is part of compilation ([`crate::compile_with`]): the schedule table is built from
//! the counter plan without the flagged dependencies ([`without_flagged`]), so a taskflow has one
//! table and one flag plan wherever it is compiled, and every consumer of the table (the kernel,
//! the host executor) honours the plan. The device side (`hpmoe/flags.h` in hpmoe-ascendc) adds a run-time check of the same bound and a drain
//! protocol, so that a core that stops early never leaves its partners blocked in a flag wait.

pub use super::flag_error::{FlagIdError, FlagPlanError, FlagPlanPart};
use super::{Placement, Signal, SyncPlan};
use crate::expand::Expanded;
use crate::graph::Csr;
use crate::ids::{CoreId, CounterId, IdVec, NodeId, OptId, RankId};
use crate::model::{CoreKind, MachineProfile};

/// A flag counter holds 0..15; one more pending set is a device error.
pub const MAX_PENDING: usize = 15;
/// The flag id used by default: the only one the libraries below leave free.
pub const DEFAULT_FLAG_ID: u16 = 15;
/// Flag ids reserved by libraries a kernel may run with: inclusive ranges and their owner.
pub const RESERVED_FLAG_IDS: [(u16, u16, &str); 3] =
    [(0, 7, "the Matmul high-level API"), (8, 10, "catlass"), (11, 14, "SyncAll")];

/// Checks that `id` is a hardware flag id (0..15) that no library reserves.
pub fn check_flag_id(id: u16) -> Result<(), FlagIdError> {
    if id > 15 {
        return Err(FlagIdError::OutOfRange(id.into()));
    }
    match RESERVED_FLAG_IDS.iter().find(|(lo, hi, _)| (*lo..=*hi).contains(&id)) {
        Some(&(lo, hi, owner)) => Err(FlagIdError::Reserved { id, lo, hi, owner }),
        None => Ok(()),
    }
}

/// Whether and with which id the kernel may use the AIC → own-AIV hardware flag.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlagPolicy {
    /// `false`: every dependency on a counter.
    pub enabled: bool,
    /// The flag id (see [`check_flag_id`]).
    pub flag_id: u16,
}

impl Default for FlagPolicy {
    fn default() -> Self {
        FlagPolicy { enabled: true, flag_id: DEFAULT_FLAG_ID }
    }
}

/// Which dependencies the hardware flag carries, and what each core does with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlagPlan {
    /// The flag id, or `None` when no dependency uses a flag. A hardware flag id (0..15, see
    /// [`check_flag_id`]), not an index: it stays a `u16`.
    pub flag_id: Option<u16>,
    /// Flag-carried dependencies `(producer, consumer)`, sorted.
    pub edges: Vec<(NodeId, NodeId)>,
    /// Per node: an AIC tile that sets the flag after it runs.
    pub set_after: IdVec<NodeId, bool>,
    /// Per node: the flag waits an AIV does before the tile (its own set and earlier drains).
    pub waits_before: IdVec<NodeId, u8>,
    /// Per global core: the sets (AIC) or waits (AIV) of its whole list.
    pub totals: IdVec<CoreId, u32>,
}

impl FlagPlan {
    /// A plan that uses no flag.
    pub fn none(nodes: usize, cores: usize) -> Self {
        FlagPlan {
            flag_id: None,
            edges: Vec::new(),
            set_after: IdVec::filled(nodes, false),
            waits_before: IdVec::filled(nodes, 0),
            totals: IdVec::filled(cores, 0),
        }
    }
}

/// The kept dependencies of a sync plan, as rows `consumers.row(u)` (ascending node ids).
pub fn kept_edges(exp: &Expanded, sync: &SyncPlan) -> Csr {
    let waiter = Waiters::new(exp, sync);
    let mut offsets = Vec::with_capacity(exp.nodes() + 1);
    let mut targets = Vec::with_capacity(sync.signal_list.len());
    offsets.push(0u32);
    for u in exp.space.node_ids() {
        let first = targets.len();
        targets.extend(sync.signals(u).iter().filter_map(|&s| waiter.get(s)));
        targets[first..].sort_unstable();
        offsets.push(u32::try_from(targets.len()).expect("kept edges fit u32"));
    }
    Csr::from_parts(offsets, targets)
}

/// The node waiting on each counter of a sync plan: a dense table per rank (counters are
/// numbered densely per rank), the last node in node order where several claim one.
struct Waiters {
    /// Per rank: where its counters start in `node`.
    base: Vec<usize>,
    /// Per rank and counter: the waiting node, if any.
    node: Vec<OptId<NodeId>>,
}

impl Waiters {
    fn new(exp: &Expanded, sync: &SyncPlan) -> Self {
        // Counters beyond `counters_per_rank` (an inconsistent plan) still get a slot.
        let mut per_rank = sync.counters_per_rank.clone().into_vec();
        per_rank.resize(exp.space.ranks as usize, 0);
        for (v, w) in sync.waits.iter() {
            if let Some(w) = w {
                let r = exp.space.rank_of(v).index();
                per_rank[r] = per_rank[r].max(w.counter.raw() + 1);
            }
        }
        let mut base = Vec::with_capacity(per_rank.len() + 1);
        let mut total = 0usize;
        for &n in &per_rank {
            base.push(total);
            total += n as usize;
        }
        base.push(total);
        let mut node = vec![OptId::NONE; total];
        for (v, w) in sync.waits.iter() {
            if let Some(w) = w {
                node[base[exp.space.rank_of(v).index()] + w.counter.index()] = OptId::some(v);
            }
        }
        Waiters { base, node }
    }

    fn get(&self, s: Signal) -> Option<NodeId> {
        let r = s.rank.index();
        let (&start, &end) = (self.base.get(r)?, self.base.get(r + 1)?);
        let slot = start + s.counter.index();
        if slot >= end {
            return None;
        }
        self.node[slot].get()
    }
}

/// Decides which dependencies the flag carries (see the [module docs](self)). Fails only for a
/// flag id the policy may not use ([`check_flag_id`]).
pub fn plan_flags(
    exp: &Expanded,
    placement: &Placement,
    sync: &SyncPlan,
    profile: &MachineProfile,
    policy: &FlagPolicy,
) -> Result<FlagPlan, FlagIdError> {
    plan_flags_of(exp, placement, &kept_edges(exp, sync), profile, policy)
}

/// [`plan_flags`] of the sync plan whose kept dependencies are `consumers`
/// ([`kept_edges`] of it).
pub(crate) fn plan_flags_of(
    exp: &Expanded,
    placement: &Placement,
    consumers: &Csr,
    profile: &MachineProfile,
    policy: &FlagPolicy,
) -> Result<FlagPlan, FlagIdError> {
    let nodes = exp.nodes();
    let cores = profile.total_cores() as usize;
    if !policy.enabled {
        return Ok(FlagPlan::none(nodes, cores));
    }
    check_flag_id(policy.flag_id)?;
    let mut plan = FlagPlan::none(nodes, cores);
    // Mode 2 pairs an AIC with exactly two AIVs.
    if profile.aiv_per_aic != 2 {
        return Ok(plan);
    }
    let cpr = profile.cores_per_rank();
    for rank in 0..profile.ranks {
        for c in 0..profile.aic_per_rank {
            let aic = CoreId::new(rank * cpr + c);
            let first_aiv = rank * cpr + profile.aic_per_rank + 2 * c;
            let aivs = [CoreId::new(first_aiv), CoreId::new(first_aiv + 1)];
            plan_channel(exp, placement, consumers, aic, aivs, &mut plan);
        }
    }
    plan.edges.sort_unstable();
    if !plan.edges.is_empty() {
        plan.flag_id = Some(policy.flag_id);
    }
    Ok(plan)
}

/// One AIC and its two AIVs: the greedy walk of the rule.
fn plan_channel(
    exp: &Expanded,
    placement: &Placement,
    consumers: &Csr,
    aic: CoreId,
    aivs: [CoreId; 2],
    plan: &mut FlagPlan,
) {
    let pos = |n: NodeId| placement.position[n];
    let core_of = |n: NodeId| placement.core_of[n];
    // Per AIV: (set index, queue position) of its flag consumers so far; the sets it has
    // consumed so far; the furthest position of a tile of it that some tile of the AIC's list up
    // to the current one depends on.
    let mut real: [Vec<(usize, u32)>; 2] = [Vec::new(), Vec::new()];
    let mut consumed = [0usize; 2];
    let mut reach: [Option<u32>; 2] = [None, None];
    let mut sets = 0usize;
    for &u in placement.queues.row(aic) {
        for &p in exp.dag.pred.row(u) {
            for s in 0..2 {
                if core_of(p) == aivs[s] {
                    reach[s] = reach[s].max(Some(pos(p)));
                }
            }
        }
        // u's kept consumer on each own AIV (the earliest, if the reduction kept several).
        let cand: [Option<NodeId>; 2] = std::array::from_fn(|s| {
            consumers.row(u).iter().copied().filter(|&v| core_of(v) == aivs[s]).min_by_key(|&v| pos(v))
        });
        if cand.iter().all(Option::is_none) {
            continue;
        }
        let j = sets + 1;
        let in_order = (0..2).all(|s| match (cand[s], real[s].last()) {
            (Some(v), Some(&(_, last))) => pos(v) > last,
            _ => true,
        });
        let bounded = j <= MAX_PENDING
            || (0..2).all(|s| {
                // The wait for set j - 15 on this AIV happens at its first flag consumer with a
                // set index in j-15 .. j-1; that consumer must finish before u's set.
                real[s]
                    .iter()
                    .find(|&&(i, _)| i + MAX_PENDING >= j)
                    .is_some_and(|&(_, at)| reach[s].is_some_and(|r| r >= at))
            });
        if !(in_order && bounded) {
            continue;
        }
        sets = j;
        plan.set_after[u] = true;
        for s in 0..2 {
            if let Some(v) = cand[s] {
                plan.waits_before[v] = u8::try_from(j - consumed[s]).expect("at most 16 waits per tile");
                consumed[s] = j;
                real[s].push((j, pos(v)));
                plan.edges.push((u, v));
            }
        }
    }
    let total = u32::try_from(sets).expect("sets fit u32");
    plan.totals[aic] = total;
    for a in aivs {
        plan.totals[a] = total;
    }
}

/// The counter plan of the dependencies the flag does not carry: `sync` without the flagged
/// edges, counters renumbered densely per rank in node order (as `plan_sync` numbers them).
/// Works from any plan, by its kept dependencies ([`kept_edges`]); the pipeline, whose `sync`
/// is numbered for exactly those, edits it instead (`without_flagged_counters`, which a test
/// checks against this).
pub fn without_flagged(exp: &Expanded, sync: &SyncPlan, plan: &FlagPlan) -> SyncPlan {
    if plan.edges.is_empty() {
        return sync.clone();
    }
    let kept = kept_edges(exp, sync);
    let nodes = exp.nodes();
    // `plan.edges` is sorted, as the rows are: walk both to drop the flagged edges.
    let mut flagged = plan.edges.iter().copied().peekable();
    let mut offsets = Vec::with_capacity(nodes + 1);
    let mut targets = Vec::with_capacity(kept.edges());
    offsets.push(0u32);
    for u in exp.space.node_ids() {
        for &v in kept.row(u) {
            while flagged.next_if(|&e| e < (u, v)).is_some() {}
            if flagged.peek() != Some(&(u, v)) {
                targets.push(v);
            }
        }
        offsets.push(targets.len() as u32);
    }
    super::counters::counters_of(exp, &Csr::from_parts(offsets, targets), sync.cross_edges_before)
}

/// [`without_flagged`] of `sync`, the counter plan [`counters_of`](super::counters::counters_of)
/// numbered for the kept dependencies, when `plan` flags some of them: the same plan, made by
/// editing `sync` rather than by rebuilding the kept dependencies and numbering them again.
/// A flagged dependency `u → v` takes one from `v`'s target and drops `u`'s signal to `v`'s
/// counter; a counter whose target falls to 0 goes, and the counters after it on its rank move
/// down to stay dense, in the same (node) order, so each node's signals stay sorted.
///
/// # Panics
/// If `sync` is not such a plan: a flagged dependency whose consumer has no wait, or whose
/// producer does not signal the consumer's counter.
pub(crate) fn without_flagged_counters(exp: &Expanded, sync: &SyncPlan, plan: &FlagPlan) -> SyncPlan {
    let nodes = exp.nodes();
    let mut waits = sync.waits.clone();
    for &(_, v) in &plan.edges {
        let wait = waits[v].as_mut().expect("a flagged dependency's consumer waits on a counter");
        wait.target -= 1;
    }
    // Per rank, where its old counter ids start in `renumbered`; per old counter, its new id.
    let mut first_counter = Vec::with_capacity(sync.counters_per_rank.len());
    let mut total = 0usize;
    for &n in sync.counters_per_rank.values() {
        first_counter.push(total);
        total += n as usize;
    }
    let mut renumbered = vec![CounterId::new(0); total];
    let mut counters_per_rank: IdVec<RankId, u32> = IdVec::filled(sync.counters_per_rank.len(), 0);
    for (v, w) in waits.iter_mut() {
        let Some(wait) = w else { continue };
        if wait.target == 0 {
            *w = None;
            continue;
        }
        let rank = exp.space.rank_of(v);
        let next = &mut counters_per_rank[rank];
        renumbered[first_counter[rank.index()] + wait.counter.index()] = CounterId::new(*next);
        wait.counter = CounterId::new(*next);
        *next += 1;
    }

    // `plan.edges` is sorted by producer, as the nodes are walked.
    let mut flagged = plan.edges.iter().copied().peekable();
    let mut dropped: Vec<Signal> = Vec::new();
    let mut signal_offsets = Vec::with_capacity(nodes + 1);
    let mut signal_list = Vec::with_capacity(sync.signal_list.len() - plan.edges.len());
    signal_offsets.push(0u32);
    for u in exp.space.node_ids() {
        dropped.clear();
        while let Some((_, v)) = flagged.next_if(|&(p, _)| p == u) {
            let wait = sync.waits[v].expect("a flagged dependency's consumer waits on a counter");
            dropped.push(Signal { rank: exp.space.rank_of(v), counter: wait.counter });
        }
        let before = signal_list.len();
        for &s in sync.signals(u) {
            if !dropped.contains(&s) {
                signal_list.push(Signal {
                    rank: s.rank,
                    counter: renumbered[first_counter[s.rank.index()] + s.counter.index()],
                });
            }
        }
        assert_eq!(
            before + sync.signals(u).len(),
            signal_list.len() + dropped.len(),
            "{u} signals every flagged consumer"
        );
        signal_offsets.push(u32::try_from(signal_list.len()).expect("signal count fits u32 (edges are limited)"));
    }
    SyncPlan {
        waits,
        signal_offsets,
        signal_list,
        counters_per_rank,
        cross_edges_before: sync.cross_edges_before,
        cross_edges_after: sync.cross_edges_after - plan.edges.len() as u64,
    }
}

/// The flag plan blob's `flag_id` word when no dependency uses a flag (`HPMOE_NO_FLAG` in
/// `hpmoe/abi.h`): part of the blob's format, not a value a [`FlagPlan`] holds.
const NO_FLAG: u32 = u32::MAX;

/// The flag plan blob (`NAME_flags.bin`, layout in `hpmoe/abi.h`) for a kernel table whose
/// entries follow `queues` (row `c`: the nodes global core `c` runs, in order; a
/// [`Placement`]'s queues), core after core.
pub fn plan_bytes(
    plan: &FlagPlan,
    queues: &Csr<CoreId, NodeId>,
    profile: &MachineProfile,
    table_checksum: u32,
) -> Vec<u8> {
    const CHECKSUM_AT: usize = 12; // hpmoe_flags_header.checksum; the CRC covers bytes 16..
    let cores = plan.totals.len();
    let entries = queues.edges();
    let total = (40 + 4 * cores + entries).div_ceil(4) * 4;
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(b"HPMOEFLG");
    let u32s = |out: &mut Vec<u8>, v: u32| out.extend_from_slice(&v.to_le_bytes());
    u32s(&mut out, 1); // format version
    u32s(&mut out, 0); // checksum, filled in last
    u32s(&mut out, total as u32);
    u32s(&mut out, cores as u32);
    u32s(&mut out, entries as u32);
    u32s(&mut out, plan.flag_id.map_or(NO_FLAG, u32::from));
    u32s(&mut out, table_checksum);
    u32s(&mut out, plan.edges.len() as u32);
    for &t in plan.totals.values() {
        u32s(&mut out, t);
    }
    for core in 0..profile.total_cores() {
        let kind = profile.kind_of_local(profile.split_core(core).1);
        for &n in queues.row(CoreId::new(core)) {
            out.push(match kind {
                CoreKind::Aic => u8::from(plan.set_after[n]),
                CoreKind::Aiv => plan.waits_before[n],
            });
        }
    }
    out.resize(total, 0);
    let crc = crc32fast::hash(&out[CHECKSUM_AT + 4..]);
    out[CHECKSUM_AT..CHECKSUM_AT + 4].copy_from_slice(&crc.to_le_bytes());
    out
}

/// The checksum a flag plan blob ([`plan_bytes`]) carries.
pub fn plan_checksum(bytes: &[u8]) -> Option<u32> {
    bytes.get(12..16).map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")))
}

/// Decodes a flag plan blob ([`plan_bytes`]) for `table`: per node, the sets after and waits
/// before it; per core, the totals. Checks the magic, version, size, CRC, shape, that the blob
/// names `table`'s checksum, that its flag id is one the kernel may use ([`check_flag_id`]),
/// that an AIC's op is 0 or 1, that an AIC's total is the sum of its ops and an AIV's total its
/// AIC's (the AIV drains the sets it did not wait for in its list after the list, so its
/// list waits at most that often), and that the padding is zero. The blob does not list the
/// flagged edges (only how many): [`FlagPlan::edges`] comes back empty.
pub fn decode_plan(bytes: &[u8], table: &crate::table::ScheduleTable) -> Result<FlagPlan, FlagPlanError> {
    let word = |at: usize| bytes.get(at..at + 4).map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")));
    let h = table.header();
    let (cores, per_rank) = (table.cores().len(), h.instances_per_rank);
    if bytes.get(..8) != Some(b"HPMOEFLG".as_slice()) || word(8) != Some(1) {
        return Err(FlagPlanError::NotAPlan);
    }
    let total = word(16).unwrap_or(0) as usize;
    if total != bytes.len() || total < 40 {
        return Err(FlagPlanError::Size { bytes: bytes.len(), header: total });
    }
    if word(12) != Some(crc32fast::hash(&bytes[16..])) {
        return Err(FlagPlanError::Crc);
    }
    if word(20) != Some(cores as u32) || word(24) != Some(h.entry_count) {
        return Err(FlagPlanError::Shape { cores, entries: h.entry_count });
    }
    if word(32) != Some(table.checksum()) {
        return Err(FlagPlanError::OtherTable);
    }
    let nodes = per_rank as usize * h.ranks as usize;
    let mut plan = FlagPlan::none(nodes, cores);
    plan.flag_id = match word(28) {
        Some(NO_FLAG) | None => None,
        Some(id) => {
            let id = u16::try_from(id).map_err(|_| FlagPlanError::FlagId(FlagIdError::OutOfRange(id)))?;
            check_flag_id(id).map_err(FlagPlanError::FlagId)?;
            Some(id)
        }
    };
    for (c, total) in plan.totals.iter_mut() {
        *total = word(40 + 4 * c.index()).ok_or(FlagPlanError::Truncated(FlagPlanPart::Totals))?;
    }
    let mut at = 40 + 4 * cores;
    for core in 0..cores as u32 {
        let rank = table.view().rank_of_core(core);
        let aic = table.view().core_kind(core) == CoreKind::Aic;
        let mut sum = 0u32;
        for e in table.core_entries(core) {
            let op = *bytes.get(at).ok_or(FlagPlanError::Truncated(FlagPlanPart::EntryOps))?;
            at += 1;
            let node = NodeId::new(rank * per_rank + e.instance);
            sum += u32::from(op);
            if aic {
                if op > 1 {
                    return Err(FlagPlanError::AicOp { core: CoreId::new(core), op });
                }
                plan.set_after[node] = op == 1;
            } else {
                plan.waits_before[node] = op;
            }
        }
        let total = plan.totals[CoreId::new(core)];
        if aic && sum != total {
            return Err(FlagPlanError::AicTotal { core: CoreId::new(core), total, sets: sum });
        }
        if !aic {
            // An AIV drains the rest of its AIC's sets after its list: its total is theirs.
            let local = core % h.cores_per_rank - h.aic_per_rank;
            let own_aic = core - core % h.cores_per_rank + local / h.aiv_per_aic.max(1);
            let sets = plan.totals.get(CoreId::new(own_aic)).copied().unwrap_or(0);
            if total != sets || sum > total {
                return Err(FlagPlanError::AivTotal {
                    core: CoreId::new(core),
                    list_waits: sum,
                    total,
                    aic: CoreId::new(own_aic),
                    sets,
                });
            }
        }
    }
    if plan.flag_id.is_none() && plan.totals.values().any(|&t| t > 0) {
        return Err(FlagPlanError::NoFlagId);
    }
    if bytes[at..].iter().any(|&b| b != 0) {
        return Err(FlagPlanError::Padding);
    }
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schedule::cost::SimpleCost;
    use crate::schedule::counters::plan_sync;
    use crate::schedule::list::list_schedule;
    use crate::schedule::testutil::{profile, random_expanded};

    /// The pipeline edits the counter plan; renumbering the dependencies the flags leave, as
    /// [`without_flagged`] does from any plan, must give the same one.
    #[test]
    fn editing_the_counters_gives_what_renumbering_the_left_dependencies_gives() {
        let (mut flagged, mut counters_dropped) = (0, 0);
        for seed in 0..300 {
            let ranks = 1 + (seed % 3) as u32;
            let exp = random_expanded(seed, ranks, 8, 12);
            for prof in [profile(1, 2, ranks), profile(3, 2, ranks)] {
                let placement = list_schedule(&exp, &prof, &SimpleCost::default());
                let sync = plan_sync(&exp, &placement);
                let plan = plan_flags(&exp, &placement, &sync, &prof, &FlagPolicy::default()).unwrap();
                if plan.edges.is_empty() {
                    continue;
                }
                flagged += 1;
                let edited = without_flagged_counters(&exp, &sync, &plan);
                assert_eq!(edited, without_flagged(&exp, &sync, &plan), "seed {seed}");
                assert_eq!(edited.signal_list.len() + plan.edges.len(), sync.signal_list.len(), "seed {seed}");
                let counters = |p: &SyncPlan| p.counters_per_rank.values().sum::<u32>();
                counters_dropped += usize::from(counters(&edited) < counters(&sync));
            }
        }
        assert!(flagged >= 100, "only {flagged} schedules flag a dependency");
        // Some lose a counter whose every dependency went to the flag (the renumbering path).
        assert!(counters_dropped >= 20, "only {counters_dropped} schedules drop a counter");
    }

    #[test]
    fn flag_ids_clear_of_the_libraries() {
        assert!(check_flag_id(15).is_ok());
        for id in 0..15 {
            assert!(check_flag_id(id).is_err(), "{id}");
        }
        assert_eq!(check_flag_id(16), Err(FlagIdError::OutOfRange(16)));
        assert!(check_flag_id(16).unwrap_err().to_string().contains("0..15"));
        assert!(check_flag_id(12).unwrap_err().to_string().contains("SyncAll"));
        assert!(check_flag_id(9).unwrap_err().to_string().contains("catlass"));
        assert_eq!(
            check_flag_id(0),
            Err(FlagIdError::Reserved { id: 0, lo: 0, hi: 7, owner: "the Matmul high-level API" })
        );
    }
}
