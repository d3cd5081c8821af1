//! Random taskflows that are valid by construction, for property tests.
//!
//! Family `i` writes its own tensor `out_i`, one row per instance, so its instances never
//! conflict, and reads a region of an earlier family's tensor chosen by a random affine map
//! of its grid indices. AIV families may instead put their row into a symmetric tensor on
//! the next rank (rows grouped by source rank, so puts never collide); readers of such a
//! tensor read the block that arrived from the previous rank. Random `after` entries point
//! at earlier families. The result is a random DAG with data edges (local and cross-rank)
//! and explicit edges.

#![allow(dead_code)]

use hpmoe_core::model::{Affine, CoreKind, DType, IndexSel, MachineProfile, Region, Taskflow, TensorRef};
use proptest::prelude::*;

#[derive(Clone, Debug)]
pub enum ReadPattern {
    /// All rows.
    Whole,
    /// The row `(a * i0 + b * i1 + c) % rows`.
    Row(i64, i64, i64),
}

/// One family's recipe.
#[derive(Clone, Debug)]
pub struct FamilySpec {
    pub aic: bool,
    pub grid: Vec<u64>,
    /// Read from earlier family `j % i` with a pattern; `None` reads the input.
    pub read_from: Option<(usize, ReadPattern)>,
    pub put: bool,
    /// `(earlier family j % i, select all of its instances?)`.
    pub afters: Vec<(usize, bool)>,
}

#[derive(Clone, Debug)]
pub struct TaskflowSpec {
    pub aic: u32,
    pub ranks: u32,
    pub families: Vec<FamilySpec>,
}

pub fn family_spec() -> impl Strategy<Value = FamilySpec> {
    let pattern = prop_oneof![
        1 => Just(ReadPattern::Whole),
        4 => (0i64..4, 0i64..4, 0i64..8).prop_map(|(a, b, c)| ReadPattern::Row(a, b, c)),
    ];
    (
        any::<bool>(),
        prop::collection::vec(1u64..5, 0..3),
        prop::option::weighted(0.85, (0usize..64, pattern)),
        prop::bool::weighted(0.35),
        prop::collection::vec((0usize..64, prop::bool::weighted(0.2)), 0..3),
    )
        .prop_map(|(aic, grid, read_from, put, afters)| FamilySpec { aic, grid, read_from, put, afters })
}

pub fn taskflow_spec(max_families: usize) -> impl Strategy<Value = TaskflowSpec> {
    (1u32..4, 1u32..5, prop::collection::vec(family_spec(), 1..max_families))
        .prop_map(|(aic, ranks, families)| TaskflowSpec { aic, ranks, families })
}

/// An earlier family's output: tensor, rows, and whether it arrived by put.
#[derive(Clone)]
struct Out {
    tensor: TensorRef,
    rows: u64,
    symmetric: bool,
}

impl TaskflowSpec {
    pub fn build(&self) -> Taskflow {
        let mut tf = Taskflow::new("random", MachineProfile::small(self.aic, self.ranks));
        let r = i64::from(self.ranks);
        let w = tf.input("w", DType::Bf16, &[8, 8]);
        let src = tf.input("src", DType::Bf16, &[8, 8]);
        let mut outs: Vec<Out> = Vec::new();
        for (i, f) in self.families.iter().enumerate() {
            let rows: u64 = f.grid.iter().product();
            let put = f.put && !f.aic && self.ranks > 1;
            let out = if put {
                tf.symmetric(&format!("out{i}"), DType::Bf16, &[u64::from(self.ranks), rows, 8])
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
                f.afters
                    .iter()
                    .map(|&(j, all)| (format!("f{}", j % i), self.families[j % i].grid.clone(), all))
                    .collect()
            };
            let core = if f.aic { CoreKind::Aic } else { CoreKind::Aiv };
            tf.tile(&format!("f{i}"), core, |t| {
                let idx: Vec<Affine> = f.grid.iter().enumerate().map(|(k, &e)| t.grid(&format!("i{k}"), e)).collect();
                let mut lin = Affine::constant(0);
                for (k, e) in idx.iter().enumerate() {
                    lin = lin * f.grid[k] as i64 + e.clone();
                }
                let read_region: Region = match read {
                    None => src.slice(lin.clone().modulo(8), 1),
                    Some((o, pattern)) => {
                        // What arrived by put sits in the block of the previous rank.
                        let base = if o.symmetric {
                            o.tensor.at((Affine::rank() + (r - 1)).modulo(r as u64))
                        } else {
                            o.tensor.whole()
                        };
                        match pattern {
                            ReadPattern::Whole => base,
                            ReadPattern::Row(a, b, c) => {
                                let i0 = idx.first().cloned().unwrap_or_default();
                                let i1 = idx.get(1).cloned().unwrap_or_default();
                                base.slice((i0 * a + i1 * b + c).modulo(o.rows), 1)
                            }
                        }
                    }
                };
                if f.aic {
                    t.op("matmul", [read_region, w.whole(), out.slice(lin, 1)]);
                } else if put {
                    let dst = (Affine::rank() + 1).modulo(u64::from(self.ranks));
                    t.put(read_region, out.on(dst).at(Affine::rank()).slice(lin, 1));
                } else {
                    t.op("copy", [read_region, out.slice(lin, 1)]);
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
            outs.push(Out { tensor: out, rows, symmetric: put });
        }
        tf
    }
}
