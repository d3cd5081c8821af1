//! Dependencies inside one tile family (`after(step(s - 1))`): a running sum along a chain of
//! instances runs on the host executor, certified, and equals the same sum written as a plain
//! loop, whichever way the chain runs; and an `after` range waits for a block of instances.

use hpmoe_core::ids::{NodeId, RankId};
use hpmoe_core::model::{CoreKind, DType, IndexSel, MachineProfile, Taskflow};
use hpmoe_host::exec::{Executor, HostTensor, Inputs, OpImpls, RunOptions, SequentialRunner, Snapshot};

const E: u64 = 3;
const S: u64 = 9;
const COLS: u64 = 4;
const RANKS: u32 = 2;

/// `x[e, s, c]` on `rank`: values whose f32 sums round, so a different order would show.
fn x(rank: u32) -> Vec<f32> {
    (0..E * S * COLS)
        .map(|i| 0.1 * (i as f32 + 1.0) + 1e-3 * rank as f32 + if i % 5 == 0 { 1e6 } else { 0.0 })
        .collect()
}

fn inputs() -> Inputs {
    let mut inputs = Inputs::new();
    for rank in 0..RANKS {
        inputs.set_rank("x", rank, HostTensor::from_f32(DType::F32, &[E, S, COLS], &x(rank)));
    }
    inputs
}

/// Runs `tf` on the executor (which certifies its plan first) and checks the sequential
/// runner agrees bitwise.
fn run(tf: &Taskflow) -> Snapshot {
    let compiled = hpmoe_core::plan(tf).unwrap_or_else(|d| panic!("{}", d.render(&tf.sources)));
    let impls = OpImpls::builtin();
    let exec = Executor::for_compiled(tf, &compiled, &impls).unwrap();
    let out = exec.run(&inputs(), &RunOptions::default()).unwrap();
    let seq = SequentialRunner::new(tf, &impls).unwrap().run(&inputs()).unwrap();
    assert_eq!(out.snapshot.first_difference(&seq.snapshot), None);
    out.snapshot
}

/// `sums[e, s + 1] = sums[e, s] + x[e, s]` along `s` (`forward`), or
/// `sums[e, s] = sums[e, s + 1] + x[e, s]` from the end (`!forward`), one instance per step,
/// each after its neighbour on the chain.
fn running_sum(forward: bool) -> Taskflow {
    let mut tf = Taskflow::new("running_sum", MachineProfile::small(2, RANKS));
    let x = tf.input("x", DType::F32, &[E, S, COLS]);
    let sums = tf.output("sums", DType::F32, &[E, S + 1, COLS]);
    tf.tile("start", CoreKind::Aiv, |t| {
        let e = t.grid("e", E);
        let first = if forward { 0 } else { S as i64 };
        t.op("zero", [sums.at(e).at(first)]);
    });
    tf.tile("step", CoreKind::Aiv, |t| {
        let e = t.grid("e", E);
        let s = t.grid("s", S);
        let (from, to) = if forward { (s.clone(), s.clone() + 1) } else { (s.clone() + 1, s.clone()) };
        t.op("copy", [sums.at(e.clone()).at(from), sums.at(e.clone()).at(to.clone())]);
        t.op("accumulate", [x.at(e.clone()).at(s.clone()), sums.at(e.clone()).at(to)]);
        let previous = if forward { s - 1 } else { s + 1 };
        t.after("step", [IndexSel::At(e), IndexSel::At(previous)]);
    });
    tf
}

/// The same sums as a plain loop, in f32.
fn reference(rank: u32, forward: bool) -> Vec<f32> {
    let x = x(rank);
    let (s_len, c_len) = (S as usize, COLS as usize);
    let mut sums = vec![0f32; E as usize * (s_len + 1) * c_len];
    for e in 0..E as usize {
        let steps: Vec<usize> = if forward { (0..s_len).collect() } else { (0..s_len).rev().collect() };
        for s in steps {
            let (from, to) = if forward { (s, s + 1) } else { (s + 1, s) };
            for c in 0..c_len {
                let prev = sums[(e * (s_len + 1) + from) * c_len + c];
                sums[(e * (s_len + 1) + to) * c_len + c] = prev + x[(e * s_len + s) * c_len + c];
            }
        }
    }
    sums
}

#[test]
fn a_chain_along_s_computes_the_running_sum_of_a_sequential_loop() {
    for forward in [true, false] {
        let out = run(&running_sum(forward));
        for rank in 0..RANKS {
            let got = out.get(rank, "sums").unwrap().to_f32();
            let want = reference(rank, forward);
            assert_eq!(
                got.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                want.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                "forward {forward}, rank {rank}"
            );
        }
    }
}

#[test]
fn a_chain_orders_its_instances_in_the_instance_dag() {
    let tf = running_sum(true);
    let exp = hpmoe_core::analyse(&tf).unwrap();
    // Per rank: E `start` instances, E × S steps; `step(e, 0)` waits only for `start(e)`.
    let step = |rank: u32, e: u64, s: u64| exp.space.node(RankId::new(rank), (E + e * S + s) as u32);
    let start = |rank: u32, e: u64| exp.space.node(RankId::new(rank), e as u32);
    for rank in 0..RANKS {
        for e in 0..E {
            assert_eq!(exp.dag.pred.row(step(rank, e, 0)), &[start(rank, e)]);
            for s in 1..S {
                assert_eq!(exp.dag.pred.row(step(rank, e, s)), &[step(rank, e, s - 1)]);
            }
        }
    }
}

/// `mark(r)` waits for the block of four `load` instances `after(load(r * 4 .. r * 4 + 4))`
/// selects, and for no other.
#[test]
fn an_after_range_waits_for_a_block_of_instances() {
    let mut tf = Taskflow::new("blocks", MachineProfile::small(1, 1));
    let x = tf.input("x", DType::F32, &[E, S, COLS]);
    let y = tf.scratch("y", DType::F32, &[12, COLS]);
    let marks = tf.output("marks", DType::F32, &[3, COLS]);
    tf.tile("load", CoreKind::Aiv, |t| {
        let i = t.grid("i", 12);
        t.op("copy", [x.at(0).at(0), y.at(i)]);
    });
    tf.tile("mark", CoreKind::Aiv, |t| {
        let r = t.grid("r", 3);
        t.op("zero", [marks.at(r.clone())]);
        t.after("load", [IndexSel::Range { start: r.clone() * 4, end: r * 4 + 4 }]);
    });
    let exp = hpmoe_core::analyse(&tf).unwrap();
    for r in 0..3u32 {
        let want: Vec<NodeId> = (r * 4..r * 4 + 4).map(NodeId::new).collect();
        assert_eq!(exp.dag.pred.row(NodeId::new(12 + r)), want.as_slice());
    }
}
