//! An independent certificate check of a schedule table: does running the table enforce every
//! dependency of the expanded taskflow, and does it run to the end?
//!
//! This is the trusted base of hpmoe. It reads only the instance DAG ([`Expanded`]), the
//! machine profile of the taskflow and the table's entries, and shares no code with the
//! scheduler, the sync reduction or the table builder, so a bug there cannot hide itself here.
//!
//! # What the table means
//!
//! Every core runs its entries in order. Before an entry's tile, the core waits until counter
//! `c` of its own rank is at least `target`; after the tile it adds 1 to each counter its
//! signals name. Counters start at 0 and only grow. With an optional [`FlagSync`], an AIC also
//! *sets* the hardware flag after some tiles and its own AIVs *wait* on it before some tiles:
//! the AIC's `j`-th set releases each own AIV's `j`-th wait.
//!
//! # The argument
//!
//! Write `a ⇒ b` ("`a` finishes before `b` starts, in every run") for the edges of the
//! *happens-before graph* `H`:
//!
//! * **core order**: `a` is just before `b` on the same core;
//! * **counter**: `a` signals the counter `b` waits on. This holds for every signaller only if
//!   the target equals the number of signals that can reach the counter (a lower target lets
//!   the wait pass before some signaller finished, a higher one never passes), so
//!   [`verify`] demands exactly that of every wait;
//! * **flag**: `a` does the AIC's `j`-th set and `b` does an own AIV's `j`-th wait.
//!
//! If `H` is acyclic, every entry runs: by induction along a topological order of `H`, each
//! entry's core predecessor finishes and all the signals and sets it waits for are sent. If
//! `H` has a cycle, its entries wait for each other forever. A dependency `u → v` of the DAG is
//! enforced iff `v` is reachable from `u` in `H`.
//!
//! Reachability is decided with vector clocks: walking `H` in topological order, each entry
//! gets, per core, one more than the last position on that core that happens before or at it
//! (the maximum over its `H` predecessors, then its own position). As a core's entries form a
//! chain in `H`, `u` reaches `v` iff `v`'s clock for `u`'s core exceeds `u`'s position.
//! Memory: one clock (a `u32` per core) per core, per waited counter and per flag setter.
//!
//! Flags also have a capacity: an AIV's flag holds at most [`FLAG_CAPACITY`] pending sets, so
//! set `j` must happen after each own AIV's wait `j - FLAG_CAPACITY` (that wait's entry must
//! reach the setter in `H`).

use crate::check::node_name;
use crate::expand::Expanded;
use crate::model::{CoreKind, Taskflow};
use crate::table::TableView;
use std::collections::{HashMap, VecDeque};
use std::fmt;

/// Pending sets an AIV's hardware flag holds; one more is a device error.
pub const FLAG_CAPACITY: u32 = 15;

/// The hardware-flag part of a kernel's synchronisation, per global node id (see the
/// [module docs](self)). Both slices have one element per node of the expanded taskflow.
#[derive(Clone, Copy, Debug)]
pub struct FlagSync<'a> {
    /// Per node: an AIC tile that sets its flag (bumping both own AIVs) after it runs.
    pub set_after: &'a [bool],
    /// Per node: the flag waits an AIV does before the tile.
    pub waits_before: &'a [u8],
}

/// What kind of fault [`verify`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CertFault {
    /// The table is for another machine or another instance space.
    Shape,
    /// An instance is on no core, on two, or on a core of the wrong kind, or an entry names
    /// no instance.
    Placement,
    /// A wait's target differs from the number of signals that can reach its counter.
    Target,
    /// A flag set or wait is on the wrong kind of core, or a wait has no matching set, or a
    /// set could overflow the flag.
    Flag,
    /// The entries wait for each other in a ring: the table deadlocks.
    Cycle,
    /// A dependency of the taskflow is not enforced by the table.
    Unenforced,
}

/// Why a table is not certified: the kind of fault, the nodes it involves (global node ids:
/// for [`CertFault::Unenforced`] the producer then the consumer, for [`CertFault::Cycle`] the
/// ring in order) and a message naming them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CertError {
    pub fault: CertFault,
    pub nodes: Vec<u32>,
    pub message: String,
}

impl fmt::Display for CertError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "schedule table not certified: {}", self.message)
    }
}

impl std::error::Error for CertError {}

/// What a certified table was found to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Certificate {
    /// Dependencies of the DAG, all enforced.
    pub dependencies: u64,
    /// Edges of the happens-before graph (core order, counter and flag edges).
    pub happens_before_edges: u64,
}

/// A counter: (rank, counter id).
type CounterKey = (u32, u32);

/// Where one node runs.
#[derive(Clone, Copy)]
struct Slot {
    core: u32,
    pos: u32,
}

/// Decides whether `table` enforces every dependency of `exp`, the expansion of `tf`, and runs
/// to the end (see the [module docs](self)); `flags` adds hardware-flag synchronisation.
/// Works on any view, validated or not; never panics on a malformed one.
///
/// # Errors
/// The first fault found, naming the instances (family, grid coordinates, rank) involved.
pub fn verify(
    tf: &Taskflow,
    exp: &Expanded,
    table: TableView<'_>,
    flags: Option<FlagSync<'_>>,
) -> Result<Certificate, CertError> {
    let name = |n: u32| node_name(tf, &exp.space, n);
    let fail = |fault, nodes: Vec<u32>, message: String| Err(CertError { fault, nodes, message });
    let nodes = exp.nodes();
    let profile = &tf.profile;
    let cores_per_rank = profile.aic_per_rank * (1 + profile.aiv_per_aic);
    let h = &table.header;
    if h.ranks != profile.ranks || h.cores_per_rank != cores_per_rank || h.instances_per_rank != exp.space.per_rank {
        let message = format!(
            "the table has {} ranks, {} cores per rank and {} instances per rank; the taskflow {}, {} and {}",
            h.ranks, h.cores_per_rank, h.instances_per_rank, profile.ranks, cores_per_rank, exp.space.per_rank
        );
        return fail(CertFault::Shape, vec![], message);
    }
    let core_count = (profile.ranks * cores_per_rank) as usize;
    if table.cores.len() != core_count || exp.space.ranks != profile.ranks {
        return fail(CertFault::Shape, vec![], format!("the table has {} cores, not {core_count}", table.cores.len()));
    }
    let kind_of_core = |core: u32| {
        if core % cores_per_rank < profile.aic_per_rank { CoreKind::Aic } else { CoreKind::Aiv }
    };

    // Every instance on exactly one core of its kind; per core, its nodes in order.
    let mut slot: Vec<Option<Slot>> = vec![None; nodes];
    let mut queues: Vec<Vec<u32>> = vec![Vec::new(); core_count];
    let mut waits: Vec<Option<(CounterKey, u32)>> = vec![None; nodes];
    let mut signals: Vec<Vec<CounterKey>> = vec![Vec::new(); nodes];
    for (core, rec) in table.cores.iter().enumerate() {
        let core = core as u32;
        let rank = core / cores_per_rank;
        let first = rec.first_entry as usize;
        let Some(entries) = table.entries.get(first..first.saturating_add(rec.entry_count as usize)) else {
            return fail(CertFault::Placement, vec![], format!("core {core}'s entries lie outside the table"));
        };
        for e in entries {
            if e.instance >= exp.space.per_rank {
                let message = format!("core {core} runs instance {}, which does not exist", e.instance);
                return fail(CertFault::Placement, vec![], message);
            }
            let node = rank * exp.space.per_rank + e.instance;
            if let Some(other) = slot[node as usize] {
                let message = format!("{} is on core {} and on core {core}", name(node), other.core);
                return fail(CertFault::Placement, vec![node], message);
            }
            if exp.core_kind(node) != kind_of_core(core) {
                let message = format!("{} runs on core {core}, a core of the other kind", name(node));
                return fail(CertFault::Placement, vec![node], message);
            }
            let queue = &mut queues[core as usize];
            slot[node as usize] = Some(Slot { core, pos: queue.len() as u32 });
            queue.push(node);
            waits[node as usize] = e.wait().map(|w| ((rank, w.counter), w.target));
            let first = e.first_signal as usize;
            let Some(sent) = table.signals.get(first..first.saturating_add(e.signal_count as usize)) else {
                return fail(
                    CertFault::Placement,
                    vec![node],
                    format!("{}'s signals lie outside the table", name(node)),
                );
            };
            signals[node as usize] = sent.iter().map(|s| (u32::from(s.rank), s.counter)).collect();
        }
    }
    let mut slots = Vec::with_capacity(nodes);
    for (node, s) in slot.iter().enumerate() {
        match s {
            Some(s) => slots.push(*s),
            None => {
                return fail(CertFault::Placement, vec![node as u32], format!("{} is on no core", name(node as u32)));
            }
        }
    }

    // Counters: every wait's target is exactly the number of signals that can reach it.
    let mut sent_to: HashMap<CounterKey, u32> = HashMap::new();
    for key in signals.iter().flatten() {
        *sent_to.entry(*key).or_default() += 1;
    }
    let mut waiters: HashMap<CounterKey, Vec<u32>> = HashMap::new();
    for (node, w) in waits.iter().enumerate() {
        let Some((key, target)) = *w else { continue };
        let sent = sent_to.get(&key).copied().unwrap_or(0);
        if target != sent {
            let message = format!(
                "{} waits for counter {} of rank {} to reach {target}, but {sent} signals can reach it{}",
                name(node as u32),
                key.1,
                key.0,
                if target < sent { " (the wait can pass early)" } else { " (the wait never passes)" }
            );
            return fail(CertFault::Target, vec![node as u32], message);
        }
        waiters.entry(key).or_default().push(node as u32);
    }

    // Flags: the j-th set of an AIC releases each own AIV's j-th wait.
    let mut flag_setter: Vec<Option<u32>> = vec![None; nodes];
    let mut flag_released: Vec<Vec<u32>> = vec![Vec::new(); nodes];
    let mut capacity_checks: Vec<(u32, u32)> = Vec::new();
    if let Some(f) = flags {
        if f.set_after.len() != nodes || f.waits_before.len() != nodes {
            return fail(CertFault::Flag, vec![], format!("the flag plan is not for {nodes} nodes"));
        }
        for (node, s) in slots.iter().enumerate() {
            let kind = kind_of_core(s.core);
            if (f.set_after[node] && kind != CoreKind::Aic) || (f.waits_before[node] > 0 && kind != CoreKind::Aiv) {
                let message = format!("{} sets or waits on a flag on the wrong kind of core", name(node as u32));
                return fail(CertFault::Flag, vec![node as u32], message);
            }
        }
        for (aic, queue) in queues.iter().enumerate() {
            let aic = aic as u32;
            if kind_of_core(aic) != CoreKind::Aic {
                continue;
            }
            let sets: Vec<u32> = queue.iter().copied().filter(|&n| f.set_after[n as usize]).collect();
            let rank_base = aic - aic % cores_per_rank;
            let local_aic = aic % cores_per_rank;
            for k in 0..profile.aiv_per_aic {
                let aiv = rank_base + profile.aic_per_rank + local_aic * profile.aiv_per_aic + k;
                let mut waited = 0u32;
                let mut wait_entry: Vec<u32> = Vec::new();
                for &n in &queues[aiv as usize] {
                    for _ in 0..f.waits_before[n as usize] {
                        waited += 1;
                        wait_entry.push(n);
                    }
                    if waited == 0 || f.waits_before[n as usize] == 0 {
                        continue;
                    }
                    let Some(&setter) = sets.get(waited as usize - 1) else {
                        let message =
                            format!("{} waits for flag set {waited}, but its AIC sets {}", name(n), sets.len());
                        return fail(CertFault::Flag, vec![n], message);
                    };
                    flag_setter[n as usize] = Some(setter);
                    flag_released[setter as usize].push(n);
                }
                for (j, &setter) in sets.iter().enumerate().skip(FLAG_CAPACITY as usize) {
                    match wait_entry.get(j - FLAG_CAPACITY as usize) {
                        Some(&waiter) => capacity_checks.push((waiter, setter)),
                        None => {
                            let message = format!(
                                "{} is flag set {} of its AIC, but core {aiv} waits only {waited} times in its list, so more than {FLAG_CAPACITY} sets can be pending",
                                name(setter),
                                j + 1
                            );
                            return fail(CertFault::Flag, vec![setter], message);
                        }
                    }
                }
            }
        }
    }

    // Happens-before graph H: in-degrees, then Kahn's walk with vector clocks.
    let mut indegree = vec![0u32; nodes];
    let mut edges = 0u64;
    for node in 0..nodes {
        let from_core = u32::from(slots[node].pos > 0);
        let from_counter = waits[node].map_or(0, |(key, _)| sent_to.get(&key).copied().unwrap_or(0));
        let from_flag = u32::from(flag_setter[node].is_some());
        indegree[node] = from_core + from_counter + from_flag;
        edges += u64::from(indegree[node]);
    }
    let mut core_clock: Vec<Vec<u32>> = vec![vec![0; core_count]; core_count];
    let mut counter_clock: HashMap<CounterKey, Vec<u32>> = waiters.keys().map(|&k| (k, vec![0; core_count])).collect();
    let mut setter_clock: HashMap<u32, Vec<u32>> = HashMap::new();
    let mut ready: VecDeque<u32> = (0..nodes as u32).filter(|&n| indegree[n as usize] == 0).collect();
    let mut done = 0usize;
    let mut dependencies = 0u64;
    while let Some(v) = ready.pop_front() {
        done += 1;
        let Slot { core, pos } = slots[v as usize];
        let mut clock = core_clock[core as usize].clone();
        let mut merge = |other: &[u32]| clock.iter_mut().zip(other).for_each(|(c, o)| *c = (*c).max(*o));
        if let Some((key, _)) = waits[v as usize] {
            merge(&counter_clock[&key]);
        }
        if let Some(setter) = flag_setter[v as usize] {
            merge(&setter_clock[&setter]);
        }
        clock[core as usize] = pos + 1;
        for &u in exp.dag.pred.row(v) {
            dependencies += 1;
            let s = slots[u as usize];
            if clock[s.core as usize] <= s.pos {
                let message = format!(
                    "{} must finish before {} starts, but nothing in the table orders them ({} is entry {} of core {}, {} entry {} of core {})",
                    name(u),
                    name(v),
                    name(u),
                    s.pos,
                    s.core,
                    name(v),
                    pos,
                    core
                );
                return fail(CertFault::Unenforced, vec![u, v], message);
            }
        }
        let mut release = |n: u32, ready: &mut VecDeque<u32>| {
            indegree[n as usize] -= 1;
            if indegree[n as usize] == 0 {
                ready.push_back(n);
            }
        };
        for key in &signals[v as usize] {
            if let Some(c) = counter_clock.get_mut(key) {
                c.iter_mut().zip(&clock).for_each(|(c, o)| *c = (*c).max(*o));
            }
            for &w in waiters.get(key).map_or(&[][..], Vec::as_slice) {
                release(w, &mut ready);
            }
        }
        for &w in &flag_released[v as usize] {
            release(w, &mut ready);
        }
        if let Some(&next) = queues[core as usize].get(pos as usize + 1) {
            release(next, &mut ready);
        }
        if !flag_released[v as usize].is_empty() || flags.is_some_and(|f| f.set_after[v as usize]) {
            setter_clock.insert(v, clock.clone());
        }
        core_clock[core as usize] = clock;
    }
    if done < nodes {
        let ring = find_ring(&indegree, &slots, &queues, &waits, &signals, &flag_setter);
        let names: Vec<String> = ring.iter().map(|&n| name(n)).collect();
        let message = format!("the entries wait for each other in a ring (deadlock): {}", names.join(" -> "));
        return fail(CertFault::Cycle, ring, message);
    }
    for (waiter, setter) in capacity_checks {
        let w = slots[waiter as usize];
        if setter_clock[&setter][w.core as usize] <= w.pos {
            let message = format!(
                "{} sets the flag before {} has taken an earlier set, so more than {FLAG_CAPACITY} sets can be pending",
                name(setter),
                name(waiter)
            );
            return fail(CertFault::Flag, vec![waiter, setter], message);
        }
    }
    Ok(Certificate { dependencies, happens_before_edges: edges })
}

/// A ring of `H` among the entries Kahn's walk could not reach (those with `indegree > 0`):
/// each of them has an unfinished `H` predecessor, so walking predecessors must repeat a node.
/// Returned in run order, first node repeated at the end.
fn find_ring(
    indegree: &[u32],
    slots: &[Slot],
    queues: &[Vec<u32>],
    waits: &[Option<(CounterKey, u32)>],
    signals: &[Vec<CounterKey>],
    flag_setter: &[Option<u32>],
) -> Vec<u32> {
    let stuck = |n: u32| indegree[n as usize] > 0;
    let stuck_pred = |v: u32| -> u32 {
        let s = slots[v as usize];
        if s.pos > 0 {
            let prev = queues[s.core as usize][s.pos as usize - 1];
            if stuck(prev) {
                return prev;
            }
        }
        if let Some(setter) = flag_setter[v as usize].filter(|&n| stuck(n)) {
            return setter;
        }
        let key = waits[v as usize].map(|(k, _)| k);
        (0..signals.len() as u32)
            .find(|&u| stuck(u) && signals[u as usize].iter().any(|k| Some(*k) == key))
            .expect("a stuck entry has a stuck predecessor")
    };
    let start = (0..indegree.len() as u32).find(|&n| stuck(n)).expect("some entry is stuck");
    let mut seen = HashMap::new();
    let mut path = vec![start];
    let mut v = start;
    loop {
        seen.insert(v, path.len() - 1);
        v = stuck_pred(v);
        if let Some(&at) = seen.get(&v) {
            let mut ring: Vec<u32> = path[at..].to_vec();
            ring.reverse();
            ring.push(ring[0]);
            return ring;
        }
        path.push(v);
    }
}
