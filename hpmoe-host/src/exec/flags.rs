//! The hardware cross-core flag on the host: a table compiled with flags
//! ([`hpmoe_core::CompileOptions::flags`]) has the dependencies from an AIC tile to a tile on one of
//! that AIC's own two AIVs taken off its counters, carried by the flag instead (see
//! [`hpmoe_core::schedule::flags`]). The executor honours the plan the way the device does: after a
//! tile the plan marks, an AIC adds one set to each of its two AIVs; before a tile, an AIV waits
//! until its AIC has made as many sets as its waits up to and including that tile.

use super::setup::FlagPlanMismatch;
use hpmoe_core::ids::{CoreId, IdVec, NodeId};
use hpmoe_core::schedule::FlagPlan;
use hpmoe_core::table::ScheduleTable;
use std::sync::atomic::{AtomicU32, Ordering};

/// The flag plan laid out per core and entry, and the sets each AIV has received in one run.
#[derive(Debug)]
pub(crate) struct FlagState {
    /// Per global core, per entry: on an AIC, whether it sets the flag after the entry; on an
    /// AIV, how many sets it must have received before the entry (cumulative).
    per_entry: IdVec<CoreId, Vec<u32>>,
    /// Per global AIC core: its two AIVs' global ids.
    own_aivs: IdVec<CoreId, Option<[CoreId; 2]>>,
    /// Per global core (AIVs only used): sets received from its AIC.
    received: IdVec<CoreId, AtomicU32>,
}

impl FlagState {
    /// `None` when the plan carries nothing.
    pub(crate) fn new(table: &ScheduleTable, plan: &FlagPlan) -> Result<Option<FlagState>, FlagPlanMismatch> {
        if plan.set_after.values().all(|&s| !s) && plan.waits_before.values().all(|&w| w == 0) {
            return Ok(None);
        }
        let h = table.header();
        if h.aiv_per_aic != 2 {
            return Err(FlagPlanMismatch::NotTwoAivsPerAic);
        }
        let view = table.view();
        let cores = table.cores().len();
        let nodes = (h.ranks * h.instances_per_rank) as usize;
        if plan.set_after.len() != nodes || plan.waits_before.len() != nodes {
            return Err(FlagPlanMismatch::Nodes { plan: plan.set_after.len(), table: nodes });
        }
        let mut per_entry = IdVec::with_capacity(cores);
        let mut own_aivs = IdVec::filled(cores, None);
        for core in 0..cores as u32 {
            let rank = view.rank_of_core(core);
            let local = core - rank * h.cores_per_rank;
            let aic = local < h.aic_per_rank;
            if aic {
                let first = rank * h.cores_per_rank + h.aic_per_rank + 2 * local;
                own_aivs[CoreId::new(core)] = Some([CoreId::new(first), CoreId::new(first + 1)]);
            }
            let mut need = 0u32;
            let row = table
                .core_entries(core)
                .iter()
                .map(|e| {
                    let node = NodeId::new(rank * h.instances_per_rank + e.instance);
                    if aic {
                        u32::from(plan.set_after[node])
                    } else {
                        need += u32::from(plan.waits_before[node]);
                        need
                    }
                })
                .collect();
            per_entry.push(row);
        }
        let received = (0..cores).map(|_| AtomicU32::new(0)).collect();
        Ok(Some(FlagState { per_entry, own_aivs, received }))
    }

    /// The same plan with no set received yet: every run starts from zero.
    pub(crate) fn for_run(&self) -> FlagState {
        FlagState {
            per_entry: self.per_entry.clone(),
            own_aivs: self.own_aivs.clone(),
            received: (0..self.received.len()).map(|_| AtomicU32::new(0)).collect(),
        }
    }

    /// On an AIV: the sets it must have received before entry `entry` (0 when none).
    pub(crate) fn needed(&self, core: CoreId, entry: u32) -> u32 {
        if self.own_aivs[core].is_some() { 0 } else { self.per_entry[core][entry as usize] }
    }

    /// Sets AIV `core` has received so far.
    pub(crate) fn received(&self, core: CoreId) -> u32 {
        self.received[core].load(Ordering::Acquire)
    }

    /// On an AIC, after entry `entry`: the AIVs it sets the flag for (after their data is written:
    /// `Release` pairs with the AIVs' `Acquire`).
    pub(crate) fn set_after(&self, core: CoreId, entry: u32) -> Option<[CoreId; 2]> {
        let aivs = self.own_aivs[core]?;
        if self.per_entry[core][entry as usize] == 0 {
            return None;
        }
        for v in aivs {
            self.received[v].fetch_add(1, Ordering::Release);
        }
        Some(aivs)
    }
}
