//! The schedule table: for every core of every rank, the ordered list of tile instances it
//! runs, each with the counter it waits on and the counters it signals.
//!
//! A [`ScheduleTable`] is built from the scheduler's results ([`ScheduleTable::build`]) and
//! has four forms, all deterministic (equal tables give byte-identical output):
//!
//! - a binary blob with a CRC-32 ([`ScheduleTable::to_bytes`], [`ScheduleTable::from_bytes`];
//!   layout in [`binary`]),
//! - a C/C++ header describing that blob ([`ScheduleTable::c_header`]),
//! - JSON for people and tools ([`ScheduleTable::to_json`], [`ScheduleTable::from_json`]),
//! - Rust source defining a `const` [`TableView<'static>`] ([`ScheduleTable::to_rust_source`]).
//!
//! # Records
//!
//! | record | bytes | one per |
//! |--------|------:|---------|
//! | [`FamilyRecord`] | 28 | tile family: first local instance id, count, core kind, grid extents |
//! | [`CoreRecord`] | 8 | global core (`rank * cores_per_rank + local`, AIC first): its range of entries |
//! | counter count (`u32`) | 4 | rank: counters `0..n` it uses |
//! | [`EntryRecord`] | 16 | tile instance on every rank: local instance id, wait counter and target, signal range |
//! | [`SignalRecord`] | 8 | signal: destination rank and counter |
//!
//! **Bytes per entry: 16, plus 8 per signal it sends**; the rest of the blob (a 104-byte
//! header, 28 per family, 8 per core, 4 per rank, the names) is shared by all entries.
//! [`ScheduleTable::bytes_per_entry`] gives the average over the whole blob.
//!
//! The 16-byte entry keeps `first_signal` although signals are stored entry by entry, so a
//! worker can find any entry's signals without walking the entries before it; the `u16`
//! target and signal count are the limits [`crate::limits::MAX_FAN_IN`] and
//! [`crate::limits::MAX_SIGNALS_PER_TILE`].
//!
//! # Turning an entry into a tile
//!
//! An entry names a *local* instance id (the same ids on every rank). The families are
//! contiguous in these ids, in declaration order; within a family the grid is numbered
//! row-major. [`TableView::coords_of_instance`] does that decoding; a device worker does
//! the same with the [`FamilyRecord`]s.
//!
//! # Names
//!
//! The table's name and the families' names are kept (in the blob's names section, the
//! JSON, comments of the C header and the Rust source), so every form round-trips to an
//! equal table.

mod assemble;
pub mod binary;
mod build;
mod c_header;
mod error;
mod inconsistency;
mod json;
mod layout;
mod records;
mod rust_consts;
mod validate;
mod view;

pub use c_header::{CHECKED_CONSTANTS, CORE_WALK, c_constant_name, family_identifiers};
pub use error::{Quantity, TableError};
pub use inconsistency::{EntryProblem, FamilyProblem, Inconsistency, JsonProblem};
pub use records::{
    CORE_KIND_AIC, CORE_KIND_AIV, CoreRecord, EntryRecord, FORMAT_VERSION, FamilyRecord, MAGIC, NO_WAIT, SignalRecord,
    TableHeader, core_kind_code, core_kind_from_code,
};
pub use view::TableView;

/// A validated schedule table, owning its records. See the [module docs](self).
///
/// Every constructor ([`build`](Self::build), [`from_bytes`](Self::from_bytes),
/// [`from_json`](Self::from_json)) checks every invariant listed at
/// [`TableView::validate`], except [`TableView::to_owned`], which copies a view as it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScheduleTable {
    /// The table's name, then each family's name, each followed by `'\0'`.
    names: String,
    header: TableHeader,
    families: Vec<FamilyRecord>,
    cores: Vec<CoreRecord>,
    counters_per_rank: Vec<u32>,
    entries: Vec<EntryRecord>,
    signals: Vec<SignalRecord>,
}

impl ScheduleTable {
    /// The table borrowed as slices; all read accessors are on the view.
    pub fn view(&self) -> TableView<'_> {
        TableView {
            names: &self.names,
            header: self.header,
            families: &self.families,
            cores: &self.cores,
            counters_per_rank: &self.counters_per_rank,
            entries: &self.entries,
            signals: &self.signals,
        }
    }

    /// The table's name (the taskflow's name).
    pub fn name(&self) -> &str {
        self.view().name()
    }

    /// Table-wide facts: ranks, cores, families, instances, counters, entries and signals.
    pub fn header(&self) -> &TableHeader {
        &self.header
    }

    /// Tile families, in declaration order.
    pub fn families(&self) -> &[FamilyRecord] {
        &self.families
    }

    /// Name of family `family`.
    ///
    /// # Panics
    /// If `family` is not a family index.
    pub fn family_name(&self, family: usize) -> &str {
        self.view().family_name(family)
    }

    /// One record per global core.
    pub fn cores(&self) -> &[CoreRecord] {
        &self.cores
    }

    /// Per rank: the number of counters it uses.
    pub fn counters_per_rank(&self) -> &[u32] {
        &self.counters_per_rank
    }

    /// All entries, core after core.
    pub fn entries(&self) -> &[EntryRecord] {
        &self.entries
    }

    /// All signals, entry after entry.
    pub fn signals(&self) -> &[SignalRecord] {
        &self.signals
    }

    /// The entries of a global core, in the order it runs them.
    ///
    /// # Panics
    /// If `core` is not a global core id of the table.
    pub fn core_entries(&self, core: u32) -> &[EntryRecord] {
        self.view().core_entries(core)
    }

    /// The signals an entry of this table sends after its tile.
    pub fn entry_signals(&self, entry: &EntryRecord) -> &[SignalRecord] {
        self.view().entry_signals(entry)
    }

    /// Size of the binary blob, in bytes.
    pub fn total_bytes(&self) -> usize {
        self.view().total_bytes()
    }

    /// Blob bytes per entry, averaged (see [`TableView::bytes_per_entry`]).
    pub fn bytes_per_entry(&self) -> f64 {
        self.view().bytes_per_entry()
    }
}
