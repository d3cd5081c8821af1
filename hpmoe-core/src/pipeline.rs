//! The whole pipeline: check → expand → check → schedule → prove → synchronise → table.

use crate::check;
use crate::error::Diagnostics;
use crate::expand::{self, Expanded};
use crate::model::Taskflow;
use std::time::{Duration, Instant};

/// Wall-clock time of each stage, for benchmarks.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StageTimes {
    pub structure: Duration,
    pub expand: Duration,
    pub order_checks: Duration,
}

/// Checks a taskflow and expands it into its instance DAG.
///
/// Every error found is returned together: structural errors first (if there are any, the
/// taskflow is not expanded), then errors found while expanding (bounds, ranks, unwritten
/// reads, `after` ranges), then cycles or, on an acyclic DAG, unordered conflicting accesses.
pub fn analyse(tf: &Taskflow) -> Result<Expanded, Diagnostics> {
    analyse_timed(tf).map(|(e, _)| e)
}

pub(crate) fn analyse_timed(tf: &Taskflow) -> Result<(Expanded, StageTimes), Diagnostics> {
    let mut times = StageTimes::default();
    let t = Instant::now();
    let resolved = check::check_structure(tf)?;
    times.structure = t.elapsed();

    let t = Instant::now();
    let expansion = expand::expand(&resolved);
    times.expand = t.elapsed();
    let expand::Expansion { expanded, hazards, mut diagnostics } = expansion;

    let t = Instant::now();
    match expanded.dag.topo_order() {
        Err(cycle) => diagnostics.push(check::cycle_error(tf, &expanded.space, &cycle)),
        Ok(order) => {
            let mut pos = vec![0u32; order.len()];
            for (i, &n) in order.iter().enumerate() {
                pos[n as usize] = i as u32;
            }
            diagnostics.extend(check::check_ordering(tf, &expanded, &hazards, &pos));
        }
    }
    times.order_checks = t.elapsed();
    diagnostics.into_result((expanded, times))
}
