//! Compressed adjacency for large DAGs (typed `u32` ids), topological order and cycle paths.
//!
//! A [`Csr<R, T>`] maps each row id `R` to a list of target ids `T`: node → node in the
//! instance DAG ([`Dag`], the default `Csr<NodeId, NodeId>`), core → node in a placement's
//! queues, and so on; the id types keep one from being read as the other.

use crate::ids::{Id, NodeId};
use std::marker::PhantomData;

/// Compressed sparse rows: the targets of row `n` are `targets[offsets[n]..offsets[n+1]]`.
/// Rows are numbered by `R`, targets are `T`s (see the [module docs](self)).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Csr<R = NodeId, T = NodeId> {
    offsets: Vec<u32>,
    targets: Vec<T>,
    rows: PhantomData<fn(R) -> R>,
}

impl<R: Id, T: Id> Csr<R, T> {
    /// Builds from per-row lists (already in the order wanted; not deduplicated).
    pub fn from_rows<I, L>(rows: I) -> Self
    where
        I: IntoIterator<Item = L>,
        L: IntoIterator<Item = T>,
    {
        let mut offsets = vec![0u32];
        let mut targets = Vec::new();
        for row in rows {
            targets.extend(row);
            offsets.push(u32::try_from(targets.len()).expect("too many entries for u32 offsets"));
        }
        Csr { offsets, targets, rows: PhantomData }
    }

    /// Builds from its two arrays, for callers that fill rows in place without a `Vec` per row:
    /// row `n` is `targets[offsets[n]..offsets[n+1]]`.
    ///
    /// # Panics
    /// If `offsets` is empty, does not start at 0, decreases, or does not end at
    /// `targets.len()`.
    pub fn from_parts(offsets: Vec<u32>, targets: Vec<T>) -> Self {
        assert!(offsets.first() == Some(&0), "offsets start at 0");
        assert!(offsets.windows(2).all(|w| w[0] <= w[1]), "offsets never decrease");
        assert!(offsets.last().map(|&o| o as usize) == Some(targets.len()), "offsets end at the number of targets");
        Csr { offsets, targets, rows: PhantomData }
    }

    /// Every row's targets, row after row.
    pub fn targets(&self) -> &[T] {
        &self.targets
    }

    /// Number of rows (nodes).
    pub fn nodes(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// The row ids `0..nodes`.
    pub fn row_ids(&self) -> impl DoubleEndedIterator<Item = R> + ExactSizeIterator + use<R, T> {
        (0..self.nodes()).map(R::from_index)
    }

    /// Number of entries (edges), all rows together.
    pub fn edges(&self) -> usize {
        self.targets.len()
    }

    /// Row `n`: the targets of `n`, in stored order.
    #[inline]
    pub fn row(&self, n: R) -> &[T] {
        let n = n.index();
        &self.targets[self.offsets[n] as usize..self.offsets[n + 1] as usize]
    }

    /// Length of row `n` (`n`'s out-degree).
    #[inline]
    pub fn degree(&self, n: R) -> usize {
        let n = n.index();
        (self.offsets[n + 1] - self.offsets[n]) as usize
    }

    /// All `(from, to)` pairs in row order.
    pub fn pairs(&self) -> impl Iterator<Item = (R, T)> + '_ {
        self.row_ids().flat_map(move |a| self.row(a).iter().map(move |&b| (a, b)))
    }

    /// Bytes of heap this structure holds.
    pub fn heap_bytes(&self) -> usize {
        self.offsets.capacity() * size_of::<u32>() + self.targets.capacity() * size_of::<T>()
    }
}

impl<K: Id> Csr<K, K> {
    /// Builds from `(from, to)` pairs over `nodes` rows; each row is sorted and deduplicated.
    /// Panics if an id is `>= nodes` or there are more than `u32::MAX` pairs.
    pub fn from_pairs(nodes: usize, pairs: &[(K, K)]) -> Self {
        assert!(pairs.len() < u32::MAX as usize, "too many edges for u32 offsets");
        let mut counts = vec![0u32; nodes + 1];
        for &(a, _) in pairs {
            counts[a.index() + 1] += 1;
        }
        for i in 0..nodes {
            counts[i + 1] += counts[i];
        }
        let mut fill = counts.clone();
        let mut targets = vec![K::new(0); pairs.len()];
        for &(a, b) in pairs {
            assert!(b.index() < nodes, "edge target out of range");
            let slot = &mut fill[a.index()];
            targets[*slot as usize] = b;
            *slot += 1;
        }
        // Sort and deduplicate each row, compacting in place.
        let mut offsets = Vec::with_capacity(nodes + 1);
        offsets.push(0u32);
        let mut write = 0usize;
        for n in 0..nodes {
            let (s, e) = (counts[n] as usize, counts[n + 1] as usize);
            targets[s..e].sort_unstable();
            let mut last = None;
            for i in s..e {
                let t = targets[i];
                if last != Some(t) {
                    targets[write] = t;
                    write += 1;
                    last = Some(t);
                }
            }
            offsets.push(write as u32);
        }
        targets.truncate(write);
        targets.shrink_to_fit();
        Csr { offsets, targets, rows: PhantomData }
    }

    /// The reversed graph (rows and targets number the same things).
    pub fn transpose(&self) -> Self {
        let n = self.nodes();
        let mut counts = vec![0u32; n + 1];
        for &t in &self.targets {
            counts[t.index() + 1] += 1;
        }
        for i in 0..n {
            counts[i + 1] += counts[i];
        }
        let mut fill = counts.clone();
        let mut targets = vec![K::new(0); self.targets.len()];
        for a in self.row_ids() {
            for &b in self.row(a) {
                targets[fill[b.index()] as usize] = a;
                fill[b.index()] += 1;
            }
        }
        // Sources were visited in increasing order, so each row is already sorted.
        Csr { offsets: counts, targets, rows: PhantomData }
    }
}

/// A directed graph with successor and predecessor lists.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Dag {
    /// Row `n`: the nodes `n` has an edge to.
    pub succ: Csr,
    /// Row `n`: the nodes with an edge to `n` (the transpose of `succ`).
    pub pred: Csr,
}

impl Dag {
    /// The graph on `nodes` nodes with the edges `(from, to)` of `pairs` (sorted and deduplicated
    /// per row, as [`Csr::from_pairs`] does).
    pub fn from_pairs(nodes: usize, pairs: &[(NodeId, NodeId)]) -> Dag {
        let succ = Csr::from_pairs(nodes, pairs);
        let pred = succ.transpose();
        Dag { succ, pred }
    }

    /// Number of nodes.
    pub fn nodes(&self) -> usize {
        self.succ.nodes()
    }

    /// Number of edges.
    pub fn edges(&self) -> usize {
        self.succ.edges()
    }

    /// Kahn's algorithm (FIFO, deterministic). On a cycle, returns one cycle as a node path
    /// `[a, b, ..., a]` following edge directions.
    pub fn topo_order(&self) -> Result<Vec<NodeId>, Vec<NodeId>> {
        topo_order_with(self.nodes(), |n| self.succ.row(n).iter().copied(), |n| self.pred.row(n).iter().copied())
    }
}

#[cfg(test)]
impl Dag {
    /// [`Dag::from_pairs`] of raw ids, for tests that write their graphs as literals.
    pub(crate) fn of(nodes: usize, pairs: &[(u32, u32)]) -> Dag {
        let pairs: Vec<(NodeId, NodeId)> = pairs.iter().map(|&(a, b)| (NodeId::new(a), NodeId::new(b))).collect();
        Dag::from_pairs(nodes, &pairs)
    }
}

/// Kahn's algorithm over any graph given by successor and predecessor functions (which must
/// describe the same edges, with multiplicity). Linear time; deterministic order.
/// On a cycle, returns one cycle as a path `[a, b, ..., a]` following edge directions.
pub fn topo_order_with<K, S, SI, P, PI>(nodes: usize, succ: S, pred: P) -> Result<Vec<K>, Vec<K>>
where
    K: Id,
    S: Fn(K) -> SI,
    SI: Iterator<Item = K>,
    P: Fn(K) -> PI,
    PI: Iterator<Item = K>,
{
    let ids = || (0..nodes).map(K::from_index);
    let mut indeg: Vec<u32> = ids().map(|n| pred(n).count() as u32).collect();
    let mut order = Vec::with_capacity(nodes);
    order.extend(ids().filter(|&n| indeg[n.index()] == 0));
    let mut head = 0;
    while head < order.len() {
        let n = order[head];
        head += 1;
        for m in succ(n) {
            let d = &mut indeg[m.index()];
            *d -= 1;
            if *d == 0 {
                order.push(m);
            }
        }
    }
    if order.len() == nodes {
        return Ok(order);
    }
    // Every node left over still waits on a predecessor that is left over too, so walking
    // backwards through left-over predecessors must repeat a node: that loop is a cycle.
    let left = |n: K| indeg[n.index()] > 0;
    let start = ids().find(|&n| left(n)).expect("a cycle leaves nodes over");
    // Where on `path` each node was met, if it was.
    let mut seen: Vec<Option<usize>> = vec![None; nodes];
    let mut path = Vec::new();
    let mut cur = start;
    loop {
        if let Some(at) = seen[cur.index()] {
            let mut cycle = path[at..].to_vec();
            cycle.push(cur);
            cycle.reverse();
            return Err(cycle);
        }
        seen[cur.index()] = Some(path.len());
        path.push(cur);
        cur = pred(cur).find(|&m| left(m)).expect("a left-over node has a left-over predecessor");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(raw: u32) -> NodeId {
        NodeId::new(raw)
    }

    fn pairs(raw: &[(u32, u32)]) -> Vec<(NodeId, NodeId)> {
        raw.iter().map(|&(a, b)| (n(a), n(b))).collect()
    }

    #[test]
    fn csr_dedups_and_transposes() {
        let g = Dag::from_pairs(4, &pairs(&[(0, 2), (0, 1), (0, 2), (1, 3), (2, 3)]));
        assert_eq!(g.succ.row(n(0)), &[n(1), n(2)]);
        assert_eq!(g.pred.row(n(3)), &[n(1), n(2)]);
        assert_eq!(g.edges(), 4);
        assert_eq!(g.topo_order().unwrap(), [0, 1, 2, 3].map(n));
    }

    #[test]
    fn cycle_is_reported_as_a_path() {
        let g = Dag::from_pairs(5, &pairs(&[(0, 1), (1, 2), (2, 3), (3, 1), (3, 4)]));
        let cycle = g.topo_order().unwrap_err();
        assert_eq!(cycle.first(), cycle.last());
        assert_eq!(cycle.len(), 4);
        for w in cycle.windows(2) {
            assert!(g.succ.row(w[0]).contains(&w[1]));
        }
    }
}
