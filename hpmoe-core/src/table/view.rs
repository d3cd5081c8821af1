//! [`TableView`]: a schedule table made of borrowed slices, so that it can also be a
//! `const` (`TableView<'static>`) in generated Rust code. All read accessors live here;
//! [`ScheduleTable`] hands out a view of itself.

use super::ScheduleTable;
use super::layout::Layout;
use super::records::{CoreRecord, EntryRecord, FamilyRecord, SignalRecord, TableHeader};
use crate::model::CoreKind;
use smallvec::SmallVec;

/// A schedule table borrowed from somewhere: an owned [`ScheduleTable`], or `'static` data
/// emitted by [`ScheduleTable::to_rust_source`].
///
/// The fields are public so a `const` can be written as a struct literal. A view made by
/// hand is not checked; [`TableView::validate`] checks it. Accessors may panic on a view
/// that does not validate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TableView<'a> {
    /// The table's name, then each family's name in family order, each followed by `'\0'`.
    pub names: &'a str,
    /// Table-wide facts (counts, ranks, cores).
    pub header: TableHeader,
    /// One per tile family, in declaration order.
    pub families: &'a [FamilyRecord],
    /// One per global core (`rank * cores_per_rank + local core`).
    pub cores: &'a [CoreRecord],
    /// Per rank: counters it uses (ids `0..counters_per_rank[rank]`).
    pub counters_per_rank: &'a [u32],
    /// All cores' entries, core by core.
    pub entries: &'a [EntryRecord],
    /// All entries' signals, entry by entry.
    pub signals: &'a [SignalRecord],
}

impl<'a> TableView<'a> {
    /// The table's name (the taskflow's name).
    pub fn name(&self) -> &'a str {
        self.names.split('\0').next().unwrap_or("")
    }

    /// Family names, in family order.
    pub fn family_names(&self) -> impl Iterator<Item = &'a str> + 'a {
        let count = self.families.len();
        self.names.split('\0').skip(1).take(count)
    }

    /// Name of family `family`.
    ///
    /// # Panics
    /// If `family` is not a family index.
    pub fn family_name(&self, family: usize) -> &'a str {
        self.family_names().nth(family).unwrap_or_else(|| panic!("family {family} out of range"))
    }

    /// Number of cores, all ranks.
    pub fn core_count(&self) -> usize {
        self.cores.len()
    }

    /// Kind of a global core.
    pub fn core_kind(&self, core: u32) -> CoreKind {
        let cores_per_rank = self.header.cores_per_rank.max(1);
        if core % cores_per_rank < self.header.aic_per_rank { CoreKind::Aic } else { CoreKind::Aiv }
    }

    /// Name of a global core as [`crate::model::MachineProfile::core_name`] writes it:
    /// `r1.aic3`, `r0.aiv17`.
    pub fn core_name(&self, core: u32) -> String {
        let local = core % self.header.cores_per_rank.max(1);
        let rank = self.rank_of_core(core);
        match self.core_kind(core) {
            CoreKind::Aic => format!("r{rank}.aic{local}"),
            CoreKind::Aiv => format!("r{rank}.aiv{}", local - self.header.aic_per_rank),
        }
    }

    /// Rank of a global core.
    pub fn rank_of_core(&self, core: u32) -> u32 {
        core / self.header.cores_per_rank.max(1)
    }

    /// The entries of a global core, in the order it runs them.
    ///
    /// # Panics
    /// If `core >= core_count()`.
    pub fn core_entries(&self, core: u32) -> &'a [EntryRecord] {
        let c = self.cores[core as usize];
        let first = c.first_entry as usize;
        &self.entries[first..first + c.entry_count as usize]
    }

    /// The signals an entry sends after its tile.
    pub fn entry_signals(&self, entry: &EntryRecord) -> &'a [SignalRecord] {
        &self.signals[entry.signal_range()]
    }

    /// Family index of a local instance id, `None` if it is not one.
    pub fn family_of_instance(&self, instance: u32) -> Option<usize> {
        let f = self.families.partition_point(|f| f.first_instance.saturating_add(f.instance_count) <= instance);
        self.families.get(f).filter(|rec| rec.contains(instance)).map(|_| f)
    }

    /// Family index and grid coordinates (row-major) of a local instance id.
    pub fn coords_of_instance(&self, instance: u32) -> Option<(usize, SmallVec<[u32; 4]>)> {
        let f = self.family_of_instance(instance)?;
        let grid = self.families[f].grid();
        let mut index = instance - self.families[f].first_instance;
        let mut coords: SmallVec<[u32; 4]> = smallvec::smallvec![0; grid.len()];
        for (slot, &extent) in coords.iter_mut().zip(grid).rev() {
            *slot = index % extent.max(1);
            index /= extent.max(1);
        }
        Some((f, coords))
    }

    /// Where each section of this table's binary blob lies.
    pub(crate) fn layout(&self) -> Layout {
        Layout::new(
            self.families.len() as u64,
            self.cores.len() as u64,
            self.counters_per_rank.len() as u64,
            self.entries.len() as u64,
            self.signals.len() as u64,
            self.names.len() as u64,
        )
    }

    /// Size of the binary blob [`ScheduleTable::to_bytes`] writes, in bytes.
    pub fn total_bytes(&self) -> usize {
        self.layout().total as usize
    }

    /// Blob bytes per entry, everything included (header, families, cores, counters,
    /// signals, names), averaged over the entries: the figure to compare against "a few
    /// bytes per entry". An entry alone is [`EntryRecord::SIZE`] (16) bytes plus
    /// [`SignalRecord::SIZE`] (8) per signal. A table without entries reports its total.
    pub fn bytes_per_entry(&self) -> f64 {
        self.total_bytes() as f64 / self.entries.len().max(1) as f64
    }

    /// Copies the view into an owned table. Does not validate (see [`TableView::validate`]).
    pub fn to_owned(&self) -> ScheduleTable {
        ScheduleTable {
            names: self.names.to_owned(),
            header: self.header,
            families: self.families.to_vec(),
            cores: self.cores.to_vec(),
            counters_per_rank: self.counters_per_rank.to_vec(),
            entries: self.entries.to_vec(),
            signals: self.signals.to_vec(),
        }
    }
}
