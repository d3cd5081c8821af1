//! A static interval index: half-open intervals sorted by start, with the largest end of
//! every implicit subtree, so a stabbing query visits O(log n + hits) intervals. When the
//! ends, too, never decrease in that order (tilings: disjoint or evenly sliding intervals,
//! the common case), the intervals a query meets are one run of the sorted list, found by a
//! binary search and a scan instead of the tree walk.

/// Immutable index over `(start, end, payload)` half-open intervals.
#[derive(Clone, Debug, Default)]
pub struct IntervalIndex {
    /// Sorted by `(start, end, payload)`.
    items: Vec<(u32, u32, u32)>,
    /// `max_end[mid]` = largest end in the implicit subtree rooted at `mid` of `lo..hi`.
    max_end: Vec<u32>,
    /// The ends are non-decreasing in `items`' order.
    monotone: bool,
}

impl IntervalIndex {
    pub fn new(mut items: Vec<(u32, u32, u32)>) -> Self {
        items.sort_unstable();
        let mut max_end = vec![0; items.len()];
        fill(&items, &mut max_end, 0, items.len());
        let monotone = items.windows(2).all(|w| w[0].1 <= w[1].1);
        IntervalIndex { items, max_end, monotone }
    }

    /// Calls `hit(payload)` for every interval that overlaps `start..end`, in the order of
    /// `(start, end, payload)`.
    pub fn query(&self, start: u32, end: u32, hit: &mut impl FnMut(u32)) {
        if self.monotone {
            // The intervals ending after `start` are a suffix; those of it starting before
            // `end`, a prefix of that suffix.
            let first = self.items.partition_point(|&(_, e, _)| e <= start);
            for &(_, _, p) in self.items[first..].iter().take_while(|&&(s, _, _)| s < end) {
                hit(p);
            }
            return;
        }
        self.visit(0, self.items.len(), start, end, hit);
    }

    fn visit(&self, lo: usize, hi: usize, start: u32, end: u32, hit: &mut impl FnMut(u32)) {
        if lo >= hi {
            return;
        }
        let mid = lo + (hi - lo) / 2;
        if self.max_end[mid] <= start {
            return; // nothing below here reaches past `start`
        }
        self.visit(lo, mid, start, end, hit);
        let (s, e, p) = self.items[mid];
        if s < end {
            if e > start {
                hit(p);
            }
            self.visit(mid + 1, hi, start, end, hit);
        }
    }
}

fn fill(items: &[(u32, u32, u32)], max_end: &mut [u32], lo: usize, hi: usize) -> u32 {
    if lo >= hi {
        return 0;
    }
    let mid = lo + (hi - lo) / 2;
    let m = items[mid].1.max(fill(items, max_end, lo, mid)).max(fill(items, max_end, mid + 1, hi));
    max_end[mid] = m;
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn finds_exactly_the_overlapping_intervals(
            raw in prop::collection::vec((0u32..200, 1u32..40), 0..60),
            q in (0u32..220, 1u32..50),
        ) {
            let items: Vec<_> = raw.iter().enumerate().map(|(i, &(s, l))| (s, s + l, i as u32)).collect();
            let index = IntervalIndex::new(items.clone());
            let (qs, qe) = (q.0, q.0 + q.1);
            let mut got = Vec::new();
            index.query(qs, qe, &mut |p| got.push(p));
            got.sort_unstable();
            let want: Vec<u32> = items.iter().filter(|&&(s, e, _)| s < qe && e > qs).map(|&(_, _, p)| p).collect();
            prop_assert_eq!(got, want);
        }

        /// Tilings (sorted ends: the binary-search path) find the same intervals, in order.
        #[test]
        fn finds_exactly_the_overlapping_tiles_in_order(
            steps in prop::collection::vec((0u32..6, 0u32..4), 0..60),
            q in (0u32..200, 1u32..50),
        ) {
            // Starts and ends both non-decreasing (gaps, repeats and overlaps allowed).
            let mut items = Vec::new();
            let (mut s, mut e) = (0u32, 1u32);
            for (i, &(ds, de)) in steps.iter().enumerate() {
                s += ds;
                e = (e + de).max(s + 1);
                items.push((s, e, i as u32));
            }
            let index = IntervalIndex::new(items.clone());
            prop_assert!(index.monotone);
            let (qs, qe) = (q.0, q.0 + q.1);
            let mut got = Vec::new();
            index.query(qs, qe, &mut |p| got.push(p));
            let mut sorted = items.clone();
            sorted.sort_unstable();
            let want: Vec<u32> = sorted.iter().filter(|&&(s, e, _)| s < qe && e > qs).map(|&(_, _, p)| p).collect();
            prop_assert_eq!(got, want);
        }
    }
}
