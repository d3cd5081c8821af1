//! How a simulated run loaded the AIC cores: per core the time it spent computing, the rank
//! with the most of it, and that rank's mean and heaviest core. Shared by the examples that
//! explain a run (`network_breakdown`, `natural_search`): the heaviest core cannot end before
//! its own computed tiles are done, so its excess over the mean is what the run's counts did
//! to a plan balanced on expected activity.

use hpmoe_core::ids::CoreId;
use hpmoe_core::model::CoreKind;
use hpmoe_host::sim::SimResult;
use std::cmp::Reverse;
use std::collections::BTreeMap;

/// Every AIC core of `rank` that ran a tile, with the time it spent computing (tiles the run's
/// counts skip add nothing).
pub fn compute_by_core(run: &SimResult, rank: u32) -> BTreeMap<CoreId, u64> {
    let mut work = BTreeMap::new();
    for t in
        run.tiles.iter().filter(|t| run.core_kind(t.core) == CoreKind::Aic && run.rank_of_core(t.core).raw() == rank)
    {
        let w = work.entry(t.core).or_default();
        if t.computes {
            *w += t.end_ns - t.start_ns;
        }
    }
    work
}

/// The rank with the most AIC compute in `run` (the lowest on a tie); `None` without ranks.
pub fn busiest_rank(run: &SimResult) -> Option<u32> {
    let mut work = vec![0u64; run.ranks as usize];
    for t in run.tiles.iter().filter(|t| run.core_kind(t.core) == CoreKind::Aic && t.computes) {
        work[run.rank_of_core(t.core).index()] += t.end_ns - t.start_ns;
    }
    (0..run.ranks).max_by_key(|&r| (work[r as usize], Reverse(r)))
}

/// The busiest rank's AIC load: which rank, its cores' mean compute and its heaviest core's.
#[derive(Clone, Copy, Debug)]
pub struct HeaviestCore {
    /// The rank with the most AIC compute ([`busiest_rank`]).
    pub rank: u32,
    /// Its AIC cores' mean compute time, ns (over the cores that ran a tile).
    pub mean_ns: f64,
    /// Its heaviest AIC core's compute time, ns.
    pub largest_ns: f64,
}

/// [`HeaviestCore`] of `run`; `None` without ranks.
pub fn heaviest_core(run: &SimResult) -> Option<HeaviestCore> {
    let rank = busiest_rank(run)?;
    let work = compute_by_core(run, rank);
    let mean_ns = work.values().sum::<u64>() as f64 / work.len().max(1) as f64;
    let largest_ns = work.values().copied().max().unwrap_or(0) as f64;
    Some(HeaviestCore { rank, mean_ns, largest_ns })
}
