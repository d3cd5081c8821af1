//! The simulator's own effective all-to-all bandwidth: bytes moved over the simulated time
//! of a taskflow that does nothing but one MoE layer's dispatch (or, the same layout with
//! BF16 rows, its combine). INT8 rows travel with their per-row FP32 scales, a second put of
//! each block to the same rank, as the layer's INT8 dispatch sends them
//! ([`crate::moe::DispatchPrecision::Int8`]): the measured A3 dispatch moves INT8 rows, and the
//! calibration prices exactly the puts the flagship's INT8 dispatch makes.
//!
//! The all-to-all runs as the kernel-by-kernel baseline runs the layer's dispatch and
//! combine kernels ([`super::kernel_by_kernel`]: every vector core of every rank putting
//! blocks, staggered by destination), so the figure is the one the baseline's all-to-alls
//! pay, not a formula beside the simulator. It is what the A3 profile's network was fitted
//! to ([`hpmoe_core::cost::FITTED`]).
//!
//! ```
//! use hpmoe_core::cost::CostProfile;
//! use hpmoe_core::model::DType;
//! use hpmoe_host::moe::MoeShape;
//!
//! let a2a = hpmoe_host::sim::all_to_all_bandwidth(&MoeShape::tiny(4), DType::I8, &CostProfile::ascend_a3_die()).unwrap();
//! // ranks × local experts × rows per source × (hidden INT8 values + one FP32 scale)
//! assert_eq!(a2a.bytes_per_rank, 4 * 2 * 4 * (32 + 4));
//! assert!(a2a.gb_per_s() > 0.0);
//! ```

use super::{SimError, kernel_by_kernel};
use crate::moe::MoeShape;
use hpmoe_core::cost::{CostProfile, TaskflowCost};
use hpmoe_core::model::{Affine, CoreKind, DType, MachineProfile, Taskflow};

/// One simulated all-to-all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AllToAll {
    /// Ranks taking part (each sends to every rank, itself included).
    pub ranks: u32,
    /// Bytes each rank sends: its routed rows (tokens × top-k), its own share included, and
    /// their scales when the rows are INT8.
    pub bytes_per_rank: u64,
    /// From the kernel's start until the last put has landed, ns (no launch overhead or host
    /// synchronisation).
    pub ns: u64,
}

impl AllToAll {
    /// Effective bandwidth per rank, GB/s: bytes sent over time.
    pub fn gb_per_s(&self) -> f64 {
        self.bytes_per_rank as f64 / self.ns.max(1) as f64
    }
}

/// Simulates `shape`'s dispatch layout alone with rows of `dtype` under `profile`: every
/// rank puts its blocks of `row_block` rows to every expert's rank (`ranks × local experts ×
/// slot rows / row_block` blocks per rank), as the layer's dispatch family does; with
/// `DType::I8` each block's FP32 row scales go with it (a second put, as the INT8 dispatch
/// puts them).
///
/// # Errors
/// [`SimError::Shape`] if the shape is invalid.
pub fn all_to_all_bandwidth(shape: &MoeShape, dtype: DType, profile: &CostProfile) -> Result<AllToAll, SimError> {
    shape.validate().map_err(SimError::Shape)?;
    let (r, e, c, b, h) =
        (u64::from(shape.ranks), shape.local_experts(), shape.slot_rows(), shape.row_block, shape.hidden);
    let machine = MachineProfile {
        name: "all_to_all".into(),
        aic_per_rank: shape.aic_per_rank,
        aiv_per_aic: 2,
        ranks: shape.ranks,
    };
    let mut tf = Taskflow::new("all_to_all", machine);
    let xs = tf.input("xs", dtype, &[r * e * c, h]);
    let recv = tf.symmetric("recv", dtype, &[e, r * c, h]);
    let scales = (dtype == DType::I8)
        .then(|| (tf.input("xs_scale", DType::F32, &[r * e * c]), tf.symmetric("recv_scale", DType::F32, &[e, r * c])));
    tf.tile("dispatch", CoreKind::Aiv, |tb| {
        let dst = tb.grid("dst", r);
        let ex = tb.grid("e", e);
        let blk = tb.grid("b", c / b);
        let src_row = (dst.clone() * e as i64 + ex.clone()) * c as i64 + blk.clone() * b as i64;
        let dst_row = Affine::rank() * c as i64 + blk * b as i64;
        tb.put(xs.slice(src_row.clone(), b), recv.on(dst.clone()).at(ex.clone()).slice(dst_row.clone(), b));
        if let Some((xs_scale, recv_scale)) = &scales {
            tb.put(xs_scale.slice(src_row, b), recv_scale.on(dst).at(ex).slice(dst_row, b));
        }
    });
    let exp = hpmoe_core::analyse(&tf)
        .map_err(|diagnostics| SimError::AllToAllChecks { diagnostics, sources: tf.sources.clone() })?;
    let cost = TaskflowCost::new(&tf, profile.clone());
    let base = kernel_by_kernel(&exp, &tf.profile, &cost)?;
    let kernel = base.kernels.first().ok_or(SimError::EmptyAllToAll)?;
    Ok(AllToAll {
        ranks: shape.ranks,
        bytes_per_rank: r * e * c * (h * dtype.size_bytes() + if scales.is_some() { 4 } else { 0 }),
        ns: kernel.end_ns - kernel.start_ns,
    })
}
