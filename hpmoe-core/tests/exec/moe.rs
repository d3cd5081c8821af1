//! The MoE layer on the executor equals a loop-nest reference written without the
//! taskflow, bitwise, whatever the timing.

use hpmoe_core::exec::moe_reference::{moe_inputs, moe_reference};
use hpmoe_core::exec::{Executor, OpImpls, RunOptions, SequentialRunner, SplitMix};
use hpmoe_core::moe::MoeShape;
use hpmoe_core::schedule::SimpleCost;
use std::time::Duration;

fn check_against_reference(
    shape: &MoeShape,
    snapshot: &hpmoe_core::exec::Snapshot,
    reference: &[hpmoe_core::exec::HostTensor],
) {
    for (rank, want) in reference.iter().enumerate() {
        let got = snapshot.get(rank as u32, "out").expect("the taskflow has an output `out`");
        if let Some(d) = got.first_difference(want) {
            panic!("{shape:?}: `out` on rank {rank} differs from the reference: {d}");
        }
    }
}

#[test]
fn sequential_run_of_the_moe_taskflow_equals_the_loop_nest_reference() {
    // top-4 as well as tiny's top-2, so the weighted sum adds more than two products per token.
    let shapes = [1, 2, 4].map(MoeShape::tiny).into_iter().chain([MoeShape { top_k: 4, ..MoeShape::tiny(2) }]);
    for shape in shapes {
        let tf = shape.taskflow().unwrap();
        let inputs = moe_inputs(&shape, 11);
        let reference = moe_reference(&shape, &inputs).unwrap();
        let out = SequentialRunner::new(&tf, &OpImpls::builtin()).unwrap().run(&inputs).unwrap();
        check_against_reference(&shape, &out.snapshot, &reference);
        // The reference is not trivially zero or NaN.
        let values = reference[0].to_f32();
        assert!(values.iter().all(|v| v.is_finite()) && values.iter().any(|&v| v != 0.0));
    }
}

#[test]
fn moe_on_the_executor_is_bitwise_the_reference_over_100_runs_with_random_delays() {
    let shape = MoeShape::tiny(2);
    let tf = shape.taskflow().unwrap();
    let compiled = hpmoe_core::compile(&tf, &SimpleCost::default()).unwrap();
    let exec = Executor::new(&tf, &compiled.table, &OpImpls::builtin()).unwrap();
    let inputs = moe_inputs(&shape, 5);
    let reference = moe_reference(&shape, &inputs).unwrap();
    let first = exec.run(&inputs, &RunOptions::default()).unwrap();
    check_against_reference(&shape, &first.snapshot, &reference);
    for run in 0..100u64 {
        // A third of the tiles sleep 0..200 µs, a different third on each run.
        let options = RunOptions::default().with_tile_hook(move |tile| {
            let r = SplitMix::new(run << 32 | u64::from(tile.node)).next_u64();
            if r.is_multiple_of(3) {
                std::thread::sleep(Duration::from_micros(r % 200));
            }
        });
        let out = exec.run(&inputs, &options).unwrap_or_else(|e| panic!("run {run}: {e}"));
        check_against_reference(&shape, &out.snapshot, &reference);
        assert_eq!(out.snapshot.first_difference(&first.snapshot), None, "run {run}: every tensor as in the first run");
    }
}

#[test]
fn moe_on_the_executor_with_four_ranks_one_rank_and_top_4() {
    for shape in [MoeShape::tiny(1), MoeShape::tiny(4), MoeShape { top_k: 4, ..MoeShape::tiny(2) }] {
        let ranks = shape.ranks;
        let tf = shape.taskflow().unwrap();
        let compiled = hpmoe_core::compile(&tf, &SimpleCost::default()).unwrap();
        let exec = Executor::new(&tf, &compiled.table, &OpImpls::builtin()).unwrap();
        let inputs = moe_inputs(&shape, 3);
        let out = exec.run(&inputs, &RunOptions::default()).unwrap();
        check_against_reference(&shape, &out.snapshot, &moe_reference(&shape, &inputs).unwrap());
        assert_eq!(out.stats.tiles, shape.instances_per_rank() * u64::from(ranks));
    }
}
