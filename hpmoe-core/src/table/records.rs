//! The fixed-size records of a schedule table.
//!
//! Every record is plain data: `Copy`, public fields (so generated Rust consts can be struct
//! literals), only `u8`/`u16`/`u32` fields, laid out so that the C struct with the same fields
//! in the same order has no implicit padding. Their byte images in the binary blob are the
//! fields in declaration order, little-endian; the sizes below are those images' sizes.

use crate::ids::{CounterId, RankId};
use crate::limits::MAX_GRID_DIMS;
use crate::model::CoreKind;
use crate::placement::{Signal, Wait};
use serde::{Deserialize, Serialize};

/// First eight bytes of every binary table.
pub const MAGIC: [u8; 8] = *b"HPMOETBL";
/// Version of the binary layout (and of the JSON document). Bumped on any layout change.
pub const FORMAT_VERSION: u32 = 1;
/// `EntryRecord::wait_counter` of an entry that does not wait.
pub const NO_WAIT: u32 = u32::MAX;
/// `FamilyRecord::core_kind` of a family on AIC (cube) cores.
pub const CORE_KIND_AIC: u8 = 0;
/// `FamilyRecord::core_kind` of a family on AIV (vector) cores.
pub const CORE_KIND_AIV: u8 = 1;

/// Byte code of a core kind in [`FamilyRecord::core_kind`].
pub const fn core_kind_code(kind: CoreKind) -> u8 {
    match kind {
        CoreKind::Aic => CORE_KIND_AIC,
        CoreKind::Aiv => CORE_KIND_AIV,
    }
}

/// Core kind of a byte code, `None` for an unknown code.
pub const fn core_kind_from_code(code: u8) -> Option<CoreKind> {
    match code {
        CORE_KIND_AIC => Some(CoreKind::Aic),
        CORE_KIND_AIV => Some(CoreKind::Aiv),
        _ => None,
    }
}

/// Table-wide facts. In the binary blob these fields open the file header, with the
/// checksum, the total size and the section directory added (see the module docs of
/// [`crate::table`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TableHeader {
    /// Always [`MAGIC`].
    pub magic: [u8; 8],
    /// Always [`FORMAT_VERSION`].
    pub version: u32,
    /// Number of ranks (expert-parallel size).
    pub ranks: u32,
    /// Cores of one rank: `aic_per_rank * (1 + aiv_per_aic)`.
    pub cores_per_rank: u32,
    /// AIC cores per rank: local cores `0..aic_per_rank`.
    pub aic_per_rank: u32,
    /// AIV cores per AIC (2 on 910B / A3): AIV `v` is sub-block `v % aiv_per_aic` of AIC
    /// `v / aiv_per_aic`.
    pub aiv_per_aic: u32,
    /// Number of tile families.
    pub families: u32,
    /// Tile instances of one rank (every rank has the same ones).
    pub instances_per_rank: u32,
    /// Largest entry of the per-rank counter counts: the size, in counters, of the counter
    /// workspace every rank must allocate.
    pub counters_per_rank_max: u32,
    /// Entries of all cores of all ranks.
    pub entry_count: u32,
    /// Signals of all entries.
    pub signal_count: u32,
}

impl TableHeader {
    /// Bytes of these fields in the blob (the full file header is longer).
    pub const SIZE: usize = 48;
}

/// One tile family: which local instance ids it owns and the shape of its grid.
///
/// Local instance `i` with `first_instance <= i < first_instance + instance_count` is grid
/// point `i - first_instance` of this family in row-major order over `extents[..dims]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct FamilyRecord {
    /// The family's first local instance id.
    pub first_instance: u32,
    /// Its number of instances per rank.
    pub instance_count: u32,
    /// [`CORE_KIND_AIC`] or [`CORE_KIND_AIV`].
    pub core_kind: u8,
    /// Grid dimensions in use, `0..=4`.
    pub dims: u8,
    /// Always 0; makes the 2-byte padding before `extents` explicit.
    pub reserved: u16,
    /// Grid extents; entries at and beyond `dims` are 0.
    pub extents: [u32; MAX_GRID_DIMS],
}

impl FamilyRecord {
    /// Bytes of one record in the blob.
    pub const SIZE: usize = 28;

    /// The extents in use (`extents[..dims]`, clamped to the array).
    pub fn grid(&self) -> &[u32] {
        &self.extents[..(self.dims as usize).min(MAX_GRID_DIMS)]
    }

    /// The family's core kind, `None` if the code is unknown.
    pub fn kind(&self) -> Option<CoreKind> {
        core_kind_from_code(self.core_kind)
    }

    /// Whether local instance id `instance` belongs to this family.
    pub fn contains(&self, instance: u32) -> bool {
        instance >= self.first_instance && instance - self.first_instance < self.instance_count
    }
}

/// The entries of one core: `entries[first_entry .. first_entry + entry_count]`.
/// One record per global core (`rank * cores_per_rank + local core`), rank-major.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct CoreRecord {
    /// Index of the core's first entry in the table's entry list.
    pub first_entry: u32,
    /// Number of entries the core runs.
    pub entry_count: u32,
}

impl CoreRecord {
    /// Bytes of one record in the blob.
    pub const SIZE: usize = 8;
}

/// One tile instance in a core's list, in the order the core runs them.
///
/// 16 bytes: the core first waits until counter `wait_counter` of its own rank is at least
/// `wait_target` (unless `wait_counter` is [`NO_WAIT`]), then runs local instance
/// `instance`, then sends `signals[first_signal .. first_signal + signal_count]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct EntryRecord {
    /// Local instance id within the core's rank.
    pub instance: u32,
    /// Counter on the core's own rank, or [`NO_WAIT`].
    pub wait_counter: u32,
    /// Value the counter must reach; 0 when there is no wait.
    pub wait_target: u16,
    /// Number of signals the entry sends after its tile.
    pub signal_count: u16,
    /// Index of its first signal in the table's signal list.
    pub first_signal: u32,
}

impl EntryRecord {
    /// Bytes of one record in the blob.
    pub const SIZE: usize = 16;

    /// The entry's wait, if it has one.
    pub fn wait(&self) -> Option<Wait> {
        (self.wait_counter != NO_WAIT)
            .then(|| Wait { counter: CounterId::new(self.wait_counter), target: self.wait_target as u32 })
    }

    /// Indices of the entry's signals in the table's signal list.
    pub fn signal_range(&self) -> std::ops::Range<usize> {
        let first = self.first_signal as usize;
        first..first + self.signal_count as usize
    }
}

/// After its tile, an entry adds 1 to counter `counter` on rank `rank`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct SignalRecord {
    /// The counter's id on rank `rank`.
    pub counter: u32,
    /// The rank whose counter is incremented.
    pub rank: u16,
    /// Always 0; makes the padding to a 4-byte multiple explicit.
    pub reserved: u16,
}

impl SignalRecord {
    /// Bytes of one record in the blob.
    pub const SIZE: usize = 8;

    /// The signal this record stores, with typed ids.
    pub fn signal(&self) -> Signal {
        Signal { rank: RankId::new(self.rank.into()), counter: CounterId::new(self.counter) }
    }
}
