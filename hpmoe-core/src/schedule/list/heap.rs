//! A 4-ary max-heap of small `Copy` keys: the priority queues of a list-scheduling pass.
//!
//! It pops the same key as [`std::collections::BinaryHeap`] would (the largest; the pass's
//! keys are distinct, so which is largest never depends on the heap's shape), with half as
//! many levels: a pop moves down `log4 n` levels instead of `log2 n`, comparing four children
//! that sit next to each other in memory (one or two cache lines of 16-byte keys) where a
//! binary heap takes a cache miss per level. At 10^6 nodes the heaps of ready nodes hold tens
//! of thousands of keys and were most of a pass's time.

use std::hint::select_unpredictable;

/// A max-heap with four children per node: node `i`'s children are `4i + 1 ..= 4i + 4`.
#[derive(Clone, Debug, Default)]
pub(super) struct QuadHeap<T> {
    data: Vec<T>,
}

impl<T: Ord + Copy> QuadHeap<T> {
    /// An empty heap.
    pub fn new() -> Self {
        QuadHeap { data: Vec::new() }
    }

    /// The largest key, if any.
    pub fn peek(&self) -> Option<&T> {
        self.data.first()
    }

    /// Adds `key`.
    pub fn push(&mut self, key: T) {
        self.data.push(key);
        self.sift_up(self.data.len() - 1);
    }

    /// Removes and returns the largest key, if any.
    ///
    /// As `BinaryHeap::pop` does, the hole left at the root moves down to a leaf along the
    /// larger children (one comparison among siblings per level, none against the moved key),
    /// then the last key fills it and moves up: it came from the bottom, so it rarely rises.
    pub fn pop(&mut self) -> Option<T> {
        let last = self.data.pop()?;
        let Some(&top) = self.data.first() else { return Some(last) };
        let data = &mut self.data[..];
        let n = data.len();
        let mut hole = 0;
        loop {
            let first = 4 * hole + 1;
            if first >= n {
                break;
            }
            // Which child is largest is a coin toss to the branch predictor: select without
            // branches (a mispredicted branch per comparison cost more than the memory).
            let best = if first + 4 <= n {
                let a = select_unpredictable(data[first + 1] > data[first], first + 1, first);
                let b = select_unpredictable(data[first + 3] > data[first + 2], first + 3, first + 2);
                select_unpredictable(data[b] > data[a], b, a)
            } else {
                let mut best = first;
                for c in first + 1..n {
                    best = select_unpredictable(data[c] > data[best], c, best);
                }
                best
            };
            data[hole] = data[best];
            hole = best;
        }
        data[hole] = last;
        self.sift_up(hole);
        Some(top)
    }

    fn sift_up(&mut self, mut i: usize) {
        let data = &mut self.data[..];
        let key = data[i];
        while i > 0 {
            let parent = (i - 1) / 4;
            if data[parent] >= key {
                break;
            }
            data[i] = data[parent];
            i = parent;
        }
        data[i] = key;
    }
}

#[cfg(test)]
mod tests {
    use super::QuadHeap;
    use crate::schedule::testutil::Rng;
    use std::collections::BinaryHeap;

    #[test]
    fn pops_what_a_binary_heap_pops_under_random_pushes_and_pops() {
        for seed in 0..40 {
            let mut rng = Rng::new(seed);
            let (mut quad, mut std) = (QuadHeap::new(), BinaryHeap::new());
            let range = 1 + rng.below(1000);
            for _ in 0..2000 {
                if rng.below(3) < 2 {
                    // Duplicates included: the pass's keys are distinct, the heap need not rely on it.
                    let key = u128::from(rng.below(range)) << 64 | u128::from(rng.below(7));
                    quad.push(key);
                    std.push(key);
                } else {
                    assert_eq!(quad.pop(), std.pop(), "seed {seed}");
                }
                assert_eq!(quad.peek(), std.peek(), "seed {seed}");
            }
            while let Some(k) = std.pop() {
                assert_eq!(quad.pop(), Some(k), "seed {seed}");
            }
            assert_eq!(quad.pop(), None);
        }
    }
}
