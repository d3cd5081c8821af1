//! Random valid taskflows (`hpmoe_core::testing`) through the scheduler and the executor give
//! bitwise the same tensors as the sequential runner, whatever the tile timing — with
//! `run_if_above` guards on some families, whose counts arrive by put from other ranks, and
//! folds for whole-tensor reads. (`tests/end_to_end.rs` runs the same generator through the whole
//! chain with the flag plan; this one runs tables without flags, and with random tile delays.)

use hpmoe_core::schedule::SimpleCost;
use hpmoe_core::testing::taskflow_spec;
use hpmoe_host::exec::{Executor, RunOptions, SequentialRunner};
use hpmoe_host::rng::SplitMix;
use hpmoe_host::testing;
use proptest::prelude::*;
use std::time::Duration;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn random_taskflows_on_the_executor_equal_the_sequential_run(
        spec in taskflow_spec(8),
        seed in any::<u64>(),
        delays in any::<bool>(),
    ) {
        let tf = spec.taskflow();
        let impls = testing::op_impls();
        let compiled = hpmoe_core::compile(&tf, &SimpleCost::default())
            .map_err(|d| TestCaseError::fail(d.render(&tf.sources)))?;
        let inputs = testing::inputs(&tf, seed);
        let skipped = testing::expected_skips(&tf, seed);
        let sequential = SequentialRunner::new(&tf, &impls).unwrap().run(&inputs).unwrap();
        prop_assert_eq!(sequential.stats.skipped, skipped);
        let exec = Executor::new(&tf, &compiled.table, &impls).unwrap();
        let mut options = RunOptions::default();
        if delays {
            options = options.with_tile_hook(move |tile| {
                let r = SplitMix::new(seed ^ u64::from(tile.node.raw())).next_u64();
                if r.is_multiple_of(4) {
                    std::thread::sleep(Duration::from_micros(r % 100));
                }
            });
        }
        let run = exec.run(&inputs, &options).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(run.snapshot.first_difference(&sequential.snapshot), None);
        prop_assert_eq!(run.stats.skipped, skipped);
    }
}
