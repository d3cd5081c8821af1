//! The taskflow model: what the front-end produces and every later stage reads.

mod expr;
mod family;
mod loc;
mod op;
mod profile;
mod region;
mod taskflow;
mod tensor;

pub use expr::{Affine, Overflow, Part, Reduce, Var};
pub use family::{After, GridDim, Guard, IndexSel, OpCall, TileFamily};
pub use loc::{Loc, LocId, SourceMap, SourcePos};
pub use op::{Access, BuiltinOp, DuplicateOp, MatmulDims, OpKind, OpRegistry, OpSpec, Param, WorkModel};
pub use profile::{CoreKind, MachineProfile};
pub use region::{DimSlice, RankSel, Region};
pub use taskflow::{Taskflow, TaskflowJsonError, TensorRef, TileBuilder};
pub use tensor::{DType, TensorDecl, TensorKind};
