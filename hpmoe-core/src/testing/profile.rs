//! A cost profile in round numbers, for tests that work their expected times out by hand.

use crate::cost::CostProfile;

/// 1 GHz, so every per-cycle figure is per ns; 4 GB/s links, 1 µs latency, no put setup, HBM
/// that never binds, no launch or host-sync cost. Tests that need another figure override it:
/// `CostProfile { l2_hit_rate: 1.0, ..round_profile() }`.
pub fn round_profile() -> CostProfile {
    CostProfile {
        name: "round".into(),
        clock_ghz: 1.0,
        cube_flops_per_cycle: 1000.0,
        cube_efficiency: 0.5,
        vector_flops_per_cycle: 10.0,
        gm_read_bytes_per_cycle: 10.0,
        l2_read_bytes_per_cycle: 40.0,
        aic_write_bytes_per_cycle: 20.0,
        aiv_write_bytes_per_cycle: 8.0,
        l2_hit_rate: 0.75,
        gm_read_latency_cycles: 30.0,
        gm_write_latency_cycles: 20.0,
        tile_overhead_ns: 100.0,
        link_gb_per_s: 4.0,
        ejection_gb_per_s: 4.0,
        cross_server_gb_per_s: 4.0,
        link_latency_ns: 1000.0,
        cross_server_latency_ns: 1000.0,
        put_setup_ns: 0.0,
        dies_per_package: 1,
        packages_per_server: 8,
        hbm_gb_per_s: 1e6,
        kernel_launch_ns: 0.0,
        host_collective_sync_ns: 0.0,
    }
}
