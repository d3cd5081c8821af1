//! Hand-built expanded taskflows for the scheduler's tests.

use crate::expand::{Expanded, InstanceSpace, Work};
use crate::graph::Dag;
use crate::model::CoreKind;
use smallvec::smallvec;

/// An expanded taskflow with one 1-D family per `(kind, count, work)` (every rank has the
/// same instances), the given global edges, and no rotation.
pub(crate) fn expanded(ranks: u32, families: &[(CoreKind, u32, Work)], pairs: &[(u32, u32)]) -> Expanded {
    let space = InstanceSpace::new(ranks, families.iter().map(|&(_, count, _)| smallvec![count]));
    let nodes = space.len();
    Expanded {
        space,
        dag: Dag::from_pairs(nodes, pairs),
        family_core: families.iter().map(|f| f.0).collect(),
        family_work: families.iter().map(|f| f.2).collect(),
        rotation: vec![0; nodes],
    }
}
