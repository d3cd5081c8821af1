//! Fault injection: a dropped signal, a panicking tile and a hanging tile each end the run
//! with an error that names what went wrong, within a bounded time, and later runs work.

use hpmoe_core::ids::{NodeId, RankId};
use hpmoe_core::schedule::SimpleCost;
use hpmoe_core::{Compiled, compile};
use hpmoe_host::exec::moe_reference::{moe_inputs, moe_reference};
use hpmoe_host::exec::{
    Arg, ArgDesc, ExecError, Executor, FailureCause, MissingSignal, OpError, OpImpls, ProducerState, RefOp, RunOptions,
    TileError,
};
use hpmoe_host::moe::MoeShape;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn tiny_moe() -> (hpmoe_core::model::Taskflow, Compiled) {
    let tf = MoeShape::tiny(2).taskflow().unwrap();
    let compiled = compile(&tf, &SimpleCost::default()).unwrap();
    (tf, compiled)
}

#[test]
fn a_dropped_signal_times_out_naming_the_waiter_the_counter_and_the_silent_producer() {
    let (tf, c) = tiny_moe();
    let exec = Executor::new(&tf, &c.table, &OpImpls::builtin()).unwrap();
    let space = &c.expanded.space;
    // A dispatch put on rank 1 whose signal goes to a tile on rank 0.
    let dispatch = space.families[0].clone();
    let dropped = (dispatch.first..dispatch.first + dispatch.count)
        .map(|local| space.node(RankId::new(1), local))
        .find(|&n| c.sync.signals(n).iter().any(|s| s.rank.raw() == 0))
        .expect("rank 1 dispatches to rank 0");
    // The tiles waiting for its signals (it may feed several): any of them can be the
    // root, depending on which wait times out first.
    let waiters: Vec<NodeId> = c
        .sync
        .signals(dropped)
        .iter()
        .map(|s| {
            let mut on_rank = (0..space.per_rank).map(|local| space.node(s.rank, local));
            on_rank.find(|&n| c.sync.waits[n].is_some_and(|w| w.counter == s.counter)).unwrap()
        })
        .collect();

    let timeout = Duration::from_millis(200);
    let options = RunOptions::default().with_timeout(timeout).dropping_signals_of(dropped);
    let started = Instant::now();
    let err = exec.run(&moe_inputs(&MoeShape::tiny(2), 1), &options).unwrap_err();
    let took = started.elapsed();
    let report = err.timeout().unwrap_or_else(|| panic!("expected a timeout, got: {err}"));
    let root = report.root();
    let core_name = |n: NodeId| tf.profile.core_name(c.placement.core_of[n].raw());
    let waiter = *waiters.iter().find(|&&w| exec.node_name(w) == root.tile).unwrap_or_else(|| panic!("{err}"));
    let wait = c.sync.waits[waiter].unwrap();
    assert_eq!(root.core, core_name(waiter));
    let rank = space.rank_of(waiter);
    assert_eq!((root.rank, root.counter, root.expected, root.seen), (rank, wait.counter, wait.target, wait.target - 1));
    assert_eq!(
        root.missing,
        vec![MissingSignal {
            tile: exec.node_name(dropped),
            core: core_name(dropped),
            state: ProducerState::SignalsDropped
        }]
    );
    assert_eq!(report.timeout, timeout);
    let text = err.to_string();
    assert!(text.contains(&root.tile) && text.contains(&exec.node_name(dropped)) && text.contains("dropped"), "{text}");
    assert!(took < timeout * 2 + Duration::from_secs(2), "the run took {took:?} to report a {timeout:?} timeout");
    if let ExecError::Run(f) = &err {
        assert!(f.abandoned.is_empty());
    }
    // Every wait behind the root is a link of one chain: each waits for a core that waits.
    for w in &report.chain[..report.chain.len() - 1] {
        assert!(w.missing.iter().any(|m| m.state == ProducerState::Waiting), "{w}");
        assert!(w.seen < w.expected);
    }

    // The same executor runs correctly afterwards.
    let shape = MoeShape::tiny(2);
    let inputs = moe_inputs(&shape, 1);
    let out = exec.run(&inputs, &RunOptions::default()).unwrap();
    assert_eq!(out.snapshot.get(0, "out"), Some(&moe_reference(&shape, &inputs).unwrap()[0]));
}

/// Wraps an op's body and panics on the tile whose argument `arg` starts at `origin` on `rank`.
struct PanicAt {
    inner: Arc<dyn RefOp>,
    arg: usize,
    origin: Vec<u32>,
    rank: u32,
}

impl RefOp for PanicAt {
    fn check(&self, args: &[ArgDesc]) -> Result<(), OpError> {
        self.inner.check(args)
    }
    fn run(&self, args: &[Arg<'_>]) -> Result<(), OpError> {
        if args[self.arg].origin() == self.origin.as_slice() && args[self.arg].rank() == self.rank {
            panic!("injected fault");
        }
        self.inner.run(args)
    }
}

#[test]
fn a_panicking_tile_ends_the_run_naming_it_and_the_next_run_works() {
    let (tf, c) = tiny_moe();
    let mut impls = OpImpls::builtin();
    let swiglu = impls.get("swiglu").unwrap().clone();
    // `act` of swiglu(e=0, m=1, n=0) starts at [0, 4, 0] (row blocks of 4).
    impls.replace("swiglu", PanicAt { inner: swiglu, arg: 1, origin: vec![0, 4, 0], rank: 1 });
    let faulty = Executor::new(&tf, &c.table, &impls).unwrap();
    let shape = MoeShape::tiny(2);
    let inputs = moe_inputs(&shape, 2);
    let options = RunOptions::default().with_timeout(Duration::from_secs(2));
    let err = faulty.run(&inputs, &options).unwrap_err();
    let ExecError::Run(failure) = &err else { panic!("{err}") };
    let FailureCause::TilePanicked(t) = &failure.cause else { panic!("expected a panic, got: {err}") };
    assert_eq!(t.tile, "swiglu(e=0, m=1, n=0) on rank 1");
    assert_eq!(t.error, TileError::Panicked("injected fault".into()));
    let node = {
        let space = &c.expanded.space;
        space.node(RankId::new(1), space.local_id(2, &[0, 1, 0]))
    };
    assert_eq!(t.core, tf.profile.core_name(c.placement.core_of[node].raw()));
    assert!(err.to_string().contains("swiglu(e=0, m=1, n=0) on rank 1"));

    // A panic in the tile hook is the tile's too; the same executor then runs cleanly.
    let exec = Executor::new(&tf, &c.table, &OpImpls::builtin()).unwrap();
    let hook = RunOptions::default().with_tile_hook(move |tile| {
        if tile.node == node {
            panic!("hook fault in {}", tile.family);
        }
    });
    let err = exec.run(&inputs, &hook).unwrap_err();
    assert_eq!(err.tile_failure().map(|t| &t.error), Some(&TileError::Panicked("hook fault in swiglu".into())));
    let reference = moe_reference(&shape, &inputs).unwrap();
    for _ in 0..3 {
        let out = exec.run(&inputs, &RunOptions::default()).unwrap();
        assert_eq!(out.snapshot.get(1, "out"), Some(&reference[1]));
    }
}

#[test]
fn a_tile_that_never_returns_is_reported_and_its_thread_abandoned_in_bounded_time() {
    let (tf, c) = tiny_moe();
    let exec = Executor::new(&tf, &c.table, &OpImpls::builtin()).unwrap();
    // The last weighted-sum tile of rank 0: nothing waits on it, so only the watchdog sees it.
    let space = &c.expanded.space;
    let sum = &space.families[5];
    let node = space.node(RankId::new(0), sum.first + sum.count - 1);
    let timeout = Duration::from_millis(100);
    let hang = Duration::from_secs(3);
    let options = RunOptions::default().with_timeout(timeout).with_tile_hook(move |tile| {
        if tile.node == node {
            std::thread::sleep(hang);
        }
    });
    let started = Instant::now();
    let err = exec.run(&moe_inputs(&MoeShape::tiny(2), 0), &options).unwrap_err();
    assert!(started.elapsed() < hang, "the run waited for the hung tile");
    let ExecError::Run(failure) = &err else { panic!("{err}") };
    let FailureCause::TileTooSlow(t) = &failure.cause else { panic!("expected a slow tile, got: {err}") };
    let core = tf.profile.core_name(c.placement.core_of[node].raw());
    assert_eq!(t.tile, exec.node_name(node));
    assert_eq!(failure.abandoned, vec![core.clone()]);
    assert!(err.to_string().contains(&core));
}
