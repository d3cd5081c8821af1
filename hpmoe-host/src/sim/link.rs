//! One rank's outgoing link, shared by the puts the rank has in flight.
//!
//! A fluid model: at every instant the link's bandwidth is divided max-min fairly among
//! the active puts, each capped by its own stream rate (how fast its core feeds it). With
//! `n` equal puts and no cap binding, each gets `bandwidth / n`; a put capped below its
//! fair share keeps its cap and leaves the rest to the others. Rates only change when a
//! put starts or ends, and the sum of the rates never exceeds the bandwidth.
//!
//! Exact integer arithmetic: a put's progress is counted in nano-bytes (a rate of `R`
//! bytes/s over `dt` ns moves `R·dt` nano-bytes), so rounding happens only once, when a
//! completion time is rounded up to a whole ns. Puts with the same cap form a *class* that
//! shares one service counter, so a start or an end costs O(classes + log puts).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Puts with the same cap: they always get the same rate.
#[derive(Clone, Debug)]
struct Class {
    cap: u64,
    /// Current rate of each put of the class, bytes/s.
    rate: u64,
    /// Nano-bytes every put of the class has received since the class was created.
    served: u128,
    /// Active puts: (`served` value at which the put is done, task id).
    active: BinaryHeap<Reverse<(u128, u32)>>,
}

/// A rank's link. See the [module docs](self).
#[derive(Clone, Debug)]
pub(crate) struct Link {
    bytes_per_s: u64,
    /// Time up to which `served` is accounted, ns.
    now: u64,
    /// Bumped whenever the next completion time changes; stale wake-ups carry old versions.
    pub version: u64,
    /// Sorted by cap.
    classes: Vec<Class>,
}

impl Link {
    pub fn new(bytes_per_s: u64) -> Self {
        Link { bytes_per_s: bytes_per_s.max(1), now: 0, version: 0, classes: Vec::new() }
    }

    /// Accounts service up to `t` (never backwards).
    fn advance(&mut self, t: u64) {
        let dt = t.saturating_sub(self.now);
        if dt > 0 {
            for c in self.classes.iter_mut().filter(|c| !c.active.is_empty()) {
                c.served += u128::from(c.rate) * u128::from(dt);
            }
        }
        self.now = self.now.max(t);
    }

    /// Max-min fair rates: classes in increasing cap take their cap while it is below the
    /// fair share of what is left; the rest share equally.
    fn rebalance(&mut self) {
        let mut left_bw = self.bytes_per_s;
        let mut left_puts: u64 = self.classes.iter().map(|c| c.active.len() as u64).sum();
        for c in self.classes.iter_mut().filter(|c| !c.active.is_empty()) {
            let n = c.active.len() as u64;
            let share = left_bw / left_puts;
            c.rate = c.cap.min(share).max(1);
            left_bw = left_bw.saturating_sub(c.rate * n);
            left_puts -= n;
        }
    }

    /// Starts a put of `bytes` at time `t`.
    pub fn start(&mut self, t: u64, task: u32, bytes: u64, cap: u64) {
        self.advance(t);
        let cap = cap.max(1);
        let i = match self.classes.binary_search_by_key(&cap, |c| c.cap) {
            Ok(i) => i,
            Err(i) => {
                self.classes.insert(i, Class { cap, rate: 0, served: 0, active: BinaryHeap::new() });
                i
            }
        };
        let class = &mut self.classes[i];
        class.active.push(Reverse((class.served + u128::from(bytes) * 1_000_000_000, task)));
        self.rebalance();
        self.version += 1;
    }

    /// Ends, at time `t`, every put that is done by then, and returns their task ids in
    /// increasing order.
    pub fn finish_due(&mut self, t: u64) -> Vec<u32> {
        self.advance(t);
        let mut done = Vec::new();
        for c in &mut self.classes {
            while let Some(&Reverse((end, task))) = c.active.peek() {
                if end > c.served {
                    break;
                }
                c.active.pop();
                done.push(task);
            }
        }
        if !done.is_empty() {
            done.sort_unstable();
            self.rebalance();
            self.version += 1;
        }
        done
    }

    /// When the next active put will be done at current rates, if any is active.
    pub fn next_completion(&self) -> Option<u64> {
        self.classes
            .iter()
            .filter_map(|c| {
                let &Reverse((end, _)) = c.active.peek()?;
                let left = end.saturating_sub(c.served);
                let dt = left.div_ceil(u128::from(c.rate));
                Some(self.now.saturating_add(u64::try_from(dt).unwrap_or(u64::MAX)))
            })
            .min()
    }

    /// Puts in flight.
    #[cfg(test)]
    pub fn active(&self) -> usize {
        self.classes.iter().map(|c| c.active.len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GBPS: u64 = 1_000_000_000; // 1 byte/ns

    /// Runs puts `(start, bytes, cap)` on one link; returns each put's end time.
    fn run(bw: u64, puts: &[(u64, u64, u64)]) -> Vec<u64> {
        let mut link = Link::new(bw);
        let mut ends = vec![u64::MAX; puts.len()];
        let mut starts: Vec<usize> = (0..puts.len()).collect();
        starts.sort_by_key(|&i| (puts[i].0, i));
        let mut next = 0;
        loop {
            let t_start = starts.get(next).map(|&i| puts[i].0);
            let t_end = link.next_completion();
            match (t_start, t_end) {
                (None, None) => break,
                (Some(s), e) if e.is_none_or(|e| s < e) => {
                    let i = starts[next];
                    link.start(s, i as u32, puts[i].1, puts[i].2);
                    next += 1;
                }
                (_, Some(e)) => {
                    for task in link.finish_due(e) {
                        ends[task as usize] = e;
                    }
                }
                (Some(_), None) => unreachable!(),
            }
        }
        assert_eq!(link.active(), 0);
        ends
    }

    #[test]
    fn a_lone_put_runs_at_the_slower_of_its_cap_and_the_link() {
        assert_eq!(run(4 * GBPS, &[(0, 1000, 10 * GBPS)]), vec![250]);
        assert_eq!(run(4 * GBPS, &[(10, 1000, 2 * GBPS)]), vec![510]);
        // Rounded up to whole ns.
        assert_eq!(run(3 * GBPS, &[(0, 1000, u64::MAX)]), vec![334]);
    }

    #[test]
    fn concurrent_puts_share_the_link() {
        // Two puts of 1000 B on a 2 B/ns link: 1 B/ns each, both end at 1000.
        assert_eq!(run(2 * GBPS, &[(0, 1000, u64::MAX), (0, 1000, u64::MAX)]), vec![1000, 1000]);
        // The second starts at 200, when the first has sent 400 B. Then 1 B/ns each: the first
        // sends its last 600 B by 800, the second has 400 B left, alone at 2 B/ns: 1000.
        assert_eq!(run(2 * GBPS, &[(0, 1000, u64::MAX), (200, 1000, u64::MAX)]), vec![800, 1000]);
    }

    #[test]
    fn a_capped_put_leaves_its_unused_share_to_the_others() {
        // Link 4 B/ns; put A capped at 1 B/ns, B uncapped: A gets 1, B gets 3.
        // B (3000 B) ends at 1000; A (2000 B) has 1000 left and ends at 2000 (still capped).
        assert_eq!(run(4 * GBPS, &[(0, 2000, GBPS), (0, 3000, u64::MAX)]), vec![2000, 1000]);
        // Three puts capped at 3 B/ns on a 4 B/ns link: 4/3 B/ns each, floored to whole
        // bytes/s (1 333 333 333), so 400 B take just over 300 ns: 301.
        let ends = run(4 * GBPS, &[(0, 400, 3 * GBPS), (0, 400, 3 * GBPS), (0, 400, 3 * GBPS)]);
        assert_eq!(ends, vec![301, 301, 301]);
    }
}
