//! Tables compiled with hardware flags: the dependencies from an AIC tile to a tile on one of its
//! own AIVs leave the counters, and the executor keeps them through the flag plan, as the device
//! does. Slowing every AIC tile down makes a missing dependency show: the flagged run still equals
//! the sequential reference bitwise, and the same table run without its flag plan does not.

use hpmoe_core::schedule::SimpleCost;
use hpmoe_host::exec::moe_reference::moe_inputs;
use hpmoe_host::exec::{Executor, OpImpls, RunOptions, SequentialRunner, TileHook};
use hpmoe_host::moe::MoeShape;
use std::sync::Arc;
use std::time::Duration;

/// Every tile on an AIC (the flag producers) sleeps first.
fn slow_aic() -> RunOptions {
    let hook: TileHook = Arc::new(|t| {
        if t.family.starts_with("gmm") {
            std::thread::sleep(Duration::from_millis(10));
        }
    });
    RunOptions { tile_hook: Some(hook), ..RunOptions::default() }
}

#[test]
fn the_executor_keeps_the_dependencies_the_flag_carries() {
    let shape = MoeShape::tiny(2);
    let tf = shape.taskflow().unwrap();
    let compiled =
        hpmoe_core::compile_with(&tf, &SimpleCost::default(), &hpmoe_core::CompileOptions::default()).unwrap();
    assert!(!compiled.flags.edges.is_empty(), "the layer has AIC -> own-AIV dependencies on the flag");
    let inputs = moe_inputs(&shape, 3);
    let reference = SequentialRunner::new(&tf, &OpImpls::builtin()).unwrap().run(&inputs).unwrap().snapshot;
    let exec = Executor::for_compiled(&tf, &compiled, &OpImpls::builtin()).unwrap();
    for _ in 0..3 {
        let out = exec.run(&inputs, &slow_aic()).unwrap();
        assert_eq!(out.snapshot.first_difference(&reference), None);
    }
    // The same table without its flag plan misses those dependencies: the certificate check
    // refuses it, and run anyway (fault injection), the consumers run first (one wrong run of a
    // few is the proof; a loaded host could delay a consumer past a producer).
    let refused = Executor::new(&tf, &compiled.table, &OpImpls::builtin()).unwrap_err();
    assert_eq!(refused.certificate().map(|e| e.fault), Some(hpmoe_core::certify::CertFault::Unenforced), "{refused}");
    let blind = Executor::uncertified_for_fault_injection(&tf, &compiled.table, None, &OpImpls::builtin()).unwrap();
    let wrong =
        (0..3).any(|_| blind.run(&inputs, &slow_aic()).unwrap().snapshot.first_difference(&reference).is_some());
    assert!(wrong, "a table without its flag plan ran correctly");
}
