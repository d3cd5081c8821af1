//! `run_if_above` guards on the executor and the sequential runner: a guarded instance runs
//! its body exactly when its count is above its threshold, reads the count only after the
//! put that wrote it arrived, and signals either way, so the tiles after it still run.

use hpmoe_core::ids::RankId;
use hpmoe_core::model::{Affine, CoreKind, DType, IndexSel, MachineProfile, Taskflow};
use hpmoe_core::schedule::SimpleCost;
use hpmoe_host::exec::{
    ExecError, Executor, FailureCause, HostTensor, Inputs, OpImpls, ProducerState, RunOptions, RunOutput,
    SequentialRunner, TileError,
};
use hpmoe_host::rng::SplitMix;
use std::time::Duration;

/// Two ranks. `announce` puts each rank's `sent[dst]` into `counts[RANK]` on rank `dst`;
/// `work(src, b)` copies row `b` of `x` into `y[src, b]` only if `counts[src] > 2·b`;
/// `after_work(src)` runs after every `work(src, ..)` and writes `z[src]`.
fn guarded_taskflow() -> Taskflow {
    let mut tf = Taskflow::new("guarded", MachineProfile::small(1, 2));
    let sent = tf.input("sent", DType::I32, &[2]);
    let counts = tf.symmetric("counts", DType::I32, &[2]);
    let x = tf.input("x", DType::Bf16, &[4, 8]);
    let y = tf.output("y", DType::Bf16, &[2, 4, 8]);
    let z = tf.output("z", DType::Bf16, &[2, 8]);
    tf.tile("announce", CoreKind::Aiv, |t| {
        let dst = t.grid("dst", 2);
        t.put(sent.at(dst.clone()), counts.on(dst).at(Affine::rank()));
    });
    tf.tile("work", CoreKind::Aiv, |t| {
        let src = t.grid("src", 2);
        let b = t.grid("b", 4);
        t.run_if_above(counts.at(src.clone()), b.clone() * 2);
        t.op("copy", [x.at(b.clone()), y.at(src).at(b)]);
    });
    tf.tile("after_work", CoreKind::Aiv, |t| {
        let src = t.grid("src", 2);
        t.after("work", [IndexSel::At(src.clone()), IndexSel::All]);
        t.op("copy", [x.at(3), z.at(src)]);
    });
    tf
}

/// `sent` of rank 0 is `[4, 0]`, of rank 1 `[5, -5]`: rank 0 receives counts `[4, 5]`,
/// rank 1 `[0, -5]`.
fn guarded_inputs() -> Inputs {
    let mut inputs = Inputs::new();
    inputs
        .set("x", HostTensor::from_fn(DType::Bf16, &[4, 8], |i| i as f32 + 1.0))
        .set_rank("sent", 0, HostTensor::from_f32(DType::I32, &[2], &[4.0, 0.0]))
        .set_rank("sent", 1, HostTensor::from_f32(DType::I32, &[2], &[5.0, -5.0]));
    inputs
}

/// Which `work(src, b)` run their body: count > 2·b.
fn expected_runs(rank: u32, src: u64, b: u64) -> bool {
    let counts: [[i64; 2]; 2] = [[4, 5], [0, -5]];
    counts[rank as usize][src as usize] > 2 * b as i64
}

fn check_guarded_run(out: &RunOutput, inputs: &Inputs) {
    let x = inputs.get("x", 0).unwrap();
    let poison = hpmoe_host::exec::tensor::poison(DType::Bf16);
    for rank in 0..2 {
        let y = out.snapshot.get(rank, "y").unwrap();
        for src in 0..2u64 {
            for b in 0..4u64 {
                let row = &y.bits()[((src * 4 + b) * 8) as usize..][..8];
                if expected_runs(rank, src, b) {
                    assert_eq!(row, &x.bits()[(b * 8) as usize..][..8], "work(src={src}, b={b}) on rank {rank} ran");
                } else {
                    assert_eq!(row, &[poison; 8], "work(src={src}, b={b}) on rank {rank} was skipped");
                }
            }
        }
        // Every waiter of the guarded tiles ran, skipped producers or not.
        let z = out.snapshot.get(rank, "z").unwrap();
        assert_eq!(z.bits(), [&x.bits()[24..32], &x.bits()[24..32]].concat(), "after_work on rank {rank}");
    }
    // 2 announce + 8 work + 2 after_work per rank; of the 16 work tiles, 5 run:
    // rank 0 src 0 (count 4): b = 0, 1 (4 > 4 is false); src 1 (count 5): b = 0, 1, 2.
    assert_eq!(out.stats.tiles, 24);
    assert_eq!(out.stats.skipped, 11);
    assert_eq!(out.stats.bodies_run(), 13);
}

#[test]
fn guarded_tiles_run_exactly_when_the_put_count_is_above_the_threshold_and_still_signal() {
    let tf = guarded_taskflow();
    let inputs = guarded_inputs();
    let impls = OpImpls::builtin();
    let seq = SequentialRunner::new(&tf, &impls).unwrap().run(&inputs).unwrap();
    check_guarded_run(&seq, &inputs);
    let compiled =
        hpmoe_core::compile(&tf, &SimpleCost::default()).unwrap_or_else(|d| panic!("{}", d.render(&tf.sources)));
    let exec = Executor::new(&tf, &compiled.table, &impls).unwrap();
    for run in 0..40u64 {
        // Delay the announcing puts on some runs, and random tiles on all: a guard read
        // before its count arrived would see the poisoned count and skip.
        let options = RunOptions::default().with_tile_hook(move |tile| {
            let r = SplitMix::new(run << 32 | u64::from(tile.node.raw())).next_u64();
            if (tile.family == "announce" && run % 2 == 0) || r.is_multiple_of(3) {
                std::thread::sleep(Duration::from_micros(r % 300));
            }
        });
        let out = exec.run(&inputs, &options).unwrap_or_else(|e| panic!("run {run}: {e}"));
        check_guarded_run(&out, &inputs);
        assert_eq!(out.snapshot.first_difference(&seq.snapshot), None, "run {run}");
    }
}

#[test]
fn an_overflowing_threshold_is_a_run_error_naming_the_guard_and_the_tile() {
    let mut tf = Taskflow::new("overflow", MachineProfile::small(1, 1));
    let n = tf.input("n", DType::I32, &[1]);
    let y = tf.output("y", DType::Bf16, &[2, 4]);
    tf.tile("w", CoreKind::Aiv, |t| {
        let i = t.grid("i", 2);
        // 1 for i = 0; i64::MAX + 1 for i = 1.
        t.run_if_above(n.at(0), i.clone() * i64::MAX + 1);
        t.op("zero", [y.at(i)]);
    });
    let mut inputs = Inputs::new();
    inputs.set("n", HostTensor::from_f32(DType::I32, &[1], &[7.0]));
    let impls = OpImpls::builtin();
    let compiled = hpmoe_core::compile(&tf, &SimpleCost::default()).unwrap();
    let errors = [
        Executor::new(&tf, &compiled.table, &impls).unwrap().run(&inputs, &RunOptions::default()).unwrap_err(),
        SequentialRunner::new(&tf, &impls).unwrap().run(&inputs).unwrap_err(),
    ];
    for err in errors {
        let ExecError::Run(failure) = &err else { panic!("expected a run error, got {err}") };
        let FailureCause::OpFailed(t) = &failure.cause else { panic!("expected an op failure, got {err}") };
        assert_eq!(t.tile, "w(i=1) on rank 0");
        assert_eq!(t.op.as_deref(), Some("run_if_above"));
        let TileError::GuardOverflow { above, index_names } = &t.error else { panic!("expected an overflow: {err}") };
        assert_eq!(index_names, &["i".to_string()]);
        assert!(above.eval(&[1], 0).is_err());
        assert_eq!(t.error.to_string(), "`above = 9223372036854775807 * i + 1` overflows i64 for this instance");
        assert!(err.to_string().contains("op `run_if_above`"), "{err}");
    }
}

#[test]
fn a_skipped_producer_whose_signals_are_lost_is_reported_as_finished_without_signalling() {
    let tf = guarded_taskflow();
    let compiled = hpmoe_core::compile(&tf, &SimpleCost::default()).unwrap();
    let exec = Executor::new(&tf, &compiled.table, &OpImpls::builtin()).unwrap();
    let space = &compiled.expanded.space;
    // Every work tile of rank 1 skips its body (counts 0 and -5). One that signals a
    // waiter (not every one does: the scheduler drops edges its core order implies) loses
    // its signals.
    let work = space.families[1].clone();
    let skipped = (work.first..work.first + work.count)
        .map(|local| space.node(RankId::new(1), local))
        .find(|&n| !compiled.sync.signals(n).is_empty())
        .expect("some work tile of rank 1 signals");
    let waiter = {
        let s = compiled.sync.signals(skipped)[0];
        let mut on_rank = (0..space.per_rank).map(|local| space.node(s.rank, local));
        on_rank.find(|&n| compiled.sync.waits[n].is_some_and(|w| w.counter == s.counter)).unwrap()
    };
    let options = RunOptions::default().with_timeout(Duration::from_millis(200)).dropping_signals_of(skipped);
    let err = exec.run(&guarded_inputs(), &options).unwrap_err();
    let report = err.timeout().unwrap_or_else(|| panic!("expected a timeout, got: {err}"));
    let root = report.root();
    assert_eq!(root.tile, exec.node_name(waiter), "{err}");
    assert_eq!(root.missing.len(), 1, "{err}");
    assert_eq!(root.missing[0].tile, exec.node_name(skipped));
    assert_eq!(root.missing[0].state, ProducerState::SignalsDropped);
}
