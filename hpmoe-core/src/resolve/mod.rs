//! Name resolution and the checks on the taskflow as written, before any grid is expanded: names,
//! arities, core kinds, remote/local arguments, shapes, grid sizes, the instance and edge limits
//! ([`check_structure`]) and the local-buffer footprint of every op ([`check_footprint`]). Each
//! collects all its errors; none stops at the first.
//!
//! Its result, the [`Resolved`] taskflow (every name resolved to an index), is what
//! [`crate::expand`] expands; the checks on the expanded instance DAG and on the schedule are
//! [`crate::check`]'s. So the stages import one way: resolve → expand → check.

mod footprint;
mod names;
mod structure;

pub use footprint::{Piece, check_footprint, footprint, local_buffer, op_pieces};
pub use names::{closest, suggestion};
pub use structure::{Resolved, ResolvedCall, check_structure};
