//! [`Program`]: what a `#[taskflow]` function returns — the schedule table, the IR, a
//! host-executable form of every tile, and the reference bodies of user-defined ops.

use crate::expand::Extent;
use crate::limits::MAX_TENSOR_DIMS;
use crate::model::Taskflow;
use crate::table::{ScheduleTable, TableError};
use std::fmt;

/// The host form of one tile family: runs the instance at grid coordinates `coords` (one
/// per grid dimension, in declaration order) by calling [`TileContext::call`] once per op
/// of the tile body, in order, with the op's regions evaluated for that instance. A tile
/// with a `run_if_above` guard first reads its count with [`TileContext::read_count`] and
/// calls no op at all unless the count is greater than the guard's bound for the instance.
pub type TileFn = fn(&mut dyn TileContext, &[u64]);

/// What a host-executable tile needs from whoever runs it (the host executor, a test):
/// the rank it runs on, and a way to run an op on concrete regions.
pub trait TileContext {
    /// The rank executing the tile.
    fn rank(&self) -> u32;

    /// Runs op `op` (a name of the taskflow's op registry) on `args`, in parameter order.
    /// A put's destination region names its destination rank; every other region is on
    /// [`TileContext::rank`].
    fn call(&mut self, op: &str, args: &[ConcreteRegion]);

    /// The value of the `i32` element `count` (one element, on [`TileContext::rank`]): the
    /// count a `run_if_above` guard tests before the tile's ops. A context that only records
    /// calls can return `i32::MAX` to see every op of every instance.
    fn read_count(&mut self, count: &ConcreteRegion) -> i32;
}

/// A region evaluated for one tile instance on one rank.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ConcreteRegion {
    /// Index of the tensor in the taskflow's declaration order (`Taskflow::tensors`).
    pub tensor: usize,
    /// The rank whose copy of the tensor is addressed.
    pub rank: u32,
    /// The box, one start and length per tensor dimension.
    pub extent: Extent,
}

/// The data of one region as a user op's reference body sees it: `f32` values in row-major
/// order, whatever the tensor's element type (the executor converts on the way in and out).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TileData {
    /// Extent of each dimension of the region.
    pub shape: Vec<usize>,
    /// `shape.iter().product()` values, row-major.
    pub values: Vec<f32>,
}

impl TileData {
    /// A region of the given shape filled with zeros.
    pub fn zeros(shape: &[usize]) -> Self {
        TileData { shape: shape.to_vec(), values: vec![0.0; shape.iter().product()] }
    }

    /// Wraps values; `None` if their number does not match the shape.
    pub fn new(shape: &[usize], values: Vec<f32>) -> Option<Self> {
        (values.len() == shape.iter().product::<usize>()).then(|| TileData { shape: shape.to_vec(), values })
    }

    /// Length of a row (the last dimension; 1 for a region without dimensions).
    pub fn row_len(&self) -> usize {
        self.shape.last().copied().unwrap_or(1).max(1)
    }

    /// The rows, in order.
    pub fn rows(&self) -> std::slice::ChunksExact<'_, f32> {
        let n = self.row_len();
        self.values.chunks_exact(n)
    }

    /// The rows, mutably.
    pub fn rows_mut(&mut self) -> std::slice::ChunksExactMut<'_, f32> {
        let n = self.row_len();
        self.values.chunks_exact_mut(n)
    }
}

/// The reference body of a user-defined op, taking the op's regions in parameter order.
pub type UserOpFn = fn(&mut [TileData]);

/// A user-defined op (`#[op(...)] fn ...` in a taskflow body): its reference body for the
/// host executor and its AscendC emission template. Its signature is in the IR's registry.
#[derive(Clone, Copy, Debug)]
pub struct UserOp {
    /// The op's name, as tile bodies call it.
    pub name: &'static str,
    /// Number of region parameters.
    pub params: usize,
    /// The AscendC call template (`OpSpec::emit`).
    pub emit: &'static str,
    /// Calls the user's function with the regions; use [`UserOp::run`], which checks the count.
    pub reference: UserOpFn,
}

impl UserOp {
    /// Runs the reference body on `args` (one per parameter, in order).
    pub fn run(&self, args: &mut [TileData]) -> Result<(), ProgramError> {
        if args.len() != self.params {
            return Err(ProgramError::OpArity { op: self.name.to_string(), expected: self.params, got: args.len() });
        }
        (self.reference)(args);
        Ok(())
    }
}

/// A compiled taskflow, as `#[taskflow]` emits it. Everything is `'static` data computed
/// at compile time; the accessors decode it.
#[derive(Clone, Copy, Debug)]
pub struct Program {
    /// The taskflow's name (the function's name).
    pub name: &'static str,
    /// The taskflow IR as JSON (see [`Program::taskflow`]).
    pub ir_json: &'static str,
    /// The schedule table's binary form (`ScheduleTable::to_bytes`: CRC-checked, versioned), as
    /// [`crate::plan`] makes it — the table the kernel, the host executor and `Build` all use —
    /// packed by [`super::pack::pack`]; [`Program::table_bytes`] unpacks it.
    pub table_packed: &'static [u8],
    /// The table's hardware-flag plan (`NAME_flags.bin`, naming the table's checksum): which
    /// dependencies the AIC → own-AIV flag carries instead of a counter ([`Program::flag_plan`]).
    pub flags_bytes: &'static [u8],
    /// Per tile family, in declaration order: the extents of its grid.
    pub grids: &'static [&'static [u64]],
    /// Per tile family, in declaration order: its host form.
    pub tiles: &'static [TileFn],
    /// The user-defined ops of the taskflow, in declaration order.
    pub user_ops: &'static [UserOp],
    /// The AscendC source of the taskflow's one mixed kernel, as `hpmoe_ascendc::emit`
    /// writes it to `NAME.cpp` (the table it reads is [`Program::table_bytes`]'s); or why the
    /// backend cannot emit it (for instance a user op without an `emit` template).
    pub kernel_source: Result<&'static str, &'static str>,
    /// `NAME_schedule.h`, the constants `kernel_source` includes (empty when it is `Err`).
    pub kernel_header: &'static str,
    /// `NAME_launch.cpp`, the kernel's host launcher for an NPU or the CPU emulator (empty when
    /// `kernel_source` is `Err`). With [`Program::table_bytes`] and `flags_bytes`, the five files of
    /// the kernel.
    pub kernel_launcher: &'static str,
}

impl Program {
    /// The taskflow IR, for the simulator and anything else that reads the model.
    pub fn taskflow(&self) -> Result<Taskflow, ProgramError> {
        Taskflow::from_json(self.ir_json).map_err(ProgramError::Ir)
    }

    /// The schedule table's binary form (`NAME_schedule.bin`, what the kernel reads), unpacked
    /// from [`Program::table_packed`].
    pub fn table_bytes(&self) -> Result<Vec<u8>, ProgramError> {
        super::pack::unpack(self.table_packed).map_err(ProgramError::Packed)
    }

    /// The schedule table, decoded and validated.
    pub fn table(&self) -> Result<ScheduleTable, ProgramError> {
        ScheduleTable::from_bytes(&self.table_bytes()?).map_err(ProgramError::Table)
    }

    /// The table's flag plan, decoded for the host executor
    /// (`hpmoe_host::exec::Executor::with_flags`).
    pub fn flag_plan(&self) -> Result<crate::schedule::FlagPlan, ProgramError> {
        self.flag_plan_of(&self.table()?)
    }

    /// [`Program::flag_plan`] for a table already decoded by [`Program::table`] (which unpacks
    /// and validates the whole table; callers that need both decode it once).
    pub fn flag_plan_of(&self, table: &ScheduleTable) -> Result<crate::schedule::FlagPlan, ProgramError> {
        crate::schedule::flags::decode_plan(self.flags_bytes, table).map_err(ProgramError::Flags)
    }

    /// Runs the instance of family `family` at `coords` on `ctx` (see [`TileFn`]).
    pub fn run_tile(&self, ctx: &mut dyn TileContext, family: usize, coords: &[u64]) -> Result<(), ProgramError> {
        let (Some(tile), Some(grid)) = (self.tiles.get(family), self.grids.get(family)) else {
            return Err(ProgramError::NoSuchFamily(family));
        };
        if coords.len() != grid.len() || coords.iter().zip(*grid).any(|(c, e)| c >= e) {
            return Err(ProgramError::OutsideGrid { family, coords: coords.to_vec() });
        }
        tile(ctx, coords);
        Ok(())
    }

    /// The user-defined op called `name`.
    pub fn user_op(&self, name: &str) -> Option<&'static UserOp> {
        self.user_ops.iter().find(|o| o.name == name)
    }
}

/// Why a [`Program`] accessor failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProgramError {
    /// The IR does not decode (hpmoe-core and hpmoe-macros of different versions?).
    Ir(crate::model::TaskflowJsonError),
    /// The packed table does not unpack (the program's bytes were altered).
    Packed(super::pack::UnpackError),
    /// The schedule table does not decode or validate.
    Table(TableError),
    /// The flag plan does not decode or does not belong to the table.
    Flags(crate::schedule::flags::FlagPlanError),
    /// No family has this index (declaration order).
    NoSuchFamily(usize),
    /// The coordinates are not a grid point of the family (wrong count, or past an extent).
    OutsideGrid {
        /// The family's index.
        family: usize,
        /// The coordinates asked for.
        coords: Vec<u64>,
    },
    /// An op call's region count differs from the op's parameter count.
    OpArity {
        /// The op's name.
        op: String,
        /// Region parameters the op declares.
        expected: usize,
        /// Regions the call passed.
        got: usize,
    },
}

impl fmt::Display for ProgramError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProgramError::Ir(e) => write!(f, "the taskflow IR does not decode: {e}"),
            ProgramError::Packed(e) => write!(f, "the packed schedule table does not unpack: {e}"),
            ProgramError::Table(e) => write!(f, "the schedule table does not decode: {e}"),
            ProgramError::Flags(e) => write!(f, "the flag plan does not decode: {e}"),
            ProgramError::NoSuchFamily(i) => write!(f, "the taskflow has no tile family #{i}"),
            ProgramError::OutsideGrid { family, coords } => {
                write!(f, "coordinates {coords:?} are outside the grid of tile family #{family}")
            }
            ProgramError::OpArity { op, expected, got } => {
                write!(f, "op `{op}` takes {expected} regions, but {got} were given")
            }
        }
    }
}

/// The message includes the wrapped error's, so [`source`](std::error::Error::source) is `None`
/// (the Rust API guidelines' rule: one or the other, so a printer walking the chain shows each
/// message once); the wrapped error is the variant's field, typed.
impl std::error::Error for ProgramError {}

/// Support for the code `#[taskflow]` generates. Not part of the public API.
#[doc(hidden)]
pub mod __private {
    use super::{ConcreteRegion, Extent, MAX_TENSOR_DIMS};

    /// The instance's coordinates as `i64`s (the generated tile functions compute in `i64`,
    /// the type the checks evaluated every expression in).
    pub fn coords<const N: usize>(at: &[u64]) -> [i64; N] {
        let mut out = [0i64; N];
        assert_eq!(at.len(), N, "a tile with {N} grid indices was called with {} coordinates", at.len());
        for (o, &c) in out.iter_mut().zip(at) {
            *o = i64::try_from(c).unwrap_or(i64::MAX);
        }
        out
    }

    /// Whether a guarded tile runs its ops: its count, read through the context, is greater
    /// than the guard's bound evaluated for the instance.
    pub fn runs(ctx: &mut dyn super::TileContext, count: ConcreteRegion, above: i64) -> bool {
        crate::model::Guard::runs(i64::from(ctx.read_count(&count)), above)
    }

    /// A region from evaluated starts and constant lengths. The checks proved every start in
    /// range for every instance of the grid; a panic here means a caller passed coordinates
    /// outside it ([`super::Program::run_tile`] refuses those).
    pub fn region(tensor: usize, rank: i64, starts: &[i64], lens: &[u32]) -> ConcreteRegion {
        let outside = "tile called with coordinates outside its grid";
        let mut extent = Extent { start: [0; MAX_TENSOR_DIMS], len: [0; MAX_TENSOR_DIMS], dims: starts.len() as u8 };
        for (k, (&s, &l)) in starts.iter().zip(lens).enumerate() {
            extent.start[k] = u32::try_from(s).expect(outside);
            extent.len[k] = l;
        }
        ConcreteRegion { tensor, rank: u32::try_from(rank).expect(outside), extent }
    }
}
