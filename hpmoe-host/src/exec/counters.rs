//! Event counters: one monotone `AtomicU32` per counter of every rank, as the schedule
//! table allocates them, and the bounded wait on them.
//!
//! # Memory ordering
//!
//! A producer writes its outputs (possibly into another rank's symmetric tensor — a put),
//! then adds 1 to each counter it signals with `fetch_add(Release)`. A consumer waits until
//! an `Acquire` load of its counter reaches the target. Every increment is a read-modify-
//! write, so it continues the release sequence of the increments before it: the load that
//! sees the target value synchronises with *every* producer's increment, and so every
//! producer's writes happen before the consumer's reads, in whatever order the signals
//! arrived. Same-core order is program order on the worker's thread, and happens-before is
//! transitive, so the edges the scheduler dropped as implied stay implied.
//!
//! # Waiting
//!
//! A wait spins for a few iterations (the producer is often just finishing), then parks
//! its thread. The machine this runs on may have far fewer CPUs than the table has cores,
//! so a waiting worker must give its CPU to the producers. Each counter has exactly one
//! waiter (the table says which core); the increment that brings a counter to its target
//! returns that core so the signaller can unpark it. Parking is in slices, and between
//! slices the wait re-checks the counter, the run's stop flag and its deadline, so a lost
//! wake-up costs at most one slice and no wait outlives its deadline.

use hpmoe_core::ids::{CoreId, CounterId, IdVec, RankId};
use hpmoe_core::table::ScheduleTable;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// Longest single park; a safety net, since waiters are unparked when their target is met.
const PARK_SLICE: Duration = Duration::from_millis(20);

/// How a wait ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WaitOutcome {
    /// The counter reached the target.
    Reached,
    /// The run was stopped (another worker failed).
    Stopped,
    /// The deadline passed; the counter was at `seen`.
    TimedOut { seen: u32 },
}

/// The counters of every rank, with the target and the waiting core of each.
#[derive(Debug)]
pub(crate) struct Counters {
    /// `[rank][counter]`.
    values: IdVec<RankId, IdVec<CounterId, AtomicU32>>,
    /// `[rank][counter]`: the target and global core of the entry waiting on it, if any.
    waiters: IdVec<RankId, IdVec<CounterId, Option<(u32, CoreId)>>>,
}

impl Counters {
    /// Zeroed counters for `table`.
    pub(crate) fn new(table: &ScheduleTable) -> Self {
        let counts = table.counters_per_rank();
        let values = counts.iter().map(|&n| (0..n).map(|_| AtomicU32::new(0)).collect()).collect();
        // A validated table has exactly one waiter per counter.
        let mut waiters: IdVec<RankId, IdVec<CounterId, _>> =
            counts.iter().map(|&n| IdVec::filled(n as usize, None)).collect();
        let cores_per_rank = table.header().cores_per_rank.max(1);
        for core in 0..table.cores().len() as u32 {
            for e in table.core_entries(core) {
                if let Some(w) = e.wait() {
                    let rank = RankId::new(core / cores_per_rank);
                    waiters[rank][w.counter] = Some((w.target, CoreId::new(core)));
                }
            }
        }
        Counters { values, waiters }
    }

    /// Current value (`Acquire`).
    pub(crate) fn load(&self, rank: RankId, counter: CounterId) -> u32 {
        self.values[rank][counter].load(Ordering::Acquire)
    }

    /// Adds 1 (`Release`). Returns the waiting core if this increment reached its target.
    pub(crate) fn signal(&self, rank: RankId, counter: CounterId) -> Option<CoreId> {
        let after = self.values[rank][counter].fetch_add(1, Ordering::Release).wrapping_add(1);
        self.waiters[rank][counter].filter(|&(target, _)| after == target).map(|(_, core)| core)
    }

    /// Waits until counter `counter` of `rank` is at least `target`: spins `spin` times,
    /// then parks in slices until the target is met, `stop` is set, or `deadline` passes.
    pub(crate) fn wait(
        &self,
        rank: RankId,
        counter: CounterId,
        target: u32,
        spin: u32,
        deadline: Instant,
        stop: &AtomicBool,
    ) -> WaitOutcome {
        let cell = &self.values[rank][counter];
        for _ in 0..spin {
            if cell.load(Ordering::Acquire) >= target {
                return WaitOutcome::Reached;
            }
            std::hint::spin_loop();
        }
        loop {
            let seen = cell.load(Ordering::Acquire);
            if seen >= target {
                return WaitOutcome::Reached;
            }
            if stop.load(Ordering::Acquire) {
                return WaitOutcome::Stopped;
            }
            let now = Instant::now();
            if now >= deadline {
                return WaitOutcome::TimedOut { seen };
            }
            std::thread::park_timeout((deadline - now).min(PARK_SLICE));
        }
    }
}
