//! The happens-before graph `H` of a table (see the [module docs](super)): reading the table
//! into it — checking the shape, the placement, the counter targets and the flag waits on the
//! way — and a topological order of it, or a ring when it has none.
//!
//! Counter and flag edges are kept as *channels*: a waited counter, or an AIC's flag set that
//! some AIV wait takes, is one channel; each signal (or set) is a send on it, each wait a
//! receive, and `H` has an edge from every send to every receive of the channel.

use super::{CertError, CertFault, FLAG_CAPACITY, FlagSync};
use crate::check::node_name;
use crate::expand::Expanded;
use crate::ids::{CounterId, Id, NodeId, RankId};
use crate::limits::MAX_TASKS_PER_CORE;
use crate::model::{CoreKind, Taskflow};
use crate::table::{SignalRecord, TableView};
use smallvec::SmallVec;
use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};

/// A counter: (rank, counter id).
type CounterKey = (RankId, CounterId);

/// Maps keyed by counters or nodes, with a cheap hash (the keys are small integers; the
/// default hasher's resistance to chosen keys is not needed to stay correct, only fast).
type Map<K, V> = HashMap<K, V, BuildHasherDefault<IntHash>>;

/// A multiplicative hash of the integers written into it.
#[derive(Clone, Copy, Debug, Default)]
struct IntHash(u64);

impl Hasher for IntHash {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        bytes.iter().for_each(|&b| self.write_u64(u64::from(b)));
    }
    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(26) ^ n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// A clock entry: one more than a position in a core's list. A core holds at most
/// [`MAX_TASKS_PER_CORE`] entries (checked on reading), so it fits.
pub(super) type Tick = u16;
const _: () = assert!(MAX_TASKS_PER_CORE <= Tick::MAX as u32);

/// Where one node runs: its core and its position in the core's list.
#[derive(Clone, Copy, Debug)]
pub(super) struct Slot {
    pub core: u32,
    pub pos: u32,
}

/// The happens-before graph of a table, per node of the expanded taskflow.
#[derive(Debug)]
pub(super) struct Graph {
    /// Cores of all ranks.
    pub core_count: usize,
    /// Per node: where it runs.
    pub slots: Vec<Slot>,
    /// Per core: its nodes in run order.
    pub queues: Vec<Vec<u32>>,
    /// Per node: the channels it sends on, once per signal (or set).
    pub sends: Vec<SmallVec<[u32; 4]>>,
    /// Per node: the channels it receives from (its counter wait, its flag wait).
    pub receives: Vec<[Option<u32>; 2]>,
    /// Per channel: the nodes that receive from it.
    pub receivers: Vec<SmallVec<[u32; 2]>>,
    /// Per channel: its sends.
    pub sent: Vec<u32>,
    /// Flag capacity: `(setter, waiter)` pairs where `waiter`'s entry must happen before
    /// `setter` finishes, sorted by setter.
    pub capacity: Vec<(u32, u32)>,
}

impl Graph {
    /// Reads `table` against `exp`: the shape (machine, families, instance space), every
    /// instance on exactly one core of its kind, every counter wait's target equal to the
    /// signals that can reach it, every flag set on an AIC and every flag wait on an AIV with a
    /// set to take.
    pub fn read(
        tf: &Taskflow,
        exp: &Expanded,
        table: TableView<'_>,
        flags: Option<FlagSync<'_>>,
    ) -> Result<Graph, CertError> {
        let name = |n: u32| node_name(tf, &exp.space, NodeId::new(n));
        let fail = |fault, nodes: Vec<u32>, message: String| Err(CertError { fault, nodes, message });
        check_shape(tf, exp, table)?;
        let nodes = exp.nodes();
        let profile = &tf.profile;
        let cores_per_rank = table.header.cores_per_rank;
        let core_count = table.cores.len();
        let kind_of_core = |core: u32| {
            if core % cores_per_rank < profile.aic_per_rank { CoreKind::Aic } else { CoreKind::Aiv }
        };

        // Every instance on exactly one core of its kind; per core, its nodes in order.
        let mut slot: Vec<Option<Slot>> = vec![None; nodes];
        let mut queues: Vec<Vec<u32>> = vec![Vec::new(); core_count];
        let mut waits: Vec<Option<(CounterKey, u32)>> = vec![None; nodes];
        let mut signals: Vec<&[SignalRecord]> = vec![&[]; nodes];
        for (core, rec) in table.cores.iter().enumerate() {
            let core = core as u32;
            let rank = core / cores_per_rank;
            let rank_id = RankId::new(rank);
            let first = rec.first_entry as usize;
            let Some(entries) = table.entries.get(first..first.saturating_add(rec.entry_count as usize)) else {
                return fail(CertFault::Placement, vec![], format!("core {core}'s entries lie outside the table"));
            };
            if entries.len() > MAX_TASKS_PER_CORE as usize {
                let message = format!("core {core} has {} entries, more than {MAX_TASKS_PER_CORE}", entries.len());
                return fail(CertFault::Placement, vec![], message);
            }
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
                if exp.core_kind(NodeId::new(node)) != kind_of_core(core) {
                    let message = format!("{} runs on core {core}, a core of the other kind", name(node));
                    return fail(CertFault::Placement, vec![node], message);
                }
                let queue = &mut queues[core as usize];
                slot[node as usize] = Some(Slot { core, pos: queue.len() as u32 });
                queue.push(node);
                waits[node as usize] = e.wait().map(|w| ((rank_id, w.counter), w.target));
                let first = e.first_signal as usize;
                let Some(sent) = table.signals.get(first..first.saturating_add(e.signal_count as usize)) else {
                    let message = format!("{}'s signals lie outside the table", name(node));
                    return fail(CertFault::Placement, vec![node], message);
                };
                signals[node as usize] = sent;
            }
        }
        let mut slots = Vec::with_capacity(nodes);
        for (node, s) in slot.iter().enumerate() {
            match s {
                Some(s) => slots.push(*s),
                None => {
                    let message = format!("{} is on no core", name(node as u32));
                    return fail(CertFault::Placement, vec![node as u32], message);
                }
            }
        }

        // Counters: every wait's target is exactly the number of signals that can reach it;
        // each waited counter is a channel.
        // A signal to the reserved counter id (a corrupt table) reaches no wait.
        let key = |s: &SignalRecord| Some((RankId::new(s.rank.into()), CounterId::try_new(s.counter)?));
        let mut sent_to: Map<CounterKey, u32> = Map::default();
        for key in signals.iter().copied().flatten().filter_map(key) {
            *sent_to.entry(key).or_default() += 1;
        }
        let mut channel_of: Map<CounterKey, u32> = Map::default();
        let mut receives: Vec<[Option<u32>; 2]> = vec![[None, None]; nodes];
        let mut receivers: Vec<SmallVec<[u32; 2]>> = Vec::new();
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
            let ch = *channel_of.entry(key).or_insert_with(|| {
                receivers.push(SmallVec::new());
                receivers.len() as u32 - 1
            });
            receivers[ch as usize].push(node as u32);
            receives[node][0] = Some(ch);
        }
        let mut sends: Vec<SmallVec<[u32; 4]>> = signals
            .iter()
            .map(|sent| sent.iter().filter_map(|s| channel_of.get(&key(s)?).copied()).collect())
            .collect();

        // Flags: the j-th set of an AIC releases each own AIV's j-th wait; a node whose waits
        // take sets receives from the channel of the last set it takes.
        let mut capacity: Vec<(u32, u32)> = Vec::new();
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
            let mut channel_of_setter: Map<u32, u32> = Map::default();
            for aic in (0..core_count as u32).filter(|&c| kind_of_core(c) == CoreKind::Aic) {
                let sets: Vec<u32> =
                    queues[aic as usize].iter().copied().filter(|&n| f.set_after[n as usize]).collect();
                let rank_base = aic - aic % cores_per_rank;
                let local_aic = aic % cores_per_rank;
                for k in 0..profile.aiv_per_aic {
                    let aiv = rank_base + profile.aic_per_rank + local_aic * profile.aiv_per_aic + k;
                    let mut taken: Vec<u32> = Vec::new(); // per set taken, the entry that waits for it
                    for &n in &queues[aiv as usize] {
                        let waits = f.waits_before[n as usize];
                        if waits == 0 {
                            continue;
                        }
                        taken.extend(std::iter::repeat_n(n, usize::from(waits)));
                        let Some(&setter) = sets.get(taken.len() - 1) else {
                            let message = format!(
                                "{} waits for flag set {}, but its AIC sets {}",
                                name(n),
                                taken.len(),
                                sets.len()
                            );
                            return fail(CertFault::Flag, vec![n], message);
                        };
                        let ch = *channel_of_setter.entry(setter).or_insert_with(|| {
                            receivers.push(SmallVec::new());
                            sends[setter as usize].push(receivers.len() as u32 - 1);
                            receivers.len() as u32 - 1
                        });
                        receivers[ch as usize].push(n);
                        receives[n as usize][1] = Some(ch);
                    }
                    for (j, &setter) in sets.iter().enumerate().skip(FLAG_CAPACITY as usize) {
                        match taken.get(j - FLAG_CAPACITY as usize) {
                            Some(&waiter) => capacity.push((setter, waiter)),
                            None => {
                                let message = format!(
                                    "{} is flag set {} of its AIC, but core {aiv} waits only {} times in its list, so more than {FLAG_CAPACITY} sets can be pending",
                                    name(setter),
                                    j + 1,
                                    taken.len()
                                );
                                return fail(CertFault::Flag, vec![setter], message);
                            }
                        }
                    }
                }
            }
            capacity.sort_unstable();
        }
        let mut sent = vec![0u32; receivers.len()];
        for ch in sends.iter().flatten() {
            sent[*ch as usize] += 1;
        }
        Ok(Graph { core_count, slots, queues, sends, receives, receivers, sent, capacity })
    }

    /// Edges of `H`: core order, then every send to every receive of its channel.
    pub fn edges(&self) -> u64 {
        let core = self.slots.iter().filter(|s| s.pos > 0).count() as u64;
        core + self.receives.iter().flatten().flatten().map(|&ch| u64::from(self.sent[ch as usize])).sum::<u64>()
    }

    /// The `(setter, waiter)` capacity pairs of `setter`.
    pub fn capacity_of(&self, setter: u32) -> &[(u32, u32)] {
        let start = self.capacity.partition_point(|&(s, _)| s < setter);
        let end = self.capacity.partition_point(|&(s, _)| s <= setter);
        &self.capacity[start..end]
    }

    /// The nodes in an order where each comes after all its `H` predecessors (Kahn's walk), or,
    /// when `H` has a cycle, a ring of it: in run order, its first node repeated at the end.
    pub fn order(&self) -> Result<Vec<u32>, Vec<u32>> {
        let nodes = self.slots.len();
        let mut indegree: Vec<u32> = (0..nodes)
            .map(|v| {
                let from_channels: u32 = self.receives[v].iter().flatten().map(|&ch| self.sent[ch as usize]).sum();
                u32::from(self.slots[v].pos > 0) + from_channels
            })
            .collect();
        let mut ready: VecDeque<u32> = (0..nodes as u32).filter(|&n| indegree[n as usize] == 0).collect();
        let mut order = Vec::with_capacity(nodes);
        while let Some(v) = ready.pop_back() {
            order.push(v);
            let mut release = |n: u32| {
                indegree[n as usize] -= 1;
                if indegree[n as usize] == 0 {
                    ready.push_back(n);
                }
            };
            for &ch in &self.sends[v as usize] {
                self.receivers[ch as usize].iter().for_each(|&w| release(w));
            }
            let Slot { core, pos } = self.slots[v as usize];
            if let Some(&next) = self.queues[core as usize].get(pos as usize + 1) {
                release(next);
            }
        }
        if order.len() == nodes { Ok(order) } else { Err(self.ring(&indegree)) }
    }

    /// A ring of `H` among the nodes Kahn's walk could not reach (`indegree > 0`): each of them
    /// has an unreached `H` predecessor, so walking predecessors must repeat a node.
    fn ring(&self, indegree: &[u32]) -> Vec<u32> {
        let stuck = |n: u32| indegree[n as usize] > 0;
        let mut senders: Vec<Vec<u32>> = vec![Vec::new(); self.receivers.len()];
        for (u, chs) in self.sends.iter().enumerate() {
            chs.iter().for_each(|&ch| senders[ch as usize].push(u as u32));
        }
        let stuck_pred = |v: u32| -> u32 {
            let s = self.slots[v as usize];
            if s.pos > 0 {
                let prev = self.queues[s.core as usize][s.pos as usize - 1];
                if stuck(prev) {
                    return prev;
                }
            }
            self.receives[v as usize]
                .iter()
                .flatten()
                .find_map(|&ch| senders[ch as usize].iter().copied().find(|&u| stuck(u)))
                .expect("a stuck node has a stuck predecessor")
        };
        let start = (0..indegree.len() as u32).find(|&n| stuck(n)).expect("some node is stuck");
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
}

/// The table is for `tf`'s machine and instance space: the same ranks and cores, and family by
/// family the same name, core kind, grid and instance ids (the device decodes an entry's tile
/// and coordinates from the family records, so they must be the ones the DAG is about).
fn check_shape(tf: &Taskflow, exp: &Expanded, table: TableView<'_>) -> Result<(), CertError> {
    let fail = |message: String| Err(CertError { fault: CertFault::Shape, nodes: vec![], message });
    let (p, h) = (&tf.profile, &table.header);
    let table_has = (h.ranks, h.aic_per_rank, h.aiv_per_aic, h.cores_per_rank, h.instances_per_rank);
    let cores_per_rank = p.aic_per_rank * (1 + p.aiv_per_aic);
    let taskflow_has = (p.ranks, p.aic_per_rank, p.aiv_per_aic, cores_per_rank, exp.space.per_rank);
    if table_has != taskflow_has || exp.space.ranks != p.ranks {
        return fail(format!(
            "the table has (ranks, AIC per rank, AIV per AIC, cores per rank, instances per rank) {table_has:?}, the taskflow {taskflow_has:?}"
        ));
    }
    if table.cores.len() != (p.ranks * cores_per_rank) as usize {
        return fail(format!("the table has {} cores, not {}", table.cores.len(), p.ranks * cores_per_rank));
    }
    let families = exp.space.families.len();
    if table.families.len() != families || tf.families.len() != families || table.family_names().count() != families {
        let message =
            format!("the table has {} tile families, the taskflow {}", table.families.len(), exp.space.families.len());
        return fail(message);
    }
    for (i, ((rec, span), table_name)) in
        table.families.iter().zip(&exp.space.families).zip(table.family_names()).enumerate()
    {
        let family = &tf.families[i];
        let same = table_name == family.name
            && rec.kind() == Some(exp.family_core[i])
            && rec.grid() == span.extents.as_slice()
            && (rec.first_instance, rec.instance_count) == (span.first, span.count);
        if !same {
            return fail(format!(
                "family {i} is `{table_name}` ({:?}, grid {:?}, instances {}..+{}) in the table, `{}` ({:?}, grid {:?}, instances {}..+{}) in the taskflow",
                rec.kind(),
                rec.grid(),
                rec.first_instance,
                rec.instance_count,
                family.name,
                exp.family_core[i],
                span.extents.as_slice(),
                span.first,
                span.count
            ));
        }
    }
    Ok(())
}
