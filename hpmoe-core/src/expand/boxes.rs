//! A static index of boxes (one [`Extent`] per item) for overlap queries: interval indexes
//! nested dimension by dimension.
//!
//! Tilings put many boxes on the same interval of one dimension (every tile of expert `e` has
//! `.at(e)`): a single [`IntervalIndex`] on that dimension returns all of them for each query,
//! and the caller discards most. Here the boxes are grouped by their exact interval on the
//! dimension with the most distinct intervals; an interval index finds the groups a query
//! meets, and each large group is indexed again on the next dimension, and so on. A query
//! visits O(depth · log n + candidates) nodes, and the candidates are the boxes overlapping the
//! query on every indexed dimension (a superset of the overlapping boxes: the caller confirms
//! with [`Extent::overlaps`]).

use super::access::Extent;
use super::interval::IntervalIndex;

/// Groups at most this large stay a plain list.
const LEAF: usize = 8;

/// Immutable index over `(extent, payload)` items.
#[derive(Clone, Debug)]
pub struct BoxIndex {
    root: Node,
}

#[derive(Clone, Debug)]
enum Node {
    /// Candidates without further narrowing.
    Leaf(Vec<u32>),
    /// Groups by their exact interval on `dim`, found by `index` (payload: group number).
    Split { dim: usize, index: IntervalIndex, groups: Vec<Node> },
}

impl BoxIndex {
    /// Indexes `items` (`(extent, payload)`, all extents of the same dimensionality).
    pub fn new(items: &[(Extent, u32)]) -> Self {
        let dims = items.first().map_or(0, |(e, _)| e.dims as usize);
        let all: Vec<u32> = (0..items.len() as u32).collect();
        BoxIndex { root: build(items, all, (1u32 << dims) - 1) }
    }

    /// Calls `hit(payload)` for every item overlapping `q` on every dimension this index
    /// narrowed on (and possibly for others; each item at most once, in no particular order).
    pub fn candidates(&self, q: &Extent, items: &[(Extent, u32)], hit: &mut impl FnMut(u32)) {
        visit(&self.root, q, items, hit);
    }
}

fn visit(node: &Node, q: &Extent, items: &[(Extent, u32)], hit: &mut impl FnMut(u32)) {
    match node {
        Node::Leaf(ids) => ids.iter().for_each(|&i| hit(items[i as usize].1)),
        Node::Split { dim, index, groups } => {
            index.query(q.start[*dim], q.end(*dim), &mut |g| visit(&groups[g as usize], q, items, hit))
        }
    }
}

/// The node of items `ids`, narrowing on the dimensions in the bit set `free`.
fn build(items: &[(Extent, u32)], mut ids: Vec<u32>, free: u32) -> Node {
    if ids.len() <= LEAF {
        return Node::Leaf(ids);
    }
    let interval = |i: u32, k: usize| {
        let e = &items[i as usize].0;
        (e.start[k], e.end(k))
    };
    // The free dimension with the most distinct intervals; none with two or more: a leaf.
    let mut best: Option<(usize, usize)> = None;
    let mut seen: Vec<(u32, u32)> = Vec::with_capacity(ids.len());
    for k in (0..32).filter(|k| free & (1 << k) != 0) {
        seen.clear();
        seen.extend(ids.iter().map(|&i| interval(i, k)));
        seen.sort_unstable();
        seen.dedup();
        if seen.len() > 1 && best.is_none_or(|(_, n)| seen.len() > n) {
            best = Some((k, seen.len()));
        }
    }
    let Some((dim, _)) = best else { return Node::Leaf(ids) };
    ids.sort_unstable_by_key(|&i| (interval(i, dim), i));
    let mut groups = Vec::new();
    let mut spans = Vec::new();
    let mut rest = &ids[..];
    while let Some(&first) = rest.first() {
        let iv = interval(first, dim);
        let n = rest.iter().take_while(|&&i| interval(i, dim) == iv).count();
        spans.push((iv.0, iv.1, groups.len() as u32));
        groups.push(build(items, rest[..n].to_vec(), free & !(1 << dim)));
        rest = &rest[n..];
    }
    Node::Split { dim, index: IntervalIndex::new(spans), groups }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::MAX_TENSOR_DIMS;
    use proptest::prelude::*;

    fn extent(b: &[(u32, u32)]) -> Extent {
        let mut e = Extent { start: [0; MAX_TENSOR_DIMS], len: [0; MAX_TENSOR_DIMS], dims: b.len() as u8 };
        for (k, &(s, l)) in b.iter().enumerate() {
            e.start[k] = s;
            e.len[k] = l;
        }
        e
    }

    proptest! {
        /// Every overlapping box is a candidate, exactly once (tiled boxes: few distinct
        /// intervals per dimension, many repeats, as grids make them).
        #[test]
        fn every_overlapping_box_is_a_candidate_once(
            raw in prop::collection::vec(prop::collection::vec((0u32..6, 1u32..4), 3), 0..120),
            q in prop::collection::vec((0u32..8, 1u32..5), 3),
        ) {
            let items: Vec<(Extent, u32)> =
                raw.iter().enumerate().map(|(i, b)| (extent(b), 1000 + i as u32)).collect();
            let q = extent(&q);
            let index = BoxIndex::new(&items);
            let mut got = Vec::new();
            index.candidates(&q, &items, &mut |p| got.push(p));
            let n = got.len();
            got.sort_unstable();
            got.dedup();
            prop_assert_eq!(got.len(), n, "a candidate twice");
            for (e, p) in &items {
                if e.overlaps(&q) {
                    prop_assert!(got.binary_search(p).is_ok(), "overlapping {} missed", p);
                }
            }
        }
    }

    #[test]
    fn narrows_a_tiled_grid_to_the_overlapping_tile() {
        // 16 x 16 tiles of 4 x 4: a query inside one tile gets few candidates, not a row.
        let items: Vec<(Extent, u32)> =
            (0..256u32).map(|i| (extent(&[((i / 16) * 4, 4), ((i % 16) * 4, 4)]), i)).collect();
        let index = BoxIndex::new(&items);
        let mut got = Vec::new();
        index.candidates(&extent(&[(21, 1), (37, 2)]), &items, &mut |p| got.push(p));
        assert_eq!(got, vec![5 * 16 + 9]);
    }
}
