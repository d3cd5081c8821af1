//! Reachability in the happens-before graph by vector clocks, in passes of bounded memory.
//!
//! Walking `H` in topological order, each node `v` gets a clock: per core `c`, one more than
//! the last position on `c` that happens before or at `v` (0 if none). It is the maximum over
//! `v`'s `H` predecessors — the entry before it on its core, and the channels it receives
//! from, whose clock is the maximum over their sends so far — then its own position. As a
//! core's entries form a chain in `H`, `u` reaches `v` iff `v`'s clock for `u`'s core exceeds
//! `u`'s position.
//!
//! Clocks are kept only for a band of cores at a time: a pass walks the whole order keeping
//! each clock's entries for the cores of its band, and checks the dependencies whose producer
//! runs on one of them. Every core is in exactly one band, so every dependency is checked
//! exactly once, and a clock entry of one core never depends on another core's entries, so
//! the band does not change what is computed. Per pass, the memory is one clock per core (the
//! clock of its last entry so far) and one per *open* channel: a channel's clock is made at
//! its first send and dropped after its last receive (all sends of a channel come before its
//! receives in the order). The band's width follows from a byte budget.

use super::error::Placed;
use super::happens::{ChannelId, Graph, Slot, Tick};
use super::{CertDetail, CertError};
use crate::check::node_name;
use crate::expand::Expanded;
use crate::graph::Csr;
use crate::ids::{CoreId, IdVec, NodeId};
use crate::model::Taskflow;

/// What the sweep found: dependencies checked (each once), and of them those that needed the
/// clocks; passes made.
#[derive(Clone, Copy, Debug)]
pub(super) struct Swept {
    pub dependencies: u64,
    pub by_clocks: u64,
    pub passes: u32,
}

/// Whether `u ⇒ v` is obvious without clocks: `u` is before `v` on the same core (a chain of
/// core-order edges), or `u` sends on a channel `v` receives from (one edge of `H`).
fn direct(g: &Graph, u: NodeId, v: NodeId) -> bool {
    let (a, b) = (g.slots[u], g.slots[v]);
    (a.core == b.core && a.pos < b.pos) || g.receives[v].iter().flatten().any(|ch| g.sends[u].contains(ch))
}

/// Checks, walking `order` (a topological order of `g`), that every dependency of `exp` is an
/// `H` path and that every flag set waits for the AIV wait its capacity needs, with at most
/// about `budget` bytes of clocks at a time. Clocks keep entries only for the cores they are
/// needed for: those running the producer of a dependency that is not [`direct`], or an AIV
/// wait a flag set's capacity needs.
pub(super) fn sweep(
    tf: &Taskflow,
    exp: &Expanded,
    g: &Graph,
    order: &[NodeId],
    budget: usize,
) -> Result<Swept, CertError> {
    // Row `v`: the producers of `v`'s dependencies that are not [`direct`], decided once here
    // for every pass.
    let by_clocks: Csr = Csr::from_rows(
        exp.space.node_ids().map(|v| exp.dag.pred.row(v).iter().copied().filter(move |&u| !direct(g, u, v))),
    );
    let mut swept = Swept { dependencies: (exp.dag.pred.edges() - by_clocks.edges()) as u64, by_clocks: 0, passes: 0 };
    let mut needed: IdVec<CoreId, bool> = IdVec::filled(g.queues.len(), false);
    for &u in by_clocks.targets() {
        needed[g.slots[u].core] = true;
    }
    for &(_, waiter) in &g.capacity {
        needed[g.slots[waiter].core] = true;
    }
    let columns: Vec<CoreId> = needed.iter().filter(|&(_, &n)| n).map(|(c, _)| c).collect();
    if columns.is_empty() {
        return Ok(swept);
    }
    let peak = peak_open_channels(g, order);
    let clocks = g.queues.len() + peak + 1;
    let width = (budget / (clocks * size_of::<Tick>())).clamp(1, columns.len());
    for band in columns.chunks(width) {
        let checked = pass(tf, exp, g, order, band, &by_clocks)?;
        swept.dependencies += checked;
        swept.by_clocks += checked;
        swept.passes += 1;
    }
    Ok(swept)
}

/// One walk of `order` with clock entries for the cores of `band`: the dependencies in
/// `by_clocks` (row `v`: producers of `v` not [`direct`]) with their producer on one of them,
/// checked, and the capacity waits on one of them. Returns how many dependencies.
fn pass(
    tf: &Taskflow,
    exp: &Expanded,
    g: &Graph,
    order: &[NodeId],
    band: &[CoreId],
    by_clocks: &Csr,
) -> Result<u64, CertError> {
    let placed = |n: NodeId, s: Slot| Placed { name: node_name(tf, &exp.space, n), core: s.core, entry: s.pos };
    let width = band.len();
    let mut column_of: IdVec<CoreId, Option<usize>> = IdVec::filled(g.queues.len(), None);
    for (col, &core) in band.iter().enumerate() {
        column_of[core] = Some(col);
    }
    // Per core, the clock of its last entry walked so far (core `c`'s at `c * width`); per
    // channel, the join of its sends.
    let mut last_on_core: Vec<Tick> = vec![0; g.queues.len() * width];
    let mut channel: IdVec<ChannelId, Option<Box<[Tick]>>> = IdVec::filled(g.receivers.len(), None);
    // Clocks of closed channels, for channels opened later (zeroed on reuse).
    let mut spare: Vec<Box<[Tick]>> = Vec::new();
    let mut unread: IdVec<ChannelId, u32> = g.receivers.values().map(|r| r.len() as u32).collect();
    let mut checked = 0u64;
    for &v in order {
        let Slot { core, pos } = g.slots[v];
        // `v`'s clock starts as that of the entry before it on its core, and replaces it.
        let clock = &mut last_on_core[core.index() * width..(core.index() + 1) * width];
        for &ch in g.receives[v].iter().flatten() {
            if let Some(sends) = &channel[ch] {
                join(clock, sends);
            }
            unread[ch] -= 1;
            if unread[ch] == 0
                && let Some(closed) = channel[ch].take()
            {
                spare.push(closed);
            }
        }
        if let Some(col) = column_of[core] {
            clock[col] = Tick::try_from(pos + 1).expect("positions checked to fit a Tick");
        }
        for &u in by_clocks.row(v) {
            let s = g.slots[u];
            let Some(col) = column_of[s.core] else { continue };
            checked += 1;
            if u32::from(clock[col]) <= s.pos {
                let detail = CertDetail::Unenforced { producer: placed(u, s), consumer: placed(v, g.slots[v]) };
                return Err(CertError::new(vec![u, v], detail));
            }
        }
        for &(setter, waiter) in g.capacity_of(v) {
            let w = g.slots[waiter];
            let Some(col) = column_of[w.core] else { continue };
            if u32::from(clock[col]) <= w.pos {
                let name = |n| node_name(tf, &exp.space, n);
                let detail = CertDetail::FlagOverrun { setter: name(setter), waiter: name(waiter) };
                return Err(CertError::new(vec![waiter, setter], detail));
            }
        }
        for &ch in &g.sends[v] {
            let open = channel[ch].get_or_insert_with(|| match spare.pop() {
                Some(mut reused) => {
                    reused.fill(0);
                    reused
                }
                None => vec![0; width].into_boxed_slice(),
            });
            join(open, clock);
        }
    }
    Ok(checked)
}

/// `into = max(into, other)`, entry by entry.
fn join(into: &mut [Tick], other: &[Tick]) {
    into.iter_mut().zip(other).for_each(|(a, b)| *a = (*a).max(*b));
}

/// The most channels open at once in a pass over `order` (the same in every pass).
fn peak_open_channels(g: &Graph, order: &[NodeId]) -> usize {
    let mut unread: IdVec<ChannelId, u32> = g.receivers.values().map(|r| r.len() as u32).collect();
    let mut opened: IdVec<ChannelId, bool> = IdVec::filled(g.receivers.len(), false);
    let (mut open, mut peak) = (0usize, 0usize);
    for &v in order {
        for &ch in g.receives[v].iter().flatten() {
            unread[ch] -= 1;
            if unread[ch] == 0 && opened[ch] {
                open -= 1;
            }
        }
        for &ch in &g.sends[v] {
            if !std::mem::replace(&mut opened[ch], true) {
                open += 1;
                peak = peak.max(open);
            }
        }
    }
    peak
}
