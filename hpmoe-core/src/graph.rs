//! Compressed adjacency for large DAGs (`u32` node ids), topological order and cycle paths.

/// Compressed sparse rows: the neighbours of node `n` are `targets[offsets[n]..offsets[n+1]]`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Csr {
    offsets: Vec<u32>,
    targets: Vec<u32>,
}

impl Csr {
    /// Builds from `(from, to)` pairs; each row is sorted and deduplicated.
    /// Panics if an id is `>= nodes` or there are more than `u32::MAX` pairs.
    pub fn from_pairs(nodes: usize, pairs: &[(u32, u32)]) -> Csr {
        assert!(pairs.len() < u32::MAX as usize, "too many edges for u32 offsets");
        let mut counts = vec![0u32; nodes + 1];
        for &(a, _) in pairs {
            counts[a as usize + 1] += 1;
        }
        for i in 0..nodes {
            counts[i + 1] += counts[i];
        }
        let mut fill = counts.clone();
        let mut targets = vec![0u32; pairs.len()];
        for &(a, b) in pairs {
            assert!((b as usize) < nodes, "edge target out of range");
            let slot = &mut fill[a as usize];
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
        Csr { offsets, targets }
    }

    /// Builds from per-node lists (already in the order wanted; not deduplicated).
    pub fn from_rows<I, R>(rows: I) -> Csr
    where
        I: IntoIterator<Item = R>,
        R: IntoIterator<Item = u32>,
    {
        let mut offsets = vec![0u32];
        let mut targets = Vec::new();
        for row in rows {
            targets.extend(row);
            offsets.push(u32::try_from(targets.len()).expect("too many entries for u32 offsets"));
        }
        Csr { offsets, targets }
    }

    /// Builds from its two arrays, for callers that fill rows in place without a `Vec` per row:
    /// row `n` is `targets[offsets[n]..offsets[n+1]]`.
    ///
    /// # Panics
    /// If `offsets` is empty, does not start at 0, decreases, or does not end at
    /// `targets.len()`.
    pub fn from_parts(offsets: Vec<u32>, targets: Vec<u32>) -> Csr {
        assert!(offsets.first() == Some(&0), "offsets start at 0");
        assert!(offsets.windows(2).all(|w| w[0] <= w[1]), "offsets never decrease");
        assert!(offsets.last().map(|&o| o as usize) == Some(targets.len()), "offsets end at the number of targets");
        Csr { offsets, targets }
    }

    /// Every row's targets, row after row.
    pub fn targets(&self) -> &[u32] {
        &self.targets
    }

    /// Number of rows (nodes).
    pub fn nodes(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Number of entries (edges), all rows together.
    pub fn edges(&self) -> usize {
        self.targets.len()
    }

    /// Row `n`: the targets of node `n`, in stored order.
    pub fn row(&self, n: u32) -> &[u32] {
        let n = n as usize;
        &self.targets[self.offsets[n] as usize..self.offsets[n + 1] as usize]
    }

    /// Length of row `n` (node `n`'s out-degree).
    pub fn degree(&self, n: u32) -> usize {
        self.row(n).len()
    }

    /// The reversed graph.
    pub fn transpose(&self) -> Csr {
        let n = self.nodes();
        let mut counts = vec![0u32; n + 1];
        for &t in &self.targets {
            counts[t as usize + 1] += 1;
        }
        for i in 0..n {
            counts[i + 1] += counts[i];
        }
        let mut fill = counts.clone();
        let mut targets = vec![0u32; self.targets.len()];
        for a in 0..n as u32 {
            for &b in self.row(a) {
                targets[fill[b as usize] as usize] = a;
                fill[b as usize] += 1;
            }
        }
        // Sources were visited in increasing order, so each row is already sorted.
        Csr { offsets: counts, targets }
    }

    /// All `(from, to)` pairs in row order.
    pub fn pairs(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        (0..self.nodes() as u32).flat_map(move |a| self.row(a).iter().map(move |&b| (a, b)))
    }

    /// Bytes of heap this structure holds.
    pub fn heap_bytes(&self) -> usize {
        (self.offsets.capacity() + self.targets.capacity()) * 4
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
    pub fn from_pairs(nodes: usize, pairs: &[(u32, u32)]) -> Dag {
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
    pub fn topo_order(&self) -> Result<Vec<u32>, Vec<u32>> {
        topo_order_with(self.nodes(), |n| self.succ.row(n).iter().copied(), |n| self.pred.row(n).iter().copied())
    }
}

/// Kahn's algorithm over any graph given by successor and predecessor functions (which must
/// describe the same edges, with multiplicity). Linear time; deterministic order.
/// On a cycle, returns one cycle as a path `[a, b, ..., a]` following edge directions.
pub fn topo_order_with<S, SI, P, PI>(nodes: usize, succ: S, pred: P) -> Result<Vec<u32>, Vec<u32>>
where
    S: Fn(u32) -> SI,
    SI: Iterator<Item = u32>,
    P: Fn(u32) -> PI,
    PI: Iterator<Item = u32>,
{
    let mut indeg: Vec<u32> = (0..nodes as u32).map(|n| pred(n).count() as u32).collect();
    let mut order = Vec::with_capacity(nodes);
    order.extend((0..nodes as u32).filter(|&n| indeg[n as usize] == 0));
    let mut head = 0;
    while head < order.len() {
        let n = order[head];
        head += 1;
        for m in succ(n) {
            let d = &mut indeg[m as usize];
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
    let left = |n: u32| indeg[n as usize] > 0;
    let start = (0..nodes as u32).find(|&n| left(n)).expect("a cycle leaves nodes over");
    let mut seen = vec![u32::MAX; nodes];
    let mut path = Vec::new();
    let mut cur = start;
    loop {
        if seen[cur as usize] != u32::MAX {
            let mut cycle = path[seen[cur as usize] as usize..].to_vec();
            cycle.push(cur);
            cycle.reverse();
            return Err(cycle);
        }
        seen[cur as usize] = path.len() as u32;
        path.push(cur);
        cur = pred(cur).find(|&m| left(m)).expect("a left-over node has a left-over predecessor");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csr_dedups_and_transposes() {
        let g = Dag::from_pairs(4, &[(0, 2), (0, 1), (0, 2), (1, 3), (2, 3)]);
        assert_eq!(g.succ.row(0), &[1, 2]);
        assert_eq!(g.pred.row(3), &[1, 2]);
        assert_eq!(g.edges(), 4);
        assert_eq!(g.topo_order().unwrap(), vec![0, 1, 2, 3]);
    }

    #[test]
    fn cycle_is_reported_as_a_path() {
        let g = Dag::from_pairs(5, &[(0, 1), (1, 2), (2, 3), (3, 1), (3, 4)]);
        let cycle = g.topo_order().unwrap_err();
        assert_eq!(cycle.first(), cycle.last());
        assert_eq!(cycle.len(), 4);
        for w in cycle.windows(2) {
            assert!(g.succ.row(w[0]).contains(&w[1]));
        }
    }
}
