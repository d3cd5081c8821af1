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

use super::happens::{Graph, Slot, Tick};
use super::{CertError, CertFault, FLAG_CAPACITY};
use crate::check::node_name;
use crate::expand::Expanded;
use crate::ids::NodeId;
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
fn direct(g: &Graph, u: u32, v: u32) -> bool {
    let (a, b) = (g.slots[u as usize], g.slots[v as usize]);
    (a.core == b.core && a.pos < b.pos)
        || g.receives[v as usize].iter().flatten().any(|ch| g.sends[u as usize].contains(ch))
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
    order: &[u32],
    budget: usize,
) -> Result<Swept, CertError> {
    let mut needed = vec![false; g.core_count];
    let mut swept = Swept { dependencies: 0, by_clocks: 0, passes: 0 };
    for v in exp.space.node_ids() {
        for &u in exp.dag.pred.row(v) {
            let (u, v) = (u.raw(), v.raw());
            if direct(g, u, v) {
                swept.dependencies += 1;
            } else {
                needed[g.slots[u as usize].core as usize] = true;
            }
        }
    }
    for &(_, waiter) in &g.capacity {
        needed[g.slots[waiter as usize].core as usize] = true;
    }
    let columns: Vec<u32> = (0..g.core_count as u32).filter(|&c| needed[c as usize]).collect();
    if columns.is_empty() {
        return Ok(swept);
    }
    let peak = peak_open_channels(g, order);
    let clocks = g.core_count + peak + 1;
    let width = (budget / (clocks * size_of::<Tick>())).clamp(1, columns.len());
    for band in columns.chunks(width) {
        let checked = pass(tf, exp, g, order, band)?;
        swept.dependencies += checked;
        swept.by_clocks += checked;
        swept.passes += 1;
    }
    Ok(swept)
}

/// One walk of `order` with clock entries for the cores of `band`: the dependencies that are
/// not [`direct`] with their producer on one of them, checked, and the capacity waits on one of
/// them. Returns how many dependencies.
fn pass(tf: &Taskflow, exp: &Expanded, g: &Graph, order: &[u32], band: &[u32]) -> Result<u64, CertError> {
    let name = |n: u32| node_name(tf, &exp.space, NodeId::new(n));
    let width = band.len();
    let mut column_of: Vec<Option<usize>> = vec![None; g.core_count];
    for (col, &core) in band.iter().enumerate() {
        column_of[core as usize] = Some(col);
    }
    // Per core, the clock of its last entry walked so far; per channel, the join of its sends.
    let mut last_on_core: Vec<Tick> = vec![0; g.core_count * width];
    let mut channel: Vec<Option<Box<[Tick]>>> = vec![None; g.receivers.len()];
    // Clocks of closed channels, for channels opened later (zeroed on reuse).
    let mut spare: Vec<Box<[Tick]>> = Vec::new();
    let mut unread: Vec<u32> = g.receivers.iter().map(|r| r.len() as u32).collect();
    let mut checked = 0u64;
    for &v in order {
        let Slot { core, pos } = g.slots[v as usize];
        // `v`'s clock starts as that of the entry before it on its core, and replaces it.
        let clock = &mut last_on_core[core as usize * width..(core as usize + 1) * width];
        for &ch in g.receives[v as usize].iter().flatten() {
            let ch = ch as usize;
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
        if let Some(col) = column_of[core as usize] {
            clock[col] = Tick::try_from(pos + 1).expect("positions checked to fit a Tick");
        }
        for &u in exp.dag.pred.row(NodeId::new(v)) {
            let u = u.raw();
            let s = g.slots[u as usize];
            let Some(col) = column_of[s.core as usize] else { continue };
            if direct(g, u, v) {
                continue;
            }
            checked += 1;
            if u32::from(clock[col]) <= s.pos {
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
                return Err(CertError { fault: CertFault::Unenforced, nodes: vec![u, v], message });
            }
        }
        for &(setter, waiter) in g.capacity_of(v) {
            let w = g.slots[waiter as usize];
            let Some(col) = column_of[w.core as usize] else { continue };
            if u32::from(clock[col]) <= w.pos {
                let message = format!(
                    "{} sets the flag before {} has taken an earlier set, so more than {FLAG_CAPACITY} sets can be pending",
                    name(setter),
                    name(waiter)
                );
                return Err(CertError { fault: CertFault::Flag, nodes: vec![waiter, setter], message });
            }
        }
        for &ch in &g.sends[v as usize] {
            let open = channel[ch as usize].get_or_insert_with(|| match spare.pop() {
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
fn peak_open_channels(g: &Graph, order: &[u32]) -> usize {
    let mut unread: Vec<u32> = g.receivers.iter().map(|r| r.len() as u32).collect();
    let mut opened = vec![false; g.receivers.len()];
    let (mut open, mut peak) = (0usize, 0usize);
    for &v in order {
        for &ch in g.receives[v as usize].iter().flatten() {
            unread[ch as usize] -= 1;
            if unread[ch as usize] == 0 && opened[ch as usize] {
                open -= 1;
            }
        }
        for &ch in &g.sends[v as usize] {
            if !std::mem::replace(&mut opened[ch as usize], true) {
                open += 1;
                peak = peak.max(open);
            }
        }
    }
    peak
}
