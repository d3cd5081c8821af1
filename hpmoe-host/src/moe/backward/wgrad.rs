//! The backward's weight gradients `dW = Xᵀ · dG` per expert, summed in a fixed order
//! (ordered accumulation): under balanced routing a written group and a chain of accumulating
//! tiles over [`MoeShape::wgrad_rows`]-row groups, under natural routing a written slot sum
//! and a chain of accumulating slot sums over groups of source ranks
//! ([`MoeShape::wgrad_source_groups`]); both in the order of [`MoeShape::wgrad_group`].

use super::NaturalTensors;
use crate::moe::{MoeShape, Routing};
use hpmoe_core::model::{Affine, CoreKind, IndexSel, Taskflow, TensorRef, TileBuilder};

/// The most gradient rows one weight-gradient tile computes: its `x` panel (rows × 64 BF16,
/// double-buffered: 256 KiB at 1024 rows) must leave room in the AIC's 512 KiB of L1 for the
/// `g` panel (64 × up to 896 columns, 224 KiB).
const WGRAD_MAX_ROWS: u64 = 1024;

/// Gradient rows per weight-gradient tile: the largest divisor of `rows` up to
/// [`WGRAD_MAX_ROWS`] (1024 of DeepSeek-V3's 2048 and 7168).
pub(super) fn wgrad_row_block(rows: u64) -> u64 {
    (1..=rows.min(WGRAD_MAX_ROWS)).rev().find(|d| rows.is_multiple_of(*d)).unwrap_or(1)
}

/// One weight gradient `grad[e]` (F32 `[E, rows, width]`) `= Σ_r x[e][r]ᵀ · g[e][r]` over an
/// expert's received rows `r`, with `g` of `width` columns tiled in blocks of `cols`.
pub(super) struct WeightGradient<'a> {
    pub(super) x: &'a TensorRef,
    pub(super) g: &'a TensorRef,
    pub(super) grad: &'a TensorRef,
    pub(super) rows: u64,
    pub(super) width: u64,
    pub(super) cols: u64,
}

impl MoeShape {
    /// The weight gradient `grad[e] = Σ_rows x[e]ᵀ · g[e]` (see [`WeightGradient`]): family
    /// `name` (grid `(e, n)`) writes the first group of [`MoeShape::wgrad_rows`] rows'
    /// product (`matmul_tn`); if an expert receives more rows, `{name}_acc` (grid `(e, m, n)`)
    /// adds group `m + 1`'s (`matmul_tn_accumulate`), instance `m` after `m − 1`: one order.
    /// Under natural routing see `add_natural_weight_gradient`.
    pub(super) fn add_weight_gradient(
        &self,
        tf: &mut Taskflow,
        name: &str,
        wg: WeightGradient<'_>,
        natural: Option<&NaturalTensors>,
    ) {
        if let Some(n) = natural {
            return self.add_natural_weight_gradient(tf, name, wg, n);
        }
        let WeightGradient { x, g, grad, rows, width, cols } = wg;
        let (e, w) = (self.local_experts(), self.wgrad_rows);
        let groups = self.wgrad_groups();
        let block = wgrad_row_block(rows);
        // The first received row of the group summed at chain step `step` (see `wgrad_group`).
        let group_row = |step: Affine| match self.wgrad_sources_per_group() {
            Some(q) => (Affine::rank().quotient(q) + (groups as i64 - 1) - step).modulo(groups) * w as i64,
            None => step * w as i64,
        };
        // Rows `row ..` of the expert's received rows, gradient rows `p·block ..`, columns `n·cols ..`.
        let args = |ex: Affine, row: Affine, p: Affine, n: Affine| {
            let (c, q) = (n * cols as i64, p * block as i64);
            [
                x.at(ex.clone()).slice(row.clone(), w).slice(q.clone(), block),
                g.at(ex.clone()).slice(row, w).slice(c.clone(), cols),
                grad.at(ex).slice(q, block).slice(c, cols),
            ]
        };
        tf.tile(name, CoreKind::Aic, |tb| {
            let (ex, p, n) = (tb.grid("e", e), tb.grid("p", rows / block), tb.grid("n", width / cols));
            tb.op("matmul_tn", args(ex, group_row(Affine::constant(0)), p, n));
        });
        if groups > 1 {
            let acc = format!("{name}_acc");
            tf.tile(&acc, CoreKind::Aic, |tb| {
                let (ex, m) = (tb.grid("e", e), tb.grid("m", groups - 1));
                let (p, n) = (tb.grid("p", rows / block), tb.grid("n", width / cols));
                tb.op("matmul_tn_accumulate", args(ex.clone(), group_row(m.clone() + 1), p.clone(), n.clone()));
                let at = IndexSel::At;
                tb.after(&acc, [at(ex), at(m - 1), at(p), at(n)]);
            });
        }
    }

    /// The weight gradient under natural routing: an expert's rows are `R` slots of `C` rows
    /// of which only a run-time count was sent, so the rows past a count were never written and
    /// may not be read. The gradient is summed over `G` = [`MoeShape::wgrad_source_groups`]
    /// groups of `q = R / G` source ranks, the group at chain step `m` [`MoeShape::wgrad_group`]'s
    /// (the order its rows arrive): `{name}` (AIC, grid `(e, n)`) writes step 0's sum into each
    /// gradient column block (`matmul_tn_slots`, `+0.0` where the group sent no row), and if
    /// `G > 1` `{name}_acc` (AIC, grid `(e, m, n)`) adds step `m + 1`'s
    /// (`matmul_tn_slots_accumulate`), instance `m` after `m − 1` (`after({name}_acc(e, m - 1,
    /// n))`; its first link waits for `{name}`'s write, an earlier family's). Each tile sums its
    /// `q` slots to their counts in `recv_counts[src, e]` (one call per block of gradient rows,
    /// as the balanced tiles split them). Per group one FP32 accumulation, sources and rows
    /// ascending, written or added to the gradient once, the groups in one chain order: the same
    /// bits on every run and schedule, and the device keeps each group's sum in L0C. A tile waits
    /// only for the blocks of its group's sources (a skipped block still signals), so the first
    /// groups' sums run on the AICs while later sources' rows arrive, for one more read and
    /// write of the FP32 gradient per extra group.
    fn add_natural_weight_gradient(&self, tf: &mut Taskflow, name: &str, wg: WeightGradient<'_>, n: &NaturalTensors) {
        let WeightGradient { x, g, grad, rows, width, cols } = wg;
        let (e, c, groups) = (self.local_experts(), self.slot_rows(), self.wgrad_groups());
        let q = u64::from(self.ranks) / groups;
        let block = wgrad_row_block(rows);
        // Chain step `step`'s slot sums, `op` per block of gradient rows, into column block `col`.
        let sums = |tb: &mut TileBuilder<'_>, op: &str, ex: Affine, step: Affine, col: Affine| {
            // The group `wgrad_group` names, `(RANK / q − 1 − step) mod G`, written with a
            // non-negative coefficient (the DSL's form, whose host code `-1 * m` would not be
            // lint-clean), then its first source and its first row.
            let group = (Affine::rank().quotient(q) + (step + 1) * (groups as i64 - 1)).modulo(groups);
            let (src, first) = (group.clone() * q as i64, group * (q * c) as i64);
            let cc = col * cols as i64;
            for p in 0..(rows / block) as i64 {
                let at = p * block as i64;
                tb.op(
                    op,
                    [
                        x.at(ex.clone()).slice(first.clone(), q * c).slice(at, block),
                        g.at(ex.clone()).slice(first.clone(), q * c).slice(cc.clone(), cols),
                        grad.at(ex.clone()).slice(at, block).slice(cc.clone(), cols),
                        n.recv_counts.slice(src.clone(), q).slice(ex.clone(), 1),
                    ],
                );
            }
        };
        tf.tile(name, CoreKind::Aic, |tb| {
            let (ex, col) = (tb.grid("e", e), tb.grid("n", width / cols));
            sums(tb, "matmul_tn_slots", ex, Affine::constant(0), col);
        });
        if groups > 1 {
            let acc = format!("{name}_acc");
            tf.tile(&acc, CoreKind::Aic, |tb| {
                let (ex, m, col) = (tb.grid("e", e), tb.grid("m", groups - 1), tb.grid("n", width / cols));
                sums(tb, "matmul_tn_slots_accumulate", ex.clone(), m.clone() + 1, col.clone());
                tb.after(&acc, [IndexSel::At(ex), IndexSel::At(m - 1), IndexSel::At(col)]);
            });
        }
    }

    /// In how many groups each expert's weight gradient is summed: `rows_per_expert /
    /// wgrad_rows` under balanced routing, [`MoeShape::wgrad_source_groups`] under natural.
    pub fn wgrad_groups(&self) -> u64 {
        match self.routing {
            Routing::Balanced => self.rows_per_expert() / self.wgrad_rows.max(1),
            Routing::Natural { .. } => self.wgrad_source_groups.max(1),
        }
    }

    /// The source ranks whose rows make one weight-gradient group when a group is whole
    /// sources' rows and an expert has more than one group: under balanced routing when
    /// `wgrad_rows` is a multiple of the rows per source, under natural routing always
    /// (`ranks / wgrad_source_groups`); `None` otherwise (groups of one or several blocks of
    /// one source, or one group).
    pub fn wgrad_sources_per_group(&self) -> Option<u64> {
        let groups = self.wgrad_groups();
        if groups <= 1 {
            return None;
        }
        match self.routing {
            Routing::Natural { .. } => Some(u64::from(self.ranks) / groups),
            Routing::Balanced => {
                let per_source = self.rows_per_source();
                (per_source > 0 && self.wgrad_rows.is_multiple_of(per_source)).then(|| self.wgrad_rows / per_source)
            }
        }
    }

    /// Which group of received rows (group `j` holds rows `j·W ..` with `W` =
    /// [`MoeShape::wgrad_rows`] under balanced routing, source ranks `j·q ..` under natural
    /// routing with `q` sources per group) the weight gradients of the experts on `rank` sum at chain step `step`
    /// (`0` is the group summed first, `1, 2, …` those added after it).
    ///
    /// When a group is whole sources' rows (`q` sources, [`MoeShape::wgrad_sources_per_group`])
    /// the order follows the rows' arrival: a rank receives its own rows first and then, as
    /// the puts go out rank-rotated (sender `s` writes rank `s + 1` first), those of rank
    /// `RANK − 1`, `RANK − 2`, …; the group holding sources `RANK − q + 1 ..= RANK` (modulo the
    /// ranks) would complete first, but it is contiguous only for some ranks, so the groups
    /// are the aligned ones (`j·q .. (j + 1)·q`) taken from the one below the rank's own:
    /// `A − 1, A − 2, …, A + 1, A` with `A = RANK / q`, i.e. `(RANK / q + G − 1 − step) % G`
    /// with `G` groups. Group `A − 1` completes after `RANK % q + q` rounds, the rank's own
    /// (whose sources above the rank arrive in the last rounds) last. Otherwise the groups go
    /// in row order, `step`. Either way one fixed order per rank: the same on every run.
    pub fn wgrad_group(&self, rank: u32, step: u64) -> u64 {
        let groups = self.wgrad_groups();
        match self.wgrad_sources_per_group() {
            Some(q) => (u64::from(rank) / q + groups - 1 - step % groups) % groups,
            None => step,
        }
    }
}
