//! Machine topology: how many cores of each kind a rank has, and how many ranks there are.
//!
//! Rates for the cost model live elsewhere (the scheduler takes a [`crate::schedule::CostModel`]);
//! this is only what the schedule's shape depends on.

use serde::{Deserialize, Serialize};
use std::ops::Range;

/// The two kinds of core of an Ascend AI core: cube (matrix) and vector.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CoreKind {
    /// Cube core: matrix multiplication.
    Aic,
    /// Vector core: elementwise work, activations, quantisation and one-sided puts.
    Aiv,
}

impl CoreKind {
    /// `aic` or `aiv`: the DSL's spelling and the messages'.
    pub fn name(self) -> &'static str {
        match self {
            CoreKind::Aic => "aic",
            CoreKind::Aiv => "aiv",
        }
    }
}

impl std::fmt::Display for CoreKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Core counts of one rank (one die) and the number of ranks (expert-parallel size).
///
/// Within a rank, cores are numbered AIC first (`0..aic`), then AIV (`aic..aic+aiv`);
/// AIV `v` (counted from 0) is sub-block `v % aiv_per_aic` of AIC `v / aiv_per_aic`,
/// as `GetBlockIdx()` numbers them on the device. A *global* core id is
/// `rank * cores_per_rank() + local`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct MachineProfile {
    /// The profile's name (`ascend910b`, `small_2c_4r`), carried into tables and messages.
    pub name: String,
    /// AIC cores per rank.
    pub aic_per_rank: u32,
    /// AIV cores belonging to each AIC (2 on 910B / A3, `KERNEL_TYPE_MIX_AIC_1_2`).
    pub aiv_per_aic: u32,
    /// Number of ranks (expert-parallel size).
    pub ranks: u32,
}

impl MachineProfile {
    /// Ascend 910B die: 24 AIC + 48 AIV (CANN platform file for Ascend910B).
    pub fn ascend910b(ranks: u32) -> Self {
        MachineProfile { name: "ascend910b".into(), aic_per_rank: 24, aiv_per_aic: 2, ranks }
    }

    /// One die of an Ascend A3 (910C) package: 24 usable AIC (CloudMatrix384 paper), 2 AIV each.
    pub fn ascend_a3_die(ranks: u32) -> Self {
        MachineProfile { name: "ascend_a3_die".into(), aic_per_rank: 24, aiv_per_aic: 2, ranks }
    }

    /// A small profile for tests and host runs.
    pub fn small(aic_per_rank: u32, ranks: u32) -> Self {
        MachineProfile { name: format!("small_{aic_per_rank}c_{ranks}r"), aic_per_rank, aiv_per_aic: 2, ranks }
    }

    /// AIV cores per rank: `aic_per_rank * aiv_per_aic`.
    pub fn aiv_per_rank(&self) -> u32 {
        self.aic_per_rank * self.aiv_per_aic
    }

    /// Cores per rank, both kinds.
    pub fn cores_per_rank(&self) -> u32 {
        self.aic_per_rank + self.aiv_per_rank()
    }

    /// Cores of all ranks together (the number of global core ids).
    pub fn total_cores(&self) -> u32 {
        self.cores_per_rank() * self.ranks
    }

    /// Local core ids (within a rank) of the given kind.
    pub fn cores_of(&self, kind: CoreKind) -> Range<u32> {
        match kind {
            CoreKind::Aic => 0..self.aic_per_rank,
            CoreKind::Aiv => self.aic_per_rank..self.cores_per_rank(),
        }
    }

    /// Cores of `kind` per rank.
    pub fn count_of(&self, kind: CoreKind) -> u32 {
        match kind {
            CoreKind::Aic => self.aic_per_rank,
            CoreKind::Aiv => self.aiv_per_rank(),
        }
    }

    /// Kind of a local core id.
    pub fn kind_of_local(&self, local: u32) -> CoreKind {
        if local < self.aic_per_rank { CoreKind::Aic } else { CoreKind::Aiv }
    }

    /// Splits a global core id into (rank, local core id).
    pub fn split_core(&self, global: u32) -> (u32, u32) {
        (global / self.cores_per_rank(), global % self.cores_per_rank())
    }

    /// Human-readable core name: `r1.aic3`, `r0.aiv17`.
    pub fn core_name(&self, global: u32) -> String {
        let (rank, local) = self.split_core(global);
        match self.kind_of_local(local) {
            CoreKind::Aic => format!("r{rank}.aic{local}"),
            CoreKind::Aiv => format!("r{rank}.aiv{}", local - self.aic_per_rank),
        }
    }
}
