//! Named limits. Every one is checked and reported as an error naming the limit; none is
//! silently truncated. They keep the macro's time and memory bounded on any input and keep
//! tables within what the schedule-table format and the device runtime address.

/// Grid dimensions of one tile family.
pub const MAX_GRID_DIMS: usize = 4;
/// Dimensions of one tensor.
pub const MAX_TENSOR_DIMS: usize = 4;
/// Extent of one tensor dimension (region bounds are stored as `u32`).
pub const MAX_DIM_EXTENT: u64 = u32::MAX as u64;
/// Ranks (expert-parallel size); signals store the destination rank as `u16`.
pub const MAX_RANKS: u32 = 1024;
/// Cores of one rank.
pub const MAX_CORES_PER_RANK: u32 = 1024;
/// Instances of one tile family on one rank.
pub const MAX_FAMILY_INSTANCES: u64 = 1 << 20;
/// Tile instances of the whole taskflow, all ranks together.
pub const MAX_INSTANCES: u64 = 1 << 23;
/// Dependency edges of the whole instance DAG, all ranks together, before reduction.
pub const MAX_EDGES: u64 = 1 << 26;
/// Ops in one tile body.
pub const MAX_OPS_PER_TILE: usize = 64;
/// Region arguments of one op call.
pub const MAX_ARGS_PER_OP: usize = 16;
/// Node visits the ordering check of write-after-read / write-after-write pairs may spend.
pub const MAX_HAZARD_VISITS: u64 = 1 << 28;
/// Entries in one core's list of the schedule table (`u16` positions in diagnostics).
pub const MAX_TASKS_PER_CORE: u32 = u16::MAX as u32;
/// Event counters per rank: 4 bytes each in the counter workspace.
pub const MAX_COUNTERS_PER_RANK: u32 = 1 << 20;
/// Signals a counter may need before its wait is released (table stores `u16`).
pub const MAX_FAN_IN: u32 = u16::MAX as u32;
/// Signals one tile may send (table stores `u16`).
pub const MAX_SIGNALS_PER_TILE: u32 = u16::MAX as u32;
/// Errors reported per kind of check before the rest are summarised as a count.
pub const MAX_ERRORS_PER_CHECK: usize = 16;

/// Unified buffer of one AIV core (Ascend 910B / A3, ascendc-api.md: "UB 192 KB").
pub const UB_BYTES: u64 = 192 * 1024;
/// L1 buffer of one AIC core (Ascend 910B / A3, ascendc-api.md: "L1 512 KB").
pub const L1_BYTES: u64 = 512 * 1024;
/// Depth of the K panels a matmul stages in L1 per step, in elements (an estimate; see
/// [`crate::resolve::check_footprint`]).
pub const MATMUL_K_STEP: u64 = 64;
/// Alignment of every UB / L1 buffer, in bytes.
pub const BUFFER_ALIGN: u64 = 32;
