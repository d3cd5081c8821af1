//! Every invariant of a schedule table, checked without trusting any count or index.
//!
//! Run on every table that is built, decoded or imported, so that code reading a table
//! (the device worker, the simulator, the executor) may index it without checks.

use super::error::{Quantity, TableError};
use super::inconsistency::{EntryProblem, FamilyProblem, Inconsistency};
use super::records::{FORMAT_VERSION, MAGIC, NO_WAIT, core_kind_from_code};
use super::view::TableView;
use crate::limits::{MAX_CORES_PER_RANK, MAX_COUNTERS_PER_RANK, MAX_GRID_DIMS, MAX_RANKS, MAX_TASKS_PER_CORE};

type Result<T> = std::result::Result<T, TableError>;

impl TableView<'_> {
    /// Checks every invariant of the table:
    ///
    /// - the header: magic, version, a blob size that fits the `u32` size field, `cores_per_rank = aic_per_rank * (1 + aiv_per_aic)`,
    ///   limits on ranks and cores, and every count equal to its list's length;
    /// - names: the table's name and one per family, each `'\0'`-terminated;
    /// - families: contiguous in instance ids from 0 to `instances_per_rank`, known core
    ///   kind, at most 4 dims, `instance_count` = product of the extents, unused extents
    ///   and reserved bytes 0;
    /// - cores: entry ranges contiguous, core after core, covering every entry, each at
    ///   most [`MAX_TASKS_PER_CORE`] long;
    /// - entries: every instance of every rank exactly once, on a core of its family's
    ///   kind and its own rank; a wait on a counter of the core's rank (or [`NO_WAIT`] with
    ///   target 0); signal ranges contiguous, entry after entry, covering every signal;
    /// - signals: to an existing rank and a counter of that rank, reserved bytes 0;
    /// - fan-in: every wait's target is reachable, i.e. at most the number of signals its
    ///   counter receives from the whole table (a larger target would hang forever).
    ///
    /// Memory used is proportional to the number of entries and signals.
    pub fn validate(&self) -> Result<()> {
        self.check_header()?;
        self.check_names()?;
        self.check_counters()?;
        self.check_families()?;
        self.check_cores()?;
        self.check_entries()?;
        self.check_signals()?;
        self.check_fan_in()
    }

    fn check_header(&self) -> Result<()> {
        let h = &self.header;
        if h.magic != MAGIC {
            return Err(TableError::BadMagic { found: h.magic });
        }
        if h.version != FORMAT_VERSION {
            return Err(TableError::UnsupportedVersion { found: h.version, supported: FORMAT_VERSION });
        }
        if h.ranks > MAX_RANKS {
            return Err(TableError::too_large(Quantity::Ranks, h.ranks.into(), MAX_RANKS.into()));
        }
        let cores = u64::from(h.aic_per_rank) * (1 + u64::from(h.aiv_per_aic));
        if cores != u64::from(h.cores_per_rank) {
            let (header, aic, aiv) = (h.cores_per_rank, h.aic_per_rank, h.aiv_per_aic);
            return Err(Inconsistency::CoresPerRank { header, aic, aiv, cores }.into());
        }
        if h.cores_per_rank > MAX_CORES_PER_RANK {
            return Err(TableError::too_large(
                Quantity::CoresPerRank,
                h.cores_per_rank.into(),
                MAX_CORES_PER_RANK.into(),
            ));
        }
        let lists = [
            ("families", u64::from(h.families), self.families.len()),
            ("cores", u64::from(h.ranks) * u64::from(h.cores_per_rank), self.cores.len()),
            ("per-rank counter counts", u64::from(h.ranks), self.counters_per_rank.len()),
            ("entries", u64::from(h.entry_count), self.entries.len()),
            ("signals", u64::from(h.signal_count), self.signals.len()),
        ];
        for (what, expected, len) in lists {
            if len as u64 != expected {
                return Err(Inconsistency::SectionLength { what, expected, len }.into());
            }
        }
        let total = self.layout().total;
        if total > u64::from(u32::MAX) {
            return Err(TableError::too_large(Quantity::TableBytes, total, u32::MAX.into()));
        }
        Ok(())
    }

    fn check_names(&self) -> Result<()> {
        let expected = self.families.len() + 1;
        let found = self.names.bytes().filter(|&b| b == 0).count();
        if found != expected || !self.names.ends_with('\0') {
            return Err(Inconsistency::NameCount { expected, found }.into());
        }
        Ok(())
    }

    fn check_counters(&self) -> Result<()> {
        for (rank, &count) in self.counters_per_rank.iter().enumerate() {
            if count > MAX_COUNTERS_PER_RANK {
                let what = Quantity::RankCounters { rank };
                return Err(TableError::too_large(what, count.into(), MAX_COUNTERS_PER_RANK.into()));
            }
        }
        let max = self.counters_per_rank.iter().copied().max().unwrap_or(0);
        if max != self.header.counters_per_rank_max {
            return Err(Inconsistency::CounterMax { header: self.header.counters_per_rank_max, max }.into());
        }
        Ok(())
    }

    fn check_families(&self) -> Result<()> {
        let mut next = 0u64;
        for (i, f) in self.families.iter().enumerate() {
            let name = self.family_names().nth(i).unwrap_or("");
            let fail = |problem| Err(Inconsistency::Family { index: i, name: name.to_string(), problem }.into());
            if u64::from(f.first_instance) != next {
                return fail(FamilyProblem::Start { first: f.first_instance, expected: next });
            }
            if core_kind_from_code(f.core_kind).is_none() {
                return fail(FamilyProblem::CoreKind(f.core_kind));
            }
            if f.dims as usize > MAX_GRID_DIMS {
                return fail(FamilyProblem::Dims { dims: f.dims, max: MAX_GRID_DIMS });
            }
            if f.extents[f.dims as usize..].iter().any(|&e| e != 0) || f.reserved != 0 {
                return fail(FamilyProblem::Padding);
            }
            let product = f.grid().iter().fold(1u64, |acc, &e| acc.saturating_mul(e.into()));
            if product != u64::from(f.instance_count) {
                let (grid, instances) = (f.grid().to_vec(), f.instance_count);
                return fail(FamilyProblem::GridPoints { grid, points: product, instances });
            }
            next += u64::from(f.instance_count);
        }
        if next != u64::from(self.header.instances_per_rank) {
            return Err(Inconsistency::FamilyInstances { covered: next, header: self.header.instances_per_rank }.into());
        }
        Ok(())
    }

    fn check_cores(&self) -> Result<()> {
        let mut next = 0u64;
        for (c, core) in self.cores.iter().enumerate() {
            if u64::from(core.first_entry) != next {
                return Err(Inconsistency::CoreStart { core: c, first: core.first_entry, expected: next }.into());
            }
            if core.entry_count > MAX_TASKS_PER_CORE {
                let what = Quantity::CoreEntries { core: c };
                return Err(TableError::too_large(what, core.entry_count.into(), MAX_TASKS_PER_CORE.into()));
            }
            next += u64::from(core.entry_count);
        }
        if next != self.entries.len() as u64 {
            return Err(Inconsistency::CoreEntries { held: next, entries: self.entries.len() }.into());
        }
        Ok(())
    }

    fn check_entries(&self) -> Result<()> {
        let per_rank = u64::from(self.header.instances_per_rank);
        let expected = u64::from(self.header.ranks) * per_rank;
        if self.entries.len() as u64 != expected {
            let (entries, ranks) = (self.entries.len(), self.header.ranks);
            return Err(Inconsistency::EntryCount { entries, ranks, per_rank }.into());
        }
        // One bit per (rank, instance); its size is bounded by the number of entries.
        let mut seen = vec![0u64; self.entries.len().div_ceil(64)];
        let mut next_signal = 0u64;
        for core in 0..self.cores.len() as u32 {
            let rank = self.rank_of_core(core);
            let kind = self.core_kind(core);
            for (pos, e) in self.core_entries(core).iter().enumerate() {
                let fail = |problem| Err(Inconsistency::Entry { core, pos, problem }.into());
                let Some(family) = self.family_of_instance(e.instance) else {
                    return fail(EntryProblem::NoSuchInstance { instance: e.instance, per_rank });
                };
                let family_kind = core_kind_from_code(self.families[family].core_kind);
                if family_kind != Some(kind) {
                    let (instance, needs) = (e.instance, family_kind);
                    return fail(EntryProblem::WrongKind { instance, family, needs, core: kind });
                }
                let bit = u64::from(rank) * per_rank + u64::from(e.instance);
                let (word, mask) = ((bit / 64) as usize, 1u64 << (bit % 64));
                if seen[word] & mask != 0 {
                    return fail(EntryProblem::Twice { instance: e.instance, rank });
                }
                seen[word] |= mask;
                if e.wait_counter == NO_WAIT {
                    if e.wait_target != 0 {
                        return fail(EntryProblem::TargetWithoutWait);
                    }
                } else if e.wait_counter >= self.counters_per_rank[rank as usize] {
                    let (counter, counters) = (e.wait_counter, self.counters_per_rank[rank as usize]);
                    return fail(EntryProblem::Counter { counter, rank, counters });
                }
                if u64::from(e.first_signal) != next_signal {
                    return fail(EntryProblem::SignalStart { first: e.first_signal, expected: next_signal });
                }
                next_signal += u64::from(e.signal_count);
            }
        }
        if next_signal != self.signals.len() as u64 {
            return Err(Inconsistency::SignalTotal { sent: next_signal, signals: self.signals.len() }.into());
        }
        Ok(())
    }

    fn check_signals(&self) -> Result<()> {
        for (i, s) in self.signals.iter().enumerate() {
            let Some(&counters) = self.counters_per_rank.get(s.rank as usize) else {
                let ranks = self.header.ranks;
                return Err(Inconsistency::SignalRank { signal: i, rank: s.rank, ranks }.into());
            };
            if s.counter >= counters || s.reserved != 0 {
                let (counter, rank, reserved) = (s.counter, s.rank, s.reserved);
                return Err(Inconsistency::SignalCounter { signal: i, counter, rank, counters, reserved }.into());
            }
        }
        Ok(())
    }

    fn check_fan_in(&self) -> Result<()> {
        let received = Received::count(self);
        for core in 0..self.cores.len() as u32 {
            let rank = self.rank_of_core(core);
            for e in self.core_entries(core) {
                let Some(wait) = e.wait() else { continue };
                let count = received.get(rank, wait.counter.raw());
                if (count as u64) < u64::from(wait.target) {
                    let (instance, counter, target) = (e.instance, wait.counter.raw(), wait.target);
                    return Err(Inconsistency::Unreachable { instance, core, counter, rank, target, count }.into());
                }
            }
        }
        Ok(())
    }
}

/// How many signals each counter of each rank receives, from the whole table. Signals and
/// waits name counters in range (checked before), so the counts are one flat array over every
/// rank's counters when it is no larger than the table's entries and signals (hpmoe's tables:
/// at most one counter per waiting entry); a table declaring more counters than that gets the
/// sorted `(rank, counter)` keys of its signals instead, so memory stays proportional to the
/// table whatever its header says.
enum Received {
    /// Per rank, where its counters start in `count`; per counter, its signals.
    Dense { base: Vec<usize>, count: Vec<usize> },
    /// Every signal's `(rank, counter)`, sorted.
    Sorted(Vec<(u32, u32)>),
}

impl Received {
    fn count(t: &TableView<'_>) -> Self {
        let total: u64 = t.counters_per_rank.iter().map(|&c| u64::from(c)).sum();
        if total > (t.entries.len() + t.signals.len()) as u64 {
            return Self::sorted(t);
        }
        let mut base = Vec::with_capacity(t.counters_per_rank.len() + 1);
        let mut next = 0usize;
        for &c in t.counters_per_rank.iter() {
            base.push(next);
            next += c as usize;
        }
        base.push(next);
        let mut count = vec![0usize; next];
        for s in t.signals.iter() {
            count[base[usize::from(s.rank)] + s.counter as usize] += 1;
        }
        Received::Dense { base, count }
    }

    fn sorted(t: &TableView<'_>) -> Self {
        let mut keys: Vec<(u32, u32)> = t.signals.iter().map(|s| (u32::from(s.rank), s.counter)).collect();
        keys.sort_unstable();
        Received::Sorted(keys)
    }

    /// The signals counter `counter` of rank `rank` receives.
    fn get(&self, rank: u32, counter: u32) -> usize {
        match self {
            Received::Dense { base, count } => count[base[rank as usize] + counter as usize],
            Received::Sorted(keys) => {
                let key = (rank, counter);
                keys.partition_point(|&k| k <= key) - keys.partition_point(|&k| k < key)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Received;
    use crate::testing::taskflow_spec;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

        /// Both ways of counting give every counter of a planned table the same count, and a
        /// planned table is counted densely.
        #[test]
        fn dense_and_sorted_counts_agree(spec in taskflow_spec(5)) {
            let c = crate::plan(&spec.taskflow()).expect("the generator's taskflows plan");
            let view = c.table.view();
            let (dense, sorted) = (Received::count(&view), Received::sorted(&view));
            let counted_densely = matches!(dense, Received::Dense { .. });
            prop_assert!(counted_densely);
            for (rank, &counters) in view.counters_per_rank.iter().enumerate() {
                for counter in 0..counters {
                    prop_assert_eq!(dense.get(rank as u32, counter), sorted.get(rank as u32, counter));
                }
            }
        }
    }
}
