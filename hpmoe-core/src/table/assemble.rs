//! The one place records are created: [`ScheduleTable::build`] and JSON import both feed
//! an [`Assembler`] core by core, and it converts every value into its record field,
//! reporting values that do not fit instead of truncating them.

use super::ScheduleTable;
use super::error::{Quantity, TableError};
use super::inconsistency::Inconsistency;
use super::records::{
    CoreRecord, EntryRecord, FORMAT_VERSION, FamilyRecord, MAGIC, NO_WAIT, SignalRecord, TableHeader, core_kind_code,
};
use crate::limits::{MAX_CORES_PER_RANK, MAX_FAN_IN, MAX_GRID_DIMS, MAX_RANKS, MAX_SIGNALS_PER_TILE};
use crate::model::CoreKind;
use crate::placement::{Signal, Wait};

type Result<T> = std::result::Result<T, TableError>;

/// Collects a table's records: machine first, then families, counters, and the cores in
/// global order with their entries.
#[derive(Debug)]
pub(super) struct Assembler {
    names: String,
    header: TableHeader,
    families: Vec<FamilyRecord>,
    cores: Vec<CoreRecord>,
    counters_per_rank: Vec<u32>,
    entries: Vec<EntryRecord>,
    signals: Vec<SignalRecord>,
}

impl Assembler {
    pub(super) fn new(name: &str, ranks: u32, aic_per_rank: u32, aiv_per_aic: u32) -> Result<Self> {
        if ranks > MAX_RANKS {
            return Err(TableError::too_large(Quantity::Ranks, ranks.into(), MAX_RANKS.into()));
        }
        let cores_per_rank = u64::from(aic_per_rank) * (1 + u64::from(aiv_per_aic));
        if cores_per_rank > u64::from(MAX_CORES_PER_RANK) {
            return Err(TableError::too_large(Quantity::CoresPerRank, cores_per_rank, MAX_CORES_PER_RANK.into()));
        }
        let header = TableHeader {
            magic: MAGIC,
            version: FORMAT_VERSION,
            ranks,
            cores_per_rank: cores_per_rank as u32,
            aic_per_rank,
            aiv_per_aic,
            families: 0,
            instances_per_rank: 0,
            counters_per_rank_max: 0,
            entry_count: 0,
            signal_count: 0,
        };
        let mut a = Assembler {
            names: String::new(),
            header,
            families: Vec::new(),
            cores: Vec::new(),
            counters_per_rank: Vec::new(),
            entries: Vec::new(),
            signals: Vec::new(),
        };
        a.push_name(name)?;
        Ok(a)
    }

    fn push_name(&mut self, name: &str) -> Result<()> {
        if name.contains('\0') {
            return Err(Inconsistency::NulInName { name: name.to_string() }.into());
        }
        self.names.push_str(name);
        self.names.push('\0');
        Ok(())
    }

    /// Adds the next family; its instances follow the previous family's.
    pub(super) fn family(&mut self, name: &str, kind: CoreKind, extents: &[u32]) -> Result<()> {
        if extents.len() > MAX_GRID_DIMS {
            let what = Quantity::GridDims { family: name.to_string() };
            return Err(TableError::too_large(what, extents.len() as u64, MAX_GRID_DIMS as u64));
        }
        let count = extents.iter().fold(1u64, |acc, &e| acc.saturating_mul(e.into()));
        let first = self.header.instances_per_rank;
        let end = u64::from(first) + count;
        if end > u64::from(u32::MAX) {
            let what = Quantity::InstancesUpTo { family: name.to_string() };
            return Err(TableError::too_large(what, end, u32::MAX.into()));
        }
        self.push_name(name)?;
        let mut padded = [0u32; MAX_GRID_DIMS];
        padded[..extents.len()].copy_from_slice(extents);
        self.families.push(FamilyRecord {
            first_instance: first,
            instance_count: count as u32,
            core_kind: core_kind_code(kind),
            dims: extents.len() as u8,
            reserved: 0,
            extents: padded,
        });
        self.header.families += 1;
        self.header.instances_per_rank = end as u32;
        Ok(())
    }

    /// Sets the number of counters each rank uses.
    pub(super) fn counters(&mut self, per_rank: &[u32]) {
        self.counters_per_rank = per_rank.to_vec();
        self.header.counters_per_rank_max = per_rank.iter().copied().max().unwrap_or(0);
    }

    /// Makes room for `entries` more entries and `signals` more signals, so that a table of
    /// known size is written once instead of copied as it grows (a hint: more still fit).
    pub(super) fn reserve(&mut self, entries: usize, signals: usize) {
        self.entries.reserve(entries);
        self.signals.reserve(signals);
    }

    /// Starts the next core (global order); following entries belong to it.
    pub(super) fn start_core(&mut self) {
        self.cores.push(CoreRecord { first_entry: self.entries.len() as u32, entry_count: 0 });
    }

    /// Appends an entry to the current core.
    pub(super) fn entry(&mut self, instance: u32, wait: Option<Wait>, signals: &[Signal]) -> Result<()> {
        let core = self.cores.len().checked_sub(1).ok_or_else(|| TableError::from(Inconsistency::EntryBeforeCore))?;
        if self.entries.len() >= u32::MAX as usize {
            return Err(TableError::too_large(Quantity::Entries, self.entries.len() as u64 + 1, u32::MAX.into()));
        }
        let (wait_counter, wait_target) = match wait {
            None => (NO_WAIT, 0),
            Some(w) if w.counter.raw() == NO_WAIT => {
                return Err(Inconsistency::WaitOnNoWait { instance }.into());
            }
            Some(w) => {
                let target = u16::try_from(w.target).map_err(|_| {
                    TableError::too_large(Quantity::WaitTarget { instance }, w.target.into(), MAX_FAN_IN.into())
                })?;
                (w.counter.raw(), target)
            }
        };
        let signal_count = u16::try_from(signals.len()).map_err(|_| {
            let what = Quantity::InstanceSignals { instance };
            TableError::too_large(what, signals.len() as u64, MAX_SIGNALS_PER_TILE.into())
        })?;
        let first_signal = self.signals.len() as u64;
        if first_signal + signals.len() as u64 > u64::from(u32::MAX) {
            let total = first_signal + signals.len() as u64;
            return Err(TableError::too_large(Quantity::Signals, total, u32::MAX.into()));
        }
        for s in signals {
            let rank = u16::try_from(s.rank.raw())
                .map_err(|_| TableError::from(Inconsistency::SignalRankTooLarge { instance, rank: s.rank.raw() }))?;
            self.signals.push(SignalRecord { counter: s.counter.raw(), rank, reserved: 0 });
        }
        self.entries.push(EntryRecord {
            instance,
            wait_counter,
            wait_target,
            signal_count,
            first_signal: first_signal as u32,
        });
        self.cores[core].entry_count += 1;
        Ok(())
    }

    /// The finished table, validated.
    pub(super) fn finish(mut self) -> Result<ScheduleTable> {
        self.header.entry_count = self.entries.len() as u32;
        self.header.signal_count = self.signals.len() as u32;
        let table = ScheduleTable {
            names: self.names,
            header: self.header,
            families: self.families,
            cores: self.cores,
            counters_per_rank: self.counters_per_rank,
            entries: self.entries,
            signals: self.signals,
        };
        table.view().validate()?;
        Ok(table)
    }
}
