//! [`ScheduleTable::build`]: the table of a scheduled taskflow, from the scheduler's results.

use super::ScheduleTable;
use super::assemble::Assembler;
use super::error::TableError;
use super::inconsistency::Inconsistency;
use crate::expand::Expanded;
use crate::ids::CoreId;
use crate::model::MachineProfile;
use crate::placement::{Placement, SyncPlan};

impl ScheduleTable {
    /// The schedule table of a placement and its synchronisation, for every rank.
    ///
    /// `family_names` are the tile families' names in declaration order (the order of
    /// `exp.space.families`). Core `c` of the table runs the nodes of row `c` of
    /// `placement.queues` in order; each entry carries its node's wait and signals from
    /// `sync`.
    ///
    /// # Panics
    /// If [`ScheduleTable::try_build`] fails: the inputs contradict each other or exceed a
    /// limit that the checks before scheduling should have reported.
    pub fn build(
        name: &str,
        profile: &MachineProfile,
        family_names: &[String],
        exp: &Expanded,
        placement: &Placement,
        sync: &SyncPlan,
    ) -> ScheduleTable {
        Self::try_build(name, profile, family_names, exp, placement, sync)
            .unwrap_or_else(|e| panic!("cannot build the schedule table of `{name}`: {e}"))
    }

    /// Like [`ScheduleTable::build`], but returns an error instead of panicking when the
    /// inputs disagree (a node on another rank's core, a node missing or listed twice, a
    /// wait target no signals can reach, ...) or a value does not fit its record field.
    pub fn try_build(
        name: &str,
        profile: &MachineProfile,
        family_names: &[String],
        exp: &Expanded,
        placement: &Placement,
        sync: &SyncPlan,
    ) -> Result<ScheduleTable, TableError> {
        let space = &exp.space;
        let nodes = space.len();
        let mismatch = |what: &'static str, found: usize, expected: usize| {
            Err(TableError::from(Inconsistency::InputSize { what, found, expected }))
        };
        if space.ranks != profile.ranks {
            return mismatch("ranks of the instance space", space.ranks as usize, profile.ranks as usize);
        }
        if family_names.len() != space.families.len() || exp.family_core.len() != space.families.len() {
            let found = family_names.len().min(exp.family_core.len());
            return mismatch("family names and core kinds", found, space.families.len());
        }
        if placement.queues.nodes() != profile.total_cores() as usize {
            return mismatch(
                "rows of the placement's queues",
                placement.queues.nodes(),
                profile.total_cores() as usize,
            );
        }
        if sync.waits.len() != nodes || sync.signal_offsets.len() != nodes + 1 {
            return mismatch("waits of the sync plan", sync.waits.len(), nodes);
        }
        let signals_end = sync.signal_offsets.last().copied().unwrap_or(0) as usize;
        if signals_end > sync.signal_list.len() || sync.signal_offsets.windows(2).any(|w| w[0] > w[1]) {
            return Err(Inconsistency::SignalOffsets.into());
        }

        let mut a = Assembler::new(name, profile.ranks, profile.aic_per_rank, profile.aiv_per_aic)?;
        for ((span, family_name), &kind) in space.families.iter().zip(family_names).zip(&exp.family_core) {
            a.family(family_name, kind, &span.extents)?;
        }
        a.counters(sync.counters_per_rank.as_slice());
        a.reserve(placement.queues.edges(), signals_end);
        for core in 0..profile.total_cores() {
            a.start_core();
            let (rank, _) = profile.split_core(core);
            for &node in placement.queues.row(CoreId::new(core)) {
                if node.index() >= nodes || space.rank_of(node).raw() != rank {
                    return Err(Inconsistency::NodeOffRank { node: node.raw(), core: profile.core_name(core) }.into());
                }
                a.entry(space.local_of(node), sync.waits[node], sync.signals(node))?;
            }
        }
        a.finish()
    }
}
