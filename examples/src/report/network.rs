//! The simulated effective all-to-all bandwidth at each EP, beside the measured A3 table: the
//! DeepSeek-V3 layer's dispatch layout with INT8 rows and their scales (as measured, and as the
//! flagship's INT8 dispatch puts them) and its combine with BF16
//! rows, each run alone as the baseline runs its all-to-all kernels
//! (`hpmoe_host::sim::all_to_all_bandwidth`).

use crate::ExampleError;
use hpmoe_core::cost::{CostProfile, MEASURED_A3_ALL_TO_ALL, MEASURED_TOKENS_PER_RANK};
use hpmoe_core::model::DType;
use hpmoe_host::moe::MoeShape;
use hpmoe_host::sim::all_to_all_bandwidth;
use serde_json::json;

/// One EP's simulated all-to-all bandwidth, and the measured figures when the workload is the
/// measured one.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AllToAllRow {
    /// Expert-parallel ranks (all of them send to all).
    pub ep: u32,
    /// Dispatch bandwidth per rank (INT8 rows), GB/s.
    pub dispatch_gb_per_s: f64,
    /// Combine bandwidth per rank (BF16 rows), GB/s.
    pub combine_gb_per_s: f64,
    /// `(dispatch, combine)` measured on A3, GB/s, at this EP and 4096 tokens per rank.
    pub measured: Option<(f64, f64)>,
}

impl AllToAllRow {
    /// Simulates the dispatch and the combine of the DeepSeek-V3 layer at `ep` with `tokens`
    /// tokens per rank under `profile`.
    pub fn measure(ep: u32, tokens: u64, profile: &CostProfile) -> Result<Self, ExampleError> {
        let shape = MoeShape::deepseek_v3(ep, tokens);
        let at = |dtype| {
            all_to_all_bandwidth(&shape, dtype, profile)
                .map(|a| a.gb_per_s())
                .map_err(|error| ExampleError::Simulate { taskflow: format!("all_to_all (EP {ep})"), error })
        };
        let measured = MEASURED_A3_ALL_TO_ALL
            .iter()
            .find(|m| m.0 == ep && tokens == MEASURED_TOKENS_PER_RANK)
            .map(|&(_, d, c)| (d, c));
        Ok(AllToAllRow { ep, dispatch_gb_per_s: at(DType::I8)?, combine_gb_per_s: at(DType::Bf16)?, measured })
    }

    /// The JSON object the report adds to its EP's (`all_to_all`).
    pub fn to_json(&self) -> serde_json::Value {
        json!({
            "dispatch_int8_gb_per_s": self.dispatch_gb_per_s,
            "combine_bf16_gb_per_s": self.combine_gb_per_s,
            "measured_dispatch_gb_per_s": self.measured.map(|m| m.0),
            "measured_combine_gb_per_s": self.measured.map(|m| m.1),
        })
    }
}

/// The table: simulated beside measured, with the relative error.
pub fn table(rows: &[AllToAllRow], profile: &CostProfile, line: &mut impl FnMut(String)) {
    line(format!(
        "effective all-to-all bandwidth per rank (GB/s), simulated under {} beside measured on A3 (hardware.md):",
        profile.name
    ));
    line(format!(
        "{:>4} | {:>9} {:>9} {:>6} | {:>9} {:>9} {:>6}",
        "EP", "disp_sim", "disp_meas", "error", "comb_sim", "comb_meas", "error"
    ));
    let cell = |sim: f64, meas: Option<f64>| match meas {
        Some(m) => format!("{sim:>9.1} {m:>9.1} {:>+5.0}%", 100.0 * (sim / m - 1.0)),
        None => format!("{sim:>9.1} {:>9} {:>6}", "-", "-"),
    };
    for r in rows {
        line(format!(
            "{:>4} | {} | {}",
            r.ep,
            cell(r.dispatch_gb_per_s, r.measured.map(|m| m.0)),
            cell(r.combine_gb_per_s, r.measured.map(|m| m.1))
        ));
    }
    for note in [
        "dispatch: INT8 rows with their FP32 row scales, combine: BF16 rows, each alone as the baseline runs its",
        "all-to-all kernels (every vector core putting 128-row blocks, in rounds staggered by destination);",
        "bytes a rank sends (its own share included) over the time until its last put has landed. The network's",
        "injection and cross-server bandwidths are fitted to the measured points (hardware.md, 4096 tokens/rank;",
        "`hpmoe_core::cost::FITTED`).",
    ] {
        line(note.to_string());
    }
}
