//! How much of the shared expert a simulated run overlapped with dispatch, per rank.

use super::SHARED_FAMILIES;
use crate::ExampleError;
use hpmoe_core::model::Taskflow;
use hpmoe_host::sim::SimResult;

/// The routed layer's dispatch family (the puts the shared expert should overlap).
const DISPATCH: &str = "dispatch";

/// One rank's overlap of the shared expert's tiles with its dispatch puts, ns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Overlap {
    /// The rank measured.
    pub rank: u32,
    /// When the rank's last dispatch put had its last byte out.
    pub dispatch_end_ns: u64,
    /// When the rank's first shared-expert tile started.
    pub first_shared_start_ns: u64,
    /// When the rank's last shared-expert tile ended.
    pub last_shared_end_ns: u64,
    /// Time the rank's cores spent running shared-expert tiles (all cores summed).
    pub shared_busy_ns: u64,
    /// The part of `shared_busy_ns` before `dispatch_end_ns`.
    pub shared_busy_during_dispatch_ns: u64,
}

impl Overlap {
    /// `shared_busy_during_dispatch_ns / shared_busy_ns`.
    pub fn during_dispatch_share(&self) -> f64 {
        self.shared_busy_during_dispatch_ns as f64 / self.shared_busy_ns.max(1) as f64
    }
}

/// The overlap on every rank of `result`, a simulated run of `tf` (the variant's taskflow).
///
/// # Errors
/// If `tf` lacks the dispatch or shared-expert families, or a rank ran none of them.
pub fn overlap(tf: &Taskflow, result: &SimResult) -> Result<Vec<Overlap>, ExampleError> {
    let family = |name: &str| {
        tf.families
            .iter()
            .position(|f| f.name == name)
            .ok_or_else(|| ExampleError::MissingPart { part: "family", name: name.into() })
    };
    let dispatch = family(DISPATCH)?;
    let shared = SHARED_FAMILIES.iter().map(|f| family(f)).collect::<Result<Vec<_>, _>>()?;
    (0..result.ranks)
        .map(|rank| {
            let tiles = || result.tiles.iter().filter(move |t| result.rank_of_core(t.core).raw() == rank);
            let dispatch_end_ns = tiles()
                .filter(|t| t.family.index() == dispatch)
                .map(|t| t.end_ns)
                .max()
                .ok_or(ExampleError::NothingRan { rank, what: "dispatch" })?;
            let shared_tiles = || tiles().filter(|t| shared.contains(&t.family.index()));
            let first_shared_start_ns = shared_tiles()
                .map(|t| t.start_ns)
                .min()
                .ok_or(ExampleError::NothingRan { rank, what: "shared-expert" })?;
            let mut o = Overlap {
                rank,
                dispatch_end_ns,
                first_shared_start_ns,
                last_shared_end_ns: 0,
                shared_busy_ns: 0,
                shared_busy_during_dispatch_ns: 0,
            };
            for t in shared_tiles() {
                o.last_shared_end_ns = o.last_shared_end_ns.max(t.end_ns);
                o.shared_busy_ns += t.end_ns - t.start_ns;
                o.shared_busy_during_dispatch_ns += t.end_ns.min(dispatch_end_ns).saturating_sub(t.start_ns);
            }
            Ok(o)
        })
        .collect()
}
