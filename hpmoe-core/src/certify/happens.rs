//! The happens-before graph `H` of a table (see the [module docs](super)): reading the table
//! into it — checking the shape, the placement, the counter targets and the flag waits on the
//! way — and a topological order of it, or a ring when it has none.
//!
//! Counter and flag edges are kept as *channels*: a waited counter, or an AIC's flag set that
//! some AIV wait takes, is one channel; each signal (or set) is a send on it, each wait a
//! receive, and `H` has an edge from every send to every receive of the channel.

use super::error::{FamilyRecord, Machine};
use super::{CertDetail, CertError, FLAG_CAPACITY, FlagSync};
use crate::check::node_name;
use crate::expand::Expanded;
use crate::ids::{CoreId, CounterId, Id, IdVec, NodeId, RankId};
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

crate::define_id! {
    /// A channel of `H`: a waited counter, or an AIC's flag set that AIV waits take.
    pub(super) struct ChannelId;
}

/// A clock entry: one more than a position in a core's list. A core holds at most
/// [`MAX_TASKS_PER_CORE`] entries (checked on reading), so it fits.
pub(super) type Tick = u16;
const _: () = assert!(MAX_TASKS_PER_CORE <= Tick::MAX as u32);

/// Where one node runs: its core and its position in the core's list.
#[derive(Clone, Copy, Debug)]
pub(super) struct Slot {
    pub core: CoreId,
    pub pos: u32,
}

/// The happens-before graph of a table, per node of the expanded taskflow.
#[derive(Debug)]
pub(super) struct Graph {
    /// Per node: where it runs.
    pub slots: IdVec<NodeId, Slot>,
    /// Per core (of all ranks): its nodes in run order.
    pub queues: IdVec<CoreId, Vec<NodeId>>,
    /// Per node: the channels it sends on, once per signal (or set).
    pub sends: IdVec<NodeId, SmallVec<[ChannelId; 4]>>,
    /// Per node: the channels it receives from (its counter wait, its flag wait).
    pub receives: IdVec<NodeId, [Option<ChannelId>; 2]>,
    /// Per channel: the nodes that receive from it.
    pub receivers: IdVec<ChannelId, SmallVec<[NodeId; 2]>>,
    /// Per channel: its sends.
    pub sent: IdVec<ChannelId, u32>,
    /// Flag capacity: `(setter, waiter)` pairs where `waiter`'s entry must happen before
    /// `setter` finishes, sorted by setter.
    pub capacity: Vec<(NodeId, NodeId)>,
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
        let name = |n: NodeId| node_name(tf, &exp.space, n);
        let fail = |nodes: Vec<NodeId>, detail: CertDetail| Err(CertError::new(nodes, detail));
        check_shape(tf, exp, table)?;
        let nodes = exp.nodes();
        let profile = &tf.profile;
        let cores_per_rank = table.header.cores_per_rank;
        let kind_of_core = |core: CoreId| {
            if core.raw() % cores_per_rank < profile.aic_per_rank { CoreKind::Aic } else { CoreKind::Aiv }
        };

        // Every instance on exactly one core of its kind; per core, its nodes in order.
        let mut slot: IdVec<NodeId, Option<Slot>> = IdVec::filled(nodes, None);
        let mut queues: IdVec<CoreId, Vec<NodeId>> = IdVec::filled(table.cores.len(), Vec::new());
        let mut waits: IdVec<NodeId, Option<(CounterKey, u32)>> = IdVec::filled(nodes, None);
        let mut signals: IdVec<NodeId, &[SignalRecord]> = IdVec::filled(nodes, &[]);
        for (core, rec) in table.cores.iter().enumerate() {
            let core = CoreId::from_index(core);
            let rank = core.raw() / cores_per_rank;
            let rank_id = RankId::new(rank);
            let first = rec.first_entry as usize;
            let Some(entries) = table.entries.get(first..first.saturating_add(rec.entry_count as usize)) else {
                return fail(vec![], CertDetail::EntriesOutside { core });
            };
            if entries.len() > MAX_TASKS_PER_CORE as usize {
                return fail(vec![], CertDetail::TooManyEntries { core, entries: entries.len() });
            }
            for e in entries {
                if e.instance >= exp.space.per_rank {
                    return fail(vec![], CertDetail::NoSuchInstance { core, instance: e.instance });
                }
                let node = NodeId::new(rank * exp.space.per_rank + e.instance);
                if let Some(other) = slot[node] {
                    return fail(
                        vec![node],
                        CertDetail::TwoCores { node: name(node), first: other.core, second: core },
                    );
                }
                if exp.core_kind(node) != kind_of_core(core) {
                    return fail(vec![node], CertDetail::WrongKind { node: name(node), core });
                }
                let queue = &mut queues[core];
                slot[node] = Some(Slot { core, pos: queue.len() as u32 });
                queue.push(node);
                waits[node] = e.wait().map(|w| ((rank_id, w.counter), w.target));
                let first = e.first_signal as usize;
                let Some(sent) = table.signals.get(first..first.saturating_add(e.signal_count as usize)) else {
                    return fail(vec![node], CertDetail::SignalsOutside { node: name(node) });
                };
                signals[node] = sent;
            }
        }
        let mut slots = IdVec::with_capacity(nodes);
        for (node, s) in slot.iter() {
            match s {
                Some(s) => slots.push(*s),
                None => return fail(vec![node], CertDetail::NoCore { node: name(node) }),
            };
        }

        // Counters: each waited counter is a channel, and every wait's target is exactly the
        // number of signals that can reach it: the sends on its channel. (Signals to a counter
        // nobody waits on reach no wait; nor does one to the reserved counter id, in a corrupt
        // table.)
        let key = |s: &SignalRecord| Some((RankId::new(s.rank.into()), CounterId::try_new(s.counter)?));
        let mut channel_of: Map<CounterKey, ChannelId> = Map::default();
        let mut receives: IdVec<NodeId, [Option<ChannelId>; 2]> = IdVec::filled(nodes, [None, None]);
        let mut receivers: IdVec<ChannelId, SmallVec<[NodeId; 2]>> = IdVec::new();
        for (node, w) in waits.iter() {
            let Some((counter, _)) = *w else { continue };
            let ch = *channel_of.entry(counter).or_insert_with(|| receivers.push(SmallVec::new()));
            receivers[ch].push(node);
            receives[node][0] = Some(ch);
        }
        let mut sends: IdVec<NodeId, SmallVec<[ChannelId; 4]>> = signals
            .values()
            .map(|sent| sent.iter().filter_map(|s| channel_of.get(&key(s)?).copied()).collect())
            .collect();
        let mut signals_to: IdVec<ChannelId, u32> = IdVec::filled(receivers.len(), 0);
        for &ch in sends.values().flatten() {
            signals_to[ch] += 1;
        }
        for (node, w) in waits.iter() {
            let Some(((rank, counter), target)) = *w else { continue };
            let sent = receives[node][0].map_or(0, |ch| signals_to[ch]);
            if target != sent {
                return fail(vec![node], CertDetail::Target { node: name(node), counter, rank, target, sent });
            }
        }

        // Flags: the j-th set of an AIC releases each own AIV's j-th wait; a node whose waits
        // take sets receives from the channel of the last set it takes.
        let mut capacity: Vec<(NodeId, NodeId)> = Vec::new();
        if let Some(f) = flags {
            if f.set_after.len() != nodes || f.waits_before.len() != nodes {
                return fail(vec![], CertDetail::FlagPlanNodes { nodes });
            }
            let set_after = |n: NodeId| f.set_after[n.index()];
            let waits_before = |n: NodeId| f.waits_before[n.index()];
            for (node, s) in slots.iter() {
                let kind = kind_of_core(s.core);
                if (set_after(node) && kind != CoreKind::Aic) || (waits_before(node) > 0 && kind != CoreKind::Aiv) {
                    return fail(vec![node], CertDetail::FlagWrongKind { node: name(node) });
                }
            }
            let mut channel_of_setter: Map<NodeId, ChannelId> = Map::default();
            for aic in queues.keys().filter(|&c| kind_of_core(c) == CoreKind::Aic) {
                let sets: Vec<NodeId> = queues[aic].iter().copied().filter(|&n| set_after(n)).collect();
                let rank_base = aic.raw() - aic.raw() % cores_per_rank;
                let local_aic = aic.raw() % cores_per_rank;
                for k in 0..profile.aiv_per_aic {
                    let aiv = CoreId::new(rank_base + profile.aic_per_rank + local_aic * profile.aiv_per_aic + k);
                    let mut taken: Vec<NodeId> = Vec::new(); // per set taken, the entry that waits for it
                    for &n in &queues[aiv] {
                        let waits = waits_before(n);
                        if waits == 0 {
                            continue;
                        }
                        taken.extend(std::iter::repeat_n(n, usize::from(waits)));
                        let Some(&setter) = sets.get(taken.len() - 1) else {
                            let detail =
                                CertDetail::FlagSetMissing { node: name(n), set: taken.len(), sets: sets.len() };
                            return fail(vec![n], detail);
                        };
                        let ch = *channel_of_setter.entry(setter).or_insert_with(|| {
                            let ch = receivers.push(SmallVec::new());
                            sends[setter].push(ch);
                            ch
                        });
                        receivers[ch].push(n);
                        receives[n][1] = Some(ch);
                    }
                    for (j, &setter) in sets.iter().enumerate().skip(FLAG_CAPACITY as usize) {
                        match taken.get(j - FLAG_CAPACITY as usize) {
                            Some(&waiter) => capacity.push((setter, waiter)),
                            None => {
                                let detail = CertDetail::FlagNoWait {
                                    setter: name(setter),
                                    set: j + 1,
                                    aiv,
                                    waits: taken.len(),
                                };
                                return fail(vec![setter], detail);
                            }
                        }
                    }
                }
            }
            capacity.sort_unstable();
        }
        let mut sent: IdVec<ChannelId, u32> = IdVec::filled(receivers.len(), 0);
        for &ch in sends.values().flatten() {
            sent[ch] += 1;
        }
        Ok(Graph { slots, queues, sends, receives, receivers, sent, capacity })
    }

    /// Edges of `H`: core order, then every send to every receive of its channel.
    pub fn edges(&self) -> u64 {
        let core = self.slots.values().filter(|s| s.pos > 0).count() as u64;
        core + self.receives.values().flatten().flatten().map(|&ch| u64::from(self.sent[ch])).sum::<u64>()
    }

    /// The `(setter, waiter)` capacity pairs of `setter`.
    pub fn capacity_of(&self, setter: NodeId) -> &[(NodeId, NodeId)] {
        let start = self.capacity.partition_point(|&(s, _)| s < setter);
        let end = self.capacity.partition_point(|&(s, _)| s <= setter);
        &self.capacity[start..end]
    }

    /// The nodes in an order where each comes after all its `H` predecessors (Kahn's walk), or,
    /// when `H` has a cycle, a ring of it: in run order, its first node repeated at the end.
    pub fn order(&self) -> Result<Vec<NodeId>, Vec<NodeId>> {
        let nodes = self.slots.len();
        let mut indegree: IdVec<NodeId, u32> = self
            .slots
            .iter()
            .map(|(v, slot)| {
                let from_channels: u32 = self.receives[v].iter().flatten().map(|&ch| self.sent[ch]).sum();
                u32::from(slot.pos > 0) + from_channels
            })
            .collect();
        let mut ready: VecDeque<NodeId> = indegree.iter().filter(|&(_, &d)| d == 0).map(|(n, _)| n).collect();
        let mut order = Vec::with_capacity(nodes);
        while let Some(v) = ready.pop_back() {
            order.push(v);
            let mut release = |n: NodeId| {
                indegree[n] -= 1;
                if indegree[n] == 0 {
                    ready.push_back(n);
                }
            };
            for &ch in &self.sends[v] {
                self.receivers[ch].iter().for_each(|&w| release(w));
            }
            let Slot { core, pos } = self.slots[v];
            if let Some(&next) = self.queues[core].get(pos as usize + 1) {
                release(next);
            }
        }
        if order.len() == nodes { Ok(order) } else { Err(self.ring(&indegree)) }
    }

    /// A ring of `H` among the nodes Kahn's walk could not reach (`indegree > 0`): each of them
    /// has an unreached `H` predecessor, so walking predecessors must repeat a node.
    fn ring(&self, indegree: &IdVec<NodeId, u32>) -> Vec<NodeId> {
        let stuck = |n: NodeId| indegree[n] > 0;
        let mut senders: IdVec<ChannelId, Vec<NodeId>> = IdVec::filled(self.receivers.len(), Vec::new());
        for (u, chs) in self.sends.iter() {
            chs.iter().for_each(|&ch| senders[ch].push(u));
        }
        let stuck_pred = |v: NodeId| -> NodeId {
            let s = self.slots[v];
            if s.pos > 0 {
                let prev = self.queues[s.core][s.pos as usize - 1];
                if stuck(prev) {
                    return prev;
                }
            }
            self.receives[v]
                .iter()
                .flatten()
                .find_map(|&ch| senders[ch].iter().copied().find(|&u| stuck(u)))
                .expect("a stuck node has a stuck predecessor")
        };
        let start = indegree.keys().find(|&n| stuck(n)).expect("some node is stuck");
        let mut seen = HashMap::new();
        let mut path = vec![start];
        let mut v = start;
        loop {
            seen.insert(v, path.len() - 1);
            v = stuck_pred(v);
            if let Some(&at) = seen.get(&v) {
                let mut ring: Vec<NodeId> = path[at..].to_vec();
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
    let fail = |detail: CertDetail| Err(CertError::new(vec![], detail));
    let (p, h) = (&tf.profile, &table.header);
    let table_has: Machine = (h.ranks, h.aic_per_rank, h.aiv_per_aic, h.cores_per_rank, h.instances_per_rank);
    let cores_per_rank = p.aic_per_rank * (1 + p.aiv_per_aic);
    let taskflow_has: Machine = (p.ranks, p.aic_per_rank, p.aiv_per_aic, cores_per_rank, exp.space.per_rank);
    if table_has != taskflow_has || exp.space.ranks != p.ranks {
        return fail(CertDetail::Machine { table: table_has, taskflow: taskflow_has });
    }
    if table.cores.len() != (p.ranks * cores_per_rank) as usize {
        return fail(CertDetail::Cores { table: table.cores.len(), taskflow: p.ranks * cores_per_rank });
    }
    let families = exp.space.families.len();
    if table.families.len() != families || tf.families.len() != families || table.family_names().count() != families {
        return fail(CertDetail::Families { table: table.families.len(), taskflow: families });
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
            let table = FamilyRecord {
                name: table_name.to_string(),
                kind: rec.kind(),
                grid: rec.grid().to_vec(),
                first: rec.first_instance,
                count: rec.instance_count,
            };
            let taskflow = FamilyRecord {
                name: family.name.clone(),
                kind: Some(exp.family_core[i]),
                grid: span.extents.to_vec(),
                first: span.first,
                count: span.count,
            };
            return fail(CertDetail::Family { index: i, table, taskflow });
        }
    }
    Ok(())
}
