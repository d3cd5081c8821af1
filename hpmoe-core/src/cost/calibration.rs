//! What the A3 profile's network was calibrated against: the measured expert-parallel
//! all-to-all bandwidth ([`MEASURED_A3_ALL_TO_ALL`]) and the profile fields fitted to it
//! ([`FITTED`]).

/// Measured expert-parallel bandwidth on A3, from hardware.md \[S\] (DeepEP for Ascend, 4096
/// tokens per rank, H 7168, top-8, INT8 dispatch, BF16 combine): `(EP, dispatch GB/s,
/// combine GB/s)`. What the fit aimed at, and what every report prints the simulated
/// bandwidth beside (`hpmoe_host::sim::all_to_all_bandwidth`).
pub const MEASURED_A3_ALL_TO_ALL: [(u32, f64, f64); 5] =
    [(8, 146.0, 125.0), (16, 107.0, 103.0), (32, 102.0, 95.0), (64, 81.0, 91.0), (128, 57.0, 81.0)];

/// Tokens per rank of the measured workload.
pub const MEASURED_TOKENS_PER_RANK: u64 = 4096;

/// A profile field fitted to measurements rather than taken from a source, and what it was
/// fitted to.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fitted {
    /// Field name, as in TOML/JSON.
    pub field: &'static str,
    /// The measurements it was fitted to, and how.
    pub fitted_to: &'static str,
}

/// Every fitted field of the A3 preset ([`crate::cost::CostProfile::ascend_a3_die`]). One
/// parameter set for every EP: a grid search over injection 100–114 GB/s and cross-server
/// 57–66 GB/s (steps of 1–4 GB/s) took the pair that minimises the largest relative error of
/// the simulated effective dispatch and combine bandwidth (`hpmoe_host::sim::all_to_all_bandwidth`)
/// against the ten points of [`MEASURED_A3_ALL_TO_ALL`]: 112 and 61 GB/s, largest error 17%.
/// Every other field kept its sourced or guessed value. The residuals per EP are in the README.
pub const FITTED: &[Fitted] = &[
    Fitted { field: "link_gb_per_s", fitted_to: A3_TABLE },
    Fitted { field: "ejection_gb_per_s", fitted_to: "tied to link_gb_per_s (the measured table cannot identify it)" },
    Fitted { field: "cross_server_gb_per_s", fitted_to: A3_TABLE },
];

const A3_TABLE: &str =
    "measured A3 dispatch (INT8) and combine (BF16) bandwidth at EP 8-128, 4096 tokens/rank (hardware.md)";
