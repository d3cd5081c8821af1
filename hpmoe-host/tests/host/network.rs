//! The A3 profile's network against the measured A3 all-to-all table (hardware.md), measured
//! with the simulator's own effective bandwidth, and the baseline's all-to-all kernels
//! against that same measurement.

use hpmoe_core::cost::{CostProfile, FITTED, MEASURED_A3_ALL_TO_ALL, TaskflowCost};
use hpmoe_core::model::DType;
use hpmoe_host::moe::{DispatchPrecision, MoeShape};
use hpmoe_host::sim::{self, all_to_all_bandwidth};

#[test]
fn the_a3_profile_lands_within_20_percent_of_the_measured_all_to_all_at_every_ep() {
    let profile = CostProfile::ascend_a3_die();
    let mut report = Vec::new();
    // hardware.md's table, as the core carries it.
    assert_eq!(MEASURED_A3_ALL_TO_ALL[4], (128, 57.0, 81.0));
    for (ep, dispatch, combine) in MEASURED_A3_ALL_TO_ALL {
        let shape = MoeShape::deepseek_v3(ep, 4096);
        let d = all_to_all_bandwidth(&shape, DType::I8, &profile).unwrap();
        let c = all_to_all_bandwidth(&shape, DType::Bf16, &profile).unwrap();
        // 4096 tokens × top-8 rows of 7168 B (INT8) and a 4 B scale, or 14 336 B (BF16), per rank.
        assert_eq!((d.bytes_per_rank, c.bytes_per_rank), (4096 * 8 * (7168 + 4), 4096 * 8 * 14_336));
        report.push((ep, d.gb_per_s() / dispatch - 1.0, c.gb_per_s() / combine - 1.0));
    }
    for &(ep, d, c) in &report {
        assert!(
            d.abs() <= 0.2 && c.abs() <= 0.2,
            "EP {ep}: dispatch {:+.1}%, combine {:+.1}%: {report:?}",
            d * 100.0,
            c * 100.0
        );
    }
    // The fitted fields are the profile's, and the fit did not merely copy the stated peak.
    for f in FITTED {
        assert!(profile.field(f.field).is_some(), "{}", f.field);
    }
    assert!(profile.link_gb_per_s < 196.0);
}

#[test]
fn the_baselines_all_to_all_kernels_move_at_the_measured_bandwidth() {
    // The layer's dispatch kernel, run kernel by kernel, is the all-to-all that
    // `all_to_all_bandwidth` measures: the same puts, dealt the same way, on the same network.
    let shape = MoeShape::deepseek_v3(16, 1024);
    let tf = shape.taskflow().unwrap();
    let exp = hpmoe_core::analyse(&tf).unwrap();
    let profile = CostProfile::ascend_a3_die();
    let cost = TaskflowCost::new(&tf, profile.clone());
    let base = sim::kernel_by_kernel(&exp, &tf.profile, &cost).unwrap();
    let kernel_ns = |name: &str| {
        let k = base.kernels.iter().find(|k| tf.families[k.family].name == name).unwrap();
        k.end_ns - k.start_ns
    };
    let a2a = all_to_all_bandwidth(&shape, DType::Bf16, &profile).unwrap();
    assert_eq!(kernel_ns("dispatch"), a2a.ns);
    // Combine has the same layout; its source is in L2 (written by GMM2), which changes
    // nothing while the network, not the cores, is the limit.
    let combine = kernel_ns("combine") as f64 / a2a.ns as f64;
    assert!((combine - 1.0).abs() < 0.02, "combine kernel {combine:.3}× the all-to-all");

    // The INT8 layer's dispatch kernel (rows and scales from the quantised send buffer, in
    // L2) is the INT8 all-to-all the calibration measures.
    let int8 = shape.with_dispatch(DispatchPrecision::Int8);
    let tf = int8.taskflow().unwrap();
    let exp = hpmoe_core::analyse(&tf).unwrap();
    let cost = TaskflowCost::new(&tf, profile.clone());
    let base = sim::kernel_by_kernel(&exp, &tf.profile, &cost).unwrap();
    let k = base.kernels.iter().find(|k| tf.families[k.family].name == "dispatch").unwrap();
    let a2a = all_to_all_bandwidth(&int8, DType::I8, &profile).unwrap();
    let ratio = (k.end_ns - k.start_ns) as f64 / a2a.ns as f64;
    assert!((ratio - 1.0).abs() < 0.02, "INT8 dispatch kernel {ratio:.3}× the INT8 all-to-all");
    // About half the BF16 all-to-all's bytes, in less time.
    let bf16 = all_to_all_bandwidth(&int8, DType::Bf16, &profile).unwrap();
    assert!(a2a.bytes_per_rank * 2 < bf16.bytes_per_rank + bf16.bytes_per_rank / 500);
    assert!(a2a.ns < bf16.ns);
}

#[test]
fn slower_network_tiers_lower_the_effective_bandwidth() {
    let shape = MoeShape::deepseek_v3(32, 1024);
    let a3 = CostProfile::ascend_a3_die();
    let at = |p: &CostProfile| all_to_all_bandwidth(&shape, DType::Bf16, p).unwrap().gb_per_s();
    let base = at(&a3);
    for (field, value) in [("link_gb_per_s", 56.0), ("cross_server_gb_per_s", 30.0), ("ejection_gb_per_s", 30.0)] {
        let slower = at(&a3.with_field(field, value).unwrap());
        assert!(slower < 0.9 * base, "{field} = {value}: {slower:.1} vs {base:.1} GB/s");
    }
    // Within one server (EP 16) the cross-server bandwidth plays no part.
    let one_server = MoeShape::deepseek_v3(16, 1024);
    let within = |p: &CostProfile| all_to_all_bandwidth(&one_server, DType::Bf16, p).unwrap();
    assert_eq!(within(&a3), within(&a3.with_field("cross_server_gb_per_s", 1.0).unwrap()));
}
