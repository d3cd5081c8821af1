//! The custom variant overlaps: at DeepSeek-V3 EP 8 in the simulator, its shared-expert tiles
//! start while dispatch puts are still in flight on every rank, and the fused taskflow beats
//! the kernel-by-kernel baseline within 1.2x its bound. (It used to absorb the shared expert
//! for less added latency than the baseline pays, 1.16 ms against 1.30: the routed layer alone
//! then idled 1.5 ms in a combine tail that the shared expert's AIC work filled. With
//! send-round lanes the routed layer alone runs within 1.04x its AIC-work bound and leaves no
//! such gaps: the shared expert's 1.25 ms of AIC work per core now adds 1.95 ms; see the
//! README's custom variant.)

use hpmoe_core::cost::{CostProfile, TaskflowCost};
use hpmoe_core::model::Taskflow;
use hpmoe_examples::shared_expert::{SharedMoe, overlap};
use hpmoe_host::sim::{self, Comparison};

fn simulate(tf: &Taskflow) -> Comparison {
    simulate_on(tf, CostProfile::ascend_a3_die())
}

fn simulate_on(tf: &Taskflow, profile: CostProfile) -> Comparison {
    let cost = TaskflowCost::new(tf, profile);
    let compiled = hpmoe_core::compile(tf, &cost).unwrap_or_else(|d| panic!("{}", d.render(&tf.sources)));
    sim::compare(&compiled, &tf.profile, &cost).unwrap()
}

#[test]
fn shared_expert_overlaps_dispatch_at_ep8() {
    let shape = SharedMoe::deepseek_v3(8, 4096);
    let tf = shape.taskflow().unwrap();
    let with = simulate(&tf);

    // Beats the kernel-by-kernel run of the same work (routed layer + shared expert).
    let (taskflow, baseline) = (with.taskflow.makespan_ns, with.baseline.result.makespan_ns);
    assert!(taskflow < baseline, "taskflow {taskflow} ns, baseline {baseline} ns");
    // Keeps the cores full: within 5% of the lower bound once receivers do not limit it, and
    // within 1.2x on the calibrated network (1.09x: the scheduler does not price the
    // receivers' ejection limit; see the README's network model).
    let unlimited_ejection = CostProfile { ejection_gb_per_s: 1e5, ..CostProfile::ascend_a3_die() };
    let free = simulate_on(&tf, unlimited_ejection);
    assert!(free.taskflow_over_bound() < 1.05, "taskflow / bound = {:.3}", free.taskflow_over_bound());
    assert!(with.taskflow_over_bound() < 1.2, "taskflow / bound = {:.3}", with.taskflow_over_bound());

    // On every rank the shared expert starts while the rank's dispatch puts are in flight.
    let ranks = overlap(&tf, &with.taskflow).unwrap();
    assert_eq!(ranks.len(), 8);
    for o in &ranks {
        assert!(o.first_shared_start_ns < o.dispatch_end_ns, "{o:?}");
        assert!(o.shared_busy_during_dispatch_ns > 0, "{o:?}");
    }
}
