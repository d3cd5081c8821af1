//! The two records dependency building walks and fault reporting describes: one region
//! argument of one op call of one family ([`ArgPlan`]), and one concrete access of one
//! instance ([`Acc`]). Their own module, so that `deps` (which builds them) and `faults`
//! (which names them in messages) both depend on it and not on each other.

use super::access::Extent;
use crate::ids::NodeId;
use crate::model::{Access, OpSpec, Region};

/// One region argument of one op call of one family.
#[derive(Clone, Copy, Debug)]
pub(super) struct ArgPlan<'a> {
    pub family: usize,
    /// Position of the op call in the tile body.
    pub call: usize,
    pub access: Access,
    pub region: &'a Region,
    pub spec: &'a OpSpec,
    pub param: usize,
}

/// One concrete access of one instance.
#[derive(Clone, Copy, Debug)]
pub(super) struct Acc {
    pub node: NodeId,
    pub family: u32,
    pub call: u32,
    pub plan: u32,
    pub access: Access,
    pub ext: Extent,
}
