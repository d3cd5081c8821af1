//! The discrete-event engine: every core of every rank walks its task list at once.
//!
//! A core, reaching a task:
//! 1. if the task waits on a counter, polls it: the task may start one poll
//!    (`poll_ns`) after the counter reaches its target, or after the core arrived,
//!    whichever is later;
//! 2. runs the exec part (`exec_ns`);
//!    (stretched, if the die's HBM is busy, until its HBM bytes have moved: [`Hbm`]);
//! 3. for a put to another rank, streams its bytes through the network ([`Fabric`]: the
//!    rank's injection, the destination's ejection, the server tier), sharing them with the
//!    other puts in flight, until the last byte is out. The data lands one path latency
//!    later, with the put's signal to its destination (a put-with-signal); the core waits for
//!    the put's completion to come back (the quiet: a second path latency);
//! 4. issues its (other) signals, `issue_ns` each, one after the other; once all are issued
//!    they are visible on their own rank at once and on another rank one path latency later;
//! 5. moves to its next task.
//!
//! Events are processed in order of (time, sequence number), the sequence number counting
//! events as they are created, so equal-time events run in a fixed order and a run is
//! deterministic. O(events · log events).

use super::fabric::{Due, Fabric, NetParams};
use super::hbm::Hbm;
use super::program::{Program, SimCounterId, TaskId};
use super::{SimError, Stuck};
use hpmoe_core::ids::{CoreId, IdVec, OptId};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Latencies, the network and the HBM the engine charges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Timing {
    pub poll_ns: u64,
    pub issue_ns: u64,
    pub net: NetParams,
    pub hbm_bytes_per_s: u64,
    /// Perturbs every tile's exec part ([`super::TimingNoise`]); none: the modelled times.
    pub noise: Option<super::TimingNoise>,
}

impl Timing {
    /// What `p` charges.
    pub fn of(p: &hpmoe_core::cost::CostProfile) -> Self {
        Timing {
            poll_ns: p.poll_ns(),
            issue_ns: p.signal_issue_ns(),
            net: NetParams::of(p),
            hbm_bytes_per_s: p.hbm_bytes_per_s(),
            noise: None,
        }
    }
}

/// When things happened to one task.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct TaskTimes {
    /// The core reached the task.
    pub arrive: u64,
    /// The exec part began (after the wait and its poll).
    pub start: u64,
    /// The exec part and the put, if any, are done.
    pub end: u64,
    /// Its signals are issued; the core moves on.
    pub done: u64,
    /// The put's data has landed on the destination rank (0 if the task has no link put).
    pub delivered: u64,
    /// Start of its link put (0 if none).
    pub link_start: u64,
    /// The task whose signal completed this task's wait, if recorded.
    pub released_by: OptId<TaskId>,
}

/// The engine's output.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Run {
    /// Per task.
    pub times: IdVec<TaskId, TaskTimes>,
    /// Per task: the core that ran it.
    pub core_of: IdVec<TaskId, CoreId>,
    /// Per core: when it finished its last task.
    pub core_end: IdVec<CoreId, u64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    /// A signal for a counter lands.
    Arrive { counter: SimCounterId, from: TaskId },
    /// A task's put may be done (ignored if its version moved on).
    FlowDue { task: TaskId, version: u64 },
    /// A core's current task finished exec.
    ExecEnd { core: CoreId },
    /// A core's current task may start exec.
    Begin { core: CoreId },
    /// A core moves to its next task.
    Next { core: CoreId },
}

struct Engine<'a> {
    p: &'a Program,
    t: Timing,
    queue: BinaryHeap<Reverse<(u64, u64, Event)>>,
    seq: u64,
    /// Per core: the position of its current task in its queue.
    pc: IdVec<CoreId, u32>,
    counters: IdVec<SimCounterId, u32>,
    /// Per counter: the target of its (first) waiter (none if nothing waits on it), and the
    /// task whose signal made the counter reach it.
    target: IdVec<SimCounterId, Option<u32>>,
    reached_by: IdVec<SimCounterId, OptId<TaskId>>,
    /// Per counter: the first core blocked on it; per core: the next core blocked on the same.
    waiter_head: IdVec<SimCounterId, OptId<CoreId>>,
    waiter_next: IdVec<CoreId, OptId<CoreId>>,
    net: Fabric,
    hbm: Hbm,
    run: Run,
}

/// Runs `p` to completion.
///
/// # Errors
/// [`SimError::Deadlock`] if some core is left waiting on a counter that never reaches
/// its target.
pub(crate) fn run(p: &Program, t: Timing) -> Result<Run, SimError> {
    let cores = p.queues.nodes();
    let counters = p.counter_rank.len();
    let mut target = IdVec::filled(counters, None);
    for task in p.tasks.values() {
        if let Some((c, n)) = task.wait {
            target[c].get_or_insert(n);
        }
    }
    // Every task is queued on one core (the program is built from a placement).
    let mut core_of = IdVec::filled(p.tasks.len(), CoreId::new(0));
    for c in p.queues.row_ids() {
        for &task in p.queues.row(c) {
            core_of[task] = c;
        }
    }
    let mut e = Engine {
        p,
        t,
        queue: BinaryHeap::new(),
        seq: 0,
        pc: IdVec::filled(cores, 0),
        counters: IdVec::filled(counters, 0),
        target,
        reached_by: IdVec::filled(counters, OptId::NONE),
        waiter_head: IdVec::filled(counters, OptId::NONE),
        waiter_next: IdVec::filled(cores, OptId::NONE),
        net: Fabric::new(t.net, p.ranks, p.tasks.len()),
        hbm: Hbm::new(t.hbm_bytes_per_s, p.ranks),
        run: Run {
            times: IdVec::filled(p.tasks.len(), TaskTimes::default()),
            core_of,
            core_end: IdVec::filled(cores, 0),
        },
    };
    for c in p.queues.row_ids() {
        e.push(0, Event::Next { core: c });
    }
    while let Some(Reverse((now, _, ev))) = e.queue.pop() {
        e.handle(now, ev);
    }
    let stuck: Vec<Stuck> = p
        .queues
        .row_ids()
        .filter(|&c| (e.pc[c] as usize) < p.queues.degree(c))
        .map(|c| {
            let task = p.queues.row(c)[e.pc[c] as usize];
            let task = &p.tasks[task];
            let (counter, target) = task.wait.expect("a task without a wait never blocks its core");
            let seen = e.counters.get(counter).copied().unwrap_or(0);
            Stuck { core: c, node: task.node, counter, target, seen }
        })
        .collect();
    if stuck.is_empty() { Ok(e.run) } else { Err(SimError::Deadlock(stuck)) }
}

impl Engine<'_> {
    fn push(&mut self, time: u64, ev: Event) {
        self.queue.push(Reverse((time, self.seq, ev)));
        self.seq += 1;
    }

    fn current(&self, core: CoreId) -> TaskId {
        self.p.queues.row(core)[self.pc[core] as usize]
    }

    fn handle(&mut self, now: u64, ev: Event) {
        match ev {
            Event::Next { core } => self.next(now, core),
            Event::Begin { core } => {
                let task = self.current(core);
                self.run.times[task].start = now;
                let spec = self.p.tasks[task];
                let hbm_done = self.hbm.reserve(spec.rank.raw(), now, spec.hbm_bytes);
                let exec_ns = self.t.noise.map_or(spec.exec_ns, |n| n.exec_ns(task.raw(), spec.exec_ns));
                self.push(now.saturating_add(exec_ns).max(hbm_done), Event::ExecEnd { core });
            }
            Event::ExecEnd { core } => {
                let task = self.current(core);
                let spec = self.p.tasks[task];
                match spec.link {
                    Some(l) => {
                        self.run.times[task].link_start = now;
                        let due = self.net.start(now, task.raw(), l.bytes, l.cap, spec.rank.raw(), l.to.raw());
                        self.wake(due);
                    }
                    None => self.finish(now, now, task, None),
                }
            }
            Event::FlowDue { task, version } => {
                if let Some(due) = self.net.finish_if_due(now, task.raw(), version) {
                    self.wake(due);
                    self.put_done(now, task);
                }
            }
            Event::Arrive { counter, from } => {
                let c = counter;
                self.counters[c] += 1;
                if Some(self.counters[c]) == self.target[c] {
                    self.reached_by[c] = OptId::some(from);
                }
                // Release every blocked core whose target is now met.
                let mut prev: OptId<CoreId> = OptId::NONE;
                let mut w = self.waiter_head[c];
                while let Some(core) = w.get() {
                    let next = self.waiter_next[core];
                    let task = self.current(core);
                    let (_, target) = self.p.tasks[task].wait.expect("a blocked core's task waits");
                    if self.counters[c] >= target {
                        match prev.get() {
                            None => self.waiter_head[c] = next,
                            Some(prev) => self.waiter_next[prev] = next,
                        }
                        self.waiter_next[core] = OptId::NONE;
                        self.run.times[task].released_by = OptId::some(from);
                        self.push(now.saturating_add(self.t.poll_ns), Event::Begin { core });
                    } else {
                        prev = w;
                    }
                    w = next;
                }
            }
        }
    }

    fn next(&mut self, now: u64, core: CoreId) {
        if self.pc[core] as usize >= self.p.queues.degree(core) {
            self.run.core_end[core] = now;
            return;
        }
        let task = self.current(core);
        let times = &mut self.run.times[task];
        times.arrive = now;
        times.released_by = OptId::NONE;
        match self.p.tasks[task].wait {
            None => self.push(now, Event::Begin { core }),
            Some((counter, target)) => {
                let c = counter;
                if self.counters[c] >= target {
                    self.run.times[task].released_by = self.reached_by[c];
                    self.push(now.saturating_add(self.t.poll_ns), Event::Begin { core });
                } else {
                    self.waiter_next[core] = self.waiter_head[c];
                    self.waiter_head[c] = OptId::some(core);
                }
            }
        }
    }

    /// Task `task`'s put sent its last byte at `now`: the data lands one path latency later
    /// with the signal it carries (its first signal to the destination's rank); the core
    /// waits a round trip for the put's completion (the quiet), then issues the rest.
    fn put_done(&mut self, now: u64, task: TaskId) {
        let spec = self.p.tasks[task];
        let to = spec.link.expect("a flow belongs to a put").to;
        let latency = self.t.net.latency(spec.rank.raw(), to.raw());
        let delivered = now.saturating_add(latency);
        self.run.times[task].delivered = delivered;
        let carried = self.p.signals_of(task).position(|c| self.p.counter_rank[c] == to);
        if let Some(i) = carried {
            let counter = self.p.signals.row(task)[i];
            self.push(delivered, Event::Arrive { counter, from: task });
        }
        self.finish(now, delivered.saturating_add(latency), task, carried);
    }

    /// Task `task` finished its exec and put at `end`; from `resume` on its core issues its
    /// signals (all but the one at index `carried`, which its put delivered) and moves on.
    fn finish(&mut self, end: u64, resume: u64, task: TaskId, carried: Option<usize>) {
        let spec = self.p.tasks[task];
        let p = self.p;
        let issued = p.signals.degree(task) - usize::from(carried.is_some());
        let done = resume.saturating_add(self.t.issue_ns.saturating_mul(issued as u64));
        let times = &mut self.run.times[task];
        times.end = end;
        times.done = done;
        for (_, counter) in p.signals_of(task).enumerate().filter(|&(i, _)| Some(i) != carried) {
            let at = done.saturating_add(self.t.net.latency(spec.rank.raw(), p.counter_rank[counter].raw()));
            self.push(at, Event::Arrive { counter, from: task });
        }
        let core = self.run.core_of[task];
        self.pc[core] += 1;
        self.push(done, Event::Next { core });
    }

    /// Schedules the completion checks of flows whose rates changed.
    fn wake(&mut self, due: Vec<Due>) {
        for (at, task, version) in due {
            self.push(at, Event::FlowDue { task: TaskId::new(task), version });
        }
    }
}
