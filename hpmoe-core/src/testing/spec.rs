//! The recipe of a random taskflow ([`TaskflowSpec`]), its proptest strategies and how it is
//! built into a [`Taskflow`].
//!
//! Family `i` writes its own tensor `out{i}`, one row per instance (the row is the instance's
//! linear index over its grid), so its instances never conflict, and reads a region of an earlier
//! family's tensor chosen by a random affine map of its grid indices (or, with
//! [`ReadPattern::Whole`], all of it: an AIV family sums the rows it reads into its own with
//! `weighted_accumulate`, a matmul or a put becomes a fold). An AIV family may instead put its row
//! into a symmetric tensor on another rank ([`PutPattern`]); rows are grouped by source rank, so
//! puts never collide, and a reader of such a tensor reads a block every row of which arrived. An
//! AIV family that copies may also accumulate a row of the input into its own. Random `after`
//! entries point at earlier families, and a family may chain its own
//! instances ([`ChainSpec`]). The result is a random DAG with data edges (local and cross-rank) and
//! explicit edges; [`TaskflowSpec::taskflow`] then adds the folds ([`super::folds`]) and the
//! guards ([`super::guards`]).

use super::guards::GuardSpec;
use crate::model::{Affine, CoreKind, DType, IndexSel, MachineProfile, Region, Taskflow, TensorRef};
use proptest::prelude::*;

/// Which rows of an earlier family's output a family reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReadPattern {
    /// All rows: an AIV family that does not put sums them into its row (`zero`, then
    /// `weighted_accumulate` with weights from the input `wts`); a matmul or a put becomes a fold
    /// (see [`super::folds`]).
    Whole,
    /// The row `(a·i0 + b·i1 + c) % rows`, `i0` and `i1` the first two grid indices (0 where the
    /// grid has fewer dimensions).
    Row(i64, i64, i64),
}

/// Where an AIV family puts its rows: into block `RANK` of a symmetric tensor on the destination.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PutPattern {
    /// To rank `(RANK + k) % R`, `k` taken into `1..R` (as `1 + (k - 1) % (R - 1)`); a reader on
    /// rank `r` reads the block of rank `(r - k) % R`.
    Shift(u32),
    /// To every rank: the family's grid gains a last dimension `dst` of extent `R`; a reader
    /// reads the block of rank `(RANK + m) % R`, `m` its own [`FamilySpec::block`].
    AllToAll,
}

/// One family's recipe.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FamilySpec {
    /// On an AIC (a matmul) or an AIV (a copy or a put).
    pub aic: bool,
    /// Grid extents: 0–2 dimensions, each 1–8 (mostly 1–4).
    pub grid: Vec<u64>,
    /// Read from earlier family `j % i` with a pattern; `None` (or the first family) reads the
    /// input `src`.
    pub read_from: Option<(usize, ReadPattern)>,
    /// Which block of an all-to-all output this family reads (see [`PutPattern::AllToAll`]).
    pub block: u32,
    /// Put instead of copy (AIV families on more than one rank only).
    pub put: Option<PutPattern>,
    /// A copying AIV family also accumulates a row of `src` into its row.
    pub accumulate: bool,
    /// `after` entries: `(earlier family j % i, select all of its instances?)`.
    pub afters: Vec<(usize, bool)>,
    /// The family's guard.
    pub guard: GuardSpec,
    /// A chain inside the family (see [`ChainSpec`]); ignored for a family without grid.
    pub chain: Option<ChainSpec>,
}

/// A dependency of a family on itself: each instance runs after its neighbour along grid
/// dimension `dim % dims` (`after(f(.., i - 1, ..))`, or `i + 1` when not `forward`), so the
/// first instance of each chain has none. A copying AIV family adds its row into the chain's row
/// of `chain{i}` (zeroed by a family `f{i}_seed` declared just before it), an AIC family
/// writes the product of an input row into it: either way the result shows the order the chain ran in (bf16
/// sums round differently in another order; the last product stays).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChainSpec {
    /// The grid dimension the chain runs along, modulo the family's dimension count.
    pub dim: usize,
    /// Whether each instance follows its predecessor (`i - 1`) rather than its successor (`i + 1`).
    pub forward: bool,
}

/// A random taskflow's recipe: the machine and the families, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskflowSpec {
    /// AIC cores per rank (each with two AIVs).
    pub aic: u32,
    /// Ranks, 1–4.
    pub ranks: u32,
    /// The families, in program order.
    pub families: Vec<FamilySpec>,
}

/// The recipe of one family.
pub fn family_spec() -> impl Strategy<Value = FamilySpec> {
    let pattern = prop_oneof![
        1 => Just(ReadPattern::Whole),
        4 => (0i64..4, 0i64..4, 0i64..8).prop_map(|(a, b, c)| ReadPattern::Row(a, b, c)),
    ];
    // Mostly small, sometimes up to 8: long core queues (and hardware-flag runs) now and then.
    let extent = prop_oneof![6 => 1u64..5, 1 => 5u64..9];
    let put = prop_oneof![
        1 => (1u32..4).prop_map(PutPattern::Shift),
        1 => Just(PutPattern::AllToAll),
    ];
    (
        (any::<bool>(), prop::collection::vec(extent, 0..3), prop::option::weighted(0.85, (0usize..64, pattern))),
        (0u32..4, prop::option::weighted(0.4, put), prop::bool::weighted(0.3)),
        prop::collection::vec((0usize..64, prop::bool::weighted(0.2)), 0..3),
        (
            prop::option::weighted(0.35, (0i64..3, 0i64..3, -1i64..4)),
            prop::option::weighted(
                0.3,
                (0usize..2, any::<bool>()).prop_map(|(dim, forward)| ChainSpec { dim, forward }),
            ),
        ),
    )
        .prop_map(|((aic, grid, read_from), (block, put, accumulate), afters, (guard, chain))| FamilySpec {
            aic,
            grid,
            read_from,
            block,
            put,
            accumulate,
            afters,
            guard,
            chain,
        })
}

/// Random taskflows of 1 to `max_families - 1` families on 1–4 ranks of 1–3 AICs.
pub fn taskflow_spec(max_families: usize) -> impl Strategy<Value = TaskflowSpec> {
    (1u32..4, 1u32..5, prop::collection::vec(family_spec(), 1..max_families))
        .prop_map(|(aic, ranks, families)| TaskflowSpec { aic, ranks, families })
}

/// An earlier family's output: tensor, rows, and how a reader finds the block that arrived by put.
#[derive(Clone)]
struct Out {
    tensor: TensorRef,
    rows: u64,
    put: Option<PutPattern>,
}

impl TaskflowSpec {
    /// Whether family `i` puts (AIV, more than one rank, a put pattern).
    pub fn puts(&self, i: usize) -> bool {
        let f = &self.families[i];
        f.put.is_some() && !f.aic && self.ranks > 1
    }

    /// Family `i`'s full grid: its [`FamilySpec::grid`], plus the destination dimension of an
    /// all-to-all put.
    pub fn grid(&self, i: usize) -> Vec<u64> {
        let mut grid = self.families[i].grid.clone();
        if self.puts(i) && self.families[i].put == Some(PutPattern::AllToAll) {
            grid.push(u64::from(self.ranks));
        }
        grid
    }

    /// Family `i`'s chain, its dimension taken into the family's own grid (`None` without grid).
    pub fn chain(&self, i: usize) -> Option<ChainSpec> {
        let f = &self.families[i];
        let c = f.chain?;
        (!f.grid.is_empty()).then(|| ChainSpec { dim: c.dim % f.grid.len(), forward: c.forward })
    }

    /// The guards of the families, in order.
    pub fn guards(&self) -> Vec<GuardSpec> {
        self.families.iter().map(|f| f.guard).collect()
    }

    /// The taskflow the property tests run: [`Self::build`], its whole reads turned into folds
    /// ([`super::folds::with_folds`]) and its guards added ([`super::guards::with_guards`]).
    /// Run it with `hpmoe_host::testing::op_impls` on `hpmoe_host::testing::inputs` (feature `testing` of hpmoe-host).
    pub fn taskflow(&self) -> Taskflow {
        super::guards::with_guards(super::folds::with_folds(self.build()), &self.guards())
    }

    /// The families alone, without folds or guards: a matmul or a put of a whole read has
    /// mismatched shapes.
    pub fn build(&self) -> Taskflow {
        let mut tf = Taskflow::new("random", MachineProfile::small(self.aic, self.ranks));
        let ranks = self.ranks;
        let r = i64::from(ranks);
        let w = tf.input("w", DType::Bf16, &[8, 8]);
        let src = tf.input("src", DType::Bf16, &[8, 8]);
        let wts = tf.input("wts", DType::F32, &[64]);
        let mut outs: Vec<Out> = Vec::new();
        for (i, f) in self.families.iter().enumerate() {
            let rows: u64 = f.grid.iter().product();
            let put = if self.puts(i) { f.put.clone() } else { None };
            let out = if put.is_some() {
                tf.symmetric(&format!("out{i}"), DType::Bf16, &[u64::from(ranks), rows, 8])
            } else {
                tf.scratch(&format!("out{i}"), DType::Bf16, &[rows, 8])
            };
            let read = match &f.read_from {
                Some((j, p)) if !outs.is_empty() => Some((outs[j % outs.len()].clone(), p.clone())),
                _ => None,
            };
            let afters: Vec<(String, Vec<u64>, bool)> = if i == 0 {
                Vec::new()
            } else {
                f.afters.iter().map(|&(j, all)| (format!("f{}", j % i), self.grid(j % i), all)).collect()
            };
            let core = if f.aic { CoreKind::Aic } else { CoreKind::Aiv };
            let block = i64::from(f.block);
            let accumulate = f.accumulate && !f.aic && put.is_none();
            let chain = self.chain(i).map(|c| {
                let links = rows / f.grid[c.dim];
                let tensor = tf.output(&format!("chain{i}"), DType::Bf16, &[links, 8]);
                if !f.aic && put.is_none() {
                    let seed = tensor.clone();
                    tf.tile(&format!("f{i}_seed"), CoreKind::Aiv, |t| t.op("zero", [seed.whole()]));
                }
                (c, tensor)
            });
            tf.tile(&format!("f{i}"), core, |t| {
                let idx: Vec<Affine> = f.grid.iter().enumerate().map(|(k, &e)| t.grid(&format!("i{k}"), e)).collect();
                let mut full = idx.clone();
                let dst = match put {
                    Some(PutPattern::AllToAll) => {
                        let d = t.grid("dst", u64::from(ranks));
                        full.push(d.clone());
                        Some(d)
                    }
                    Some(PutPattern::Shift(k)) => {
                        let k = 1 + i64::from(k - 1) % (r - 1);
                        Some((Affine::rank() + k).modulo(u64::from(ranks)))
                    }
                    None => None,
                };
                let mut lin = Affine::constant(0);
                for (k, e) in idx.iter().enumerate() {
                    lin = lin * f.grid[k] as i64 + e.clone();
                }
                let mut whole_rows = None;
                let read_region: Region = match read {
                    None => src.slice(lin.clone().modulo(8), 1),
                    Some((o, pattern)) => {
                        // The block of the source rank whose puts reach this rank.
                        let base = match o.put {
                            Some(PutPattern::Shift(k)) => {
                                let k = 1 + i64::from(k - 1) % (r - 1);
                                o.tensor.at((Affine::rank() + (r - k)).modulo(u64::from(ranks)))
                            }
                            Some(PutPattern::AllToAll) => {
                                o.tensor.at((Affine::rank() + block).modulo(u64::from(ranks)))
                            }
                            None => o.tensor.whole(),
                        };
                        match pattern {
                            ReadPattern::Whole => {
                                whole_rows = Some(o.rows);
                                base
                            }
                            ReadPattern::Row(a, b, c) => {
                                let i0 = idx.first().cloned().unwrap_or_default();
                                let i1 = idx.get(1).cloned().unwrap_or_default();
                                base.slice((i0 * a + i1 * b + c).modulo(o.rows), 1)
                            }
                        }
                    }
                };
                if f.aic {
                    t.op("matmul", [read_region, w.whole(), out.slice(lin.clone(), 1)]);
                } else if let Some(dst) = &dst {
                    t.put(read_region, out.on(dst.clone()).at(Affine::rank()).slice(lin.clone(), 1));
                } else {
                    if let Some(rows) = whole_rows {
                        t.op("zero", [out.slice(lin.clone(), 1)]);
                        t.op("weighted_accumulate", [read_region, wts.slice(0, rows), out.slice(lin.clone(), 1)]);
                    } else {
                        t.op("copy", [read_region, out.slice(lin.clone(), 1)]);
                    }
                    if accumulate {
                        t.op("accumulate", [src.slice((lin.clone() + 3).modulo(8), 1), out.slice(lin.clone(), 1)]);
                    }
                }
                if let Some((c, tensor)) = &chain {
                    // The chain's row: the instance's linear index over the other dimensions.
                    let mut link = Affine::constant(0);
                    for (k, e) in idx.iter().enumerate().filter(|&(k, _)| k != c.dim) {
                        link = link * f.grid[k] as i64 + e.clone();
                    }
                    if f.aic {
                        // A row of the input, not the tile's own output: the AscendC backend does
                        // not order one matmul's global-memory write before the next one's read
                        // within a tile (the strict emulator reports it).
                        t.op("matmul", [src.slice(lin.clone().modulo(8), 1), w.whole(), tensor.at(link)]);
                    } else if dst.is_none() {
                        t.op("accumulate", [out.slice(lin.clone(), 1), tensor.at(link)]);
                    }
                    let step = if c.forward { -1 } else { 1 };
                    let sel = full
                        .iter()
                        .enumerate()
                        .map(|(k, e)| IndexSel::At(if k == c.dim { e.clone() + step } else { e.clone() }));
                    t.after(&format!("f{i}"), sel.collect::<Vec<_>>());
                }
                for (name, grid, all) in &afters {
                    let sel = grid.iter().enumerate().map(|(k, &e)| {
                        if *all {
                            IndexSel::All
                        } else {
                            IndexSel::At(idx.get(k).cloned().unwrap_or_default().modulo(e))
                        }
                    });
                    t.after(name, sel.collect::<Vec<_>>());
                }
            });
            outs.push(Out { tensor: out, rows, put });
        }
        tf
    }
}
