//! The MoE layer on the executor equals a loop-nest reference written without the
//! taskflow, bitwise, whatever the timing — balanced, and with natural routing, where the
//! guards skip exactly the blocks past each slot's count.

use hpmoe_core::model::{DType, Taskflow};
use hpmoe_core::schedule::SimpleCost;
use hpmoe_host::exec::moe_reference::{moe_inputs, moe_inputs_routed, moe_reference};
use hpmoe_host::exec::{
    Executor, HostTensor, Inputs, OpImpls, ReferenceError, RunOptions, RunOutput, SequentialRunner, SlotProblem,
};
use hpmoe_host::moe::{DispatchPrecision, MoeShape, RoutedTokens};
use hpmoe_host::rng::SplitMix;
use std::time::Duration;

fn check_against_reference(
    shape: &MoeShape,
    snapshot: &hpmoe_host::exec::Snapshot,
    reference: &[hpmoe_host::exec::HostTensor],
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
    // INT8 dispatch too, balanced and natural.
    let int8 = |s: MoeShape| s.with_dispatch(DispatchPrecision::Int8);
    let shapes = [1, 2, 4].map(MoeShape::tiny).into_iter().chain([
        MoeShape { top_k: 4, ..MoeShape::tiny(2) },
        int8(MoeShape::tiny(2)),
        int8(MoeShape { top_k: 4, ..MoeShape::tiny(4) }),
        int8(MoeShape::tiny_natural(2)),
    ]);
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
fn int8_dispatch_moves_the_result_by_the_quantisation_error_only() {
    use hpmoe_host::exec::moe_reference::int8_round_trip;
    // Per-row symmetric: scale 1/127 for a row whose largest magnitude is 1; -63.5 rounds to
    // even (-64), 31.75 to 32; zeros stay zero; a row of zeros has scale 0.
    let s = 1.0f32 / 127.0;
    let want: Vec<f32> = [127.0f32, -64.0, 32.0, 0.0].iter().map(|q| half::bf16::from_f32(q * s).to_f32()).collect();
    assert_eq!(int8_round_trip(&[1.0, -0.5, 0.25, 0.0]), want);
    assert_eq!(int8_round_trip(&[0.0; 3]), [0.0; 3]);
    // On the layer: different bits from BF16 dispatch, but within a few per cent.
    for shape in [MoeShape::tiny(2), MoeShape::tiny_natural(2)] {
        let inputs = moe_inputs(&shape, 11);
        let bf16 = moe_reference(&shape, &inputs).unwrap();
        let int8 = moe_reference(&shape.clone().with_dispatch(DispatchPrecision::Int8), &inputs).unwrap();
        let (a, b) = (bf16[0].to_f32(), int8[0].to_f32());
        assert_ne!(a, b);
        let scale = a.iter().fold(0.0f32, |m, v| m.max(v.abs()));
        let err = a.iter().zip(&b).fold(0.0f32, |m, (x, y)| m.max((x - y).abs()));
        assert!(err > 0.0 && err < 0.05 * scale, "{shape:?}: error {err} against values up to {scale}");
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
            let r = SplitMix::new(run << 32 | u64::from(tile.node.raw())).next_u64();
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
    let int8 = |s: MoeShape| s.with_dispatch(DispatchPrecision::Int8);
    for shape in [
        MoeShape::tiny(1),
        MoeShape::tiny(4),
        MoeShape { top_k: 4, ..MoeShape::tiny(2) },
        int8(MoeShape::tiny(4)),
        int8(MoeShape::tiny_natural(4)),
    ] {
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

// Natural routing: run-time slots, guards past each slot's count, the gathering weighted sum.

/// Guarded instances that skip under `routing`, from the layout alone: a (source, expert)
/// slot holding `n` rows keeps `ceil(n / B)` of its `C / B` blocks; each block past them
/// skips its dispatch, its GMM1, SwiGLU and GMM2 column tiles, and its combine.
fn expected_skips(shape: &MoeShape, routing: &RoutedTokens) -> u64 {
    let (b, c) = (shape.row_block, shape.slot_rows());
    let per_block = 2 + 2 * (2 * shape.intermediate / shape.gmm1_cols) + shape.hidden / shape.gmm2_cols;
    let empty_blocks: u64 = routing.send_counts.iter().flatten().map(|&n| c / b - (n as u64).div_ceil(b)).sum();
    empty_blocks * per_block
}

/// Runs `tf` on the executor (scheduled with `SimpleCost`), and sequentially.
fn run_natural(tf: &Taskflow, inputs: &Inputs) -> (RunOutput, RunOutput) {
    let compiled =
        hpmoe_core::compile(tf, &SimpleCost::default()).unwrap_or_else(|d| panic!("{}", d.render(&tf.sources)));
    let exec = Executor::new(tf, &compiled.table, &OpImpls::builtin()).unwrap();
    let out = exec.run(inputs, &RunOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    let seq = SequentialRunner::new(tf, &OpImpls::builtin()).unwrap().run(inputs).unwrap();
    (out, seq)
}

#[test]
fn natural_routing_on_the_executor_is_bitwise_the_reference_at_2_and_4_ranks() {
    for (ranks, seed) in [(2, 1), (2, 42), (4, 7)] {
        let shape = MoeShape::tiny_natural(ranks);
        let routing = shape.route(seed);
        let tf = shape.taskflow().unwrap();
        let inputs = moe_inputs(&shape, seed);
        assert_eq!(inputs, moe_inputs_routed(&shape, &routing, seed).unwrap(), "moe_inputs uses route(seed)");
        let reference = moe_reference(&shape, &inputs).unwrap();
        let (out, seq) = run_natural(&tf, &inputs);
        check_against_reference(&shape, &out.snapshot, &reference);
        assert_eq!(out.snapshot.first_difference(&seq.snapshot), None);
        assert_eq!(out.stats.tiles, shape.instances_per_rank() * u64::from(ranks));
        let skips = expected_skips(&shape, &routing);
        assert!(skips > 0, "tiny_natural({ranks}) with seed {seed} leaves some block empty");
        assert_eq!((out.stats.skipped, seq.stats.skipped), (skips, skips), "tiny_natural({ranks}), seed {seed}");
        // The simulator prices the run with the same guards' verdicts.
        let space = hpmoe_core::expand::InstanceSpace::of(&tf).unwrap();
        assert_eq!(routing.activity(&shape, &tf, &space).unwrap().skipped() as u64, skips);
        let values = reference[0].to_f32();
        assert!(values.iter().all(|v| v.is_finite()) && values.iter().any(|&v| v != 0.0));
    }
}

/// `tiny_natural(2)`: 4 experts (0, 1 on rank 0; 2, 3 on rank 1), slots of C = 12 rows in
/// blocks of B = 4, 16 tokens with 2 choices. Rank 0 sends every token's first choice to
/// expert 0 and second to expert 2: both slots full, the last 4 tokens dropped entirely;
/// nothing to experts 1 and 3. Rank 1: expert 1 gets 5 rows (a full block, one holding a
/// single row, an empty one), expert 3 11, expert 0 exactly one block (4), expert 2
/// exactly full (12).
fn edge_routing(shape: &MoeShape) -> RoutedTokens {
    let rank0: Vec<u32> = (0..16).flat_map(|_| [0, 2]).collect();
    let rank1: Vec<u32> = (0..16u32)
        .flat_map(|t| match t {
            0..4 => [1, 0],
            4 => [1, 2],
            _ => [3, 2],
        })
        .collect();
    RoutedTokens::place(shape, vec![rank0, rank1]).unwrap()
}

#[test]
fn empty_partial_and_full_slots_with_drops_give_the_reference_bits() {
    let shape = MoeShape::tiny_natural(2);
    assert_eq!((shape.slot_rows(), shape.row_block), (12, 4));
    let routing = edge_routing(&shape);
    assert_eq!(routing.send_counts, vec![vec![12, 0, 12, 0], vec![4, 5, 12, 11]]);
    assert_eq!(routing.dropped(), 8);
    let tf = shape.taskflow().unwrap();
    let inputs = moe_inputs_routed(&shape, &routing, 3).unwrap();
    let reference = moe_reference(&shape, &inputs).unwrap();
    let (out, seq) = run_natural(&tf, &inputs);
    check_against_reference(&shape, &out.snapshot, &reference);
    assert_eq!(out.snapshot.first_difference(&seq.snapshot), None);
    // Empty blocks: 3 + 3 of rank 0's empty slots, and on rank 1 two of expert 0's (4 rows:
    // block 0 only, since 4 > 4 is false) and one of expert 1's (5 rows: blocks 0, 1).
    let per_block = 2 + 2 * 2 + 2;
    assert_eq!(expected_skips(&shape, &routing), (3 + 3 + 2 + 1) * per_block);
    assert_eq!(out.stats.skipped, expected_skips(&shape, &routing));
    // Tokens 12..15 of rank 0 lost both choices: +0.0, from zeroing and gathering nothing.
    let h = shape.hidden as usize;
    assert!(reference[0].bits()[12 * h..].iter().all(|&b| b == 0));
    assert!(reference[0].to_f32()[..12 * h].iter().any(|&v| v != 0.0));

    // Padding rows are computed in partial blocks but never gathered: with NaN padding in
    // `xs` the output is the same.
    let mut nan_padded = inputs.clone();
    for rank in 0..2u32 {
        let xs = inputs.get("xs", rank).unwrap();
        let counts = &routing.send_counts[rank as usize];
        let bits: Vec<u32> = xs
            .bits()
            .iter()
            .enumerate()
            .map(|(i, &b)| {
                let row = (i / h) as u64;
                let (g, j) = (row / 12, row % 12);
                if j >= counts[g as usize] as u64 { 0x7FC0 } else { b }
            })
            .collect();
        nan_padded.set_rank("xs", rank, HostTensor::from_bits(DType::Bf16, xs.shape(), bits));
    }
    let (padded, _) = run_natural(&tf, &nan_padded);
    check_against_reference(&shape, &padded.snapshot, &reference);
}

#[test]
fn guards_skip_the_work_of_empty_blocks_without_changing_the_result() {
    let shape = MoeShape::tiny_natural(2);
    let routing = edge_routing(&shape);
    let inputs = moe_inputs_routed(&shape, &routing, 5).unwrap();
    let reference = moe_reference(&shape, &inputs).unwrap();
    let guarded = shape.taskflow().unwrap();
    let mut unguarded = guarded.clone();
    for f in &mut unguarded.families {
        f.guard = None;
    }
    let (with, _) = run_natural(&guarded, &inputs);
    let (without, _) = run_natural(&unguarded, &inputs);
    // Zero padding: the guards change no output bit...
    check_against_reference(&shape, &with.snapshot, &reference);
    check_against_reference(&shape, &without.snapshot, &reference);
    // ...but without them every block is dispatched and computed.
    assert_eq!(without.stats.skipped, 0);
    assert_eq!(with.stats.tiles, without.stats.tiles);
    assert_eq!(with.stats.bodies_run(), with.stats.tiles - (3 + 3 + 2 + 1) * 8);
    // Rank 0 sends nothing to expert 1 (its own): with the guards no dispatch put lands in
    // recv[1] rows 0..12 of rank 0, which keep the poison they started with.
    let (h, poison) = (shape.hidden as usize, hpmoe_host::exec::tensor::poison(DType::Bf16));
    let recv_rows = |out: &RunOutput| {
        let recv = out.snapshot.get(0, "recv").unwrap();
        let expert1 = recv.len() / 2;
        recv.bits()[expert1..expert1 + 12 * h].to_vec()
    };
    assert!(recv_rows(&with).iter().all(|&b| b == poison));
    assert!(recv_rows(&without).iter().all(|&b| b == 0), "unguarded, the zero padding is sent");
}

#[test]
fn natural_inputs_copy_token_rows_into_their_slots_and_the_reference_refuses_padding_slots() {
    let shape = MoeShape::tiny_natural(2);
    let routing = edge_routing(&shape);
    let inputs = moe_inputs_routed(&shape, &routing, 9).unwrap();
    let h = shape.hidden as usize;
    let xs = inputs.get("xs", 1).unwrap();
    let row = |s: i32| &xs.bits()[s as usize * h..(s as usize + 1) * h];
    let slot_of = &routing.slot_of[1];
    // Token 0 of rank 1: choices in expert 1's slot row 0 and expert 0's slot row 0.
    assert_eq!((slot_of[0], slot_of[1]), (12, 0));
    assert_eq!(row(12), row(0));
    assert!(row(12).iter().any(|&b| b != 0));
    // Expert 0 holds 4 rows on rank 1: rows 4..12 of its slot are +0.0 padding.
    assert!((4..12).all(|s| row(s).iter().all(|&b| b == 0)));
    let counts = inputs.get("send_counts", 1).unwrap();
    assert_eq!(counts.bits(), &[4, 5, 12, 11]);

    // A choice pointing at a padding row is a malformed input, not a silent zero.
    let mut bad = inputs.clone();
    let mut slots = inputs.get("slot_of", 1).unwrap().bits().to_vec();
    slots[1] = 4;
    bad.set_rank("slot_of", 1, HostTensor::from_bits(DType::I32, &[16, 2], slots));
    let err = moe_reference(&shape, &bad).unwrap_err();
    assert!(matches!(
        err,
        ReferenceError::Slot {
            rank: 1,
            choice: 1,
            in_input: true,
            problem: SlotProblem::Padding { slot: 4, count: 4, .. }
        }
    ));
    let err = err.to_string();
    assert!(err.contains("rank 1, slot_of[1]: slot 4 is row 4 of expert 0's slot, past its count 4"), "{err}");
    let mut past = routing.clone();
    past.send_counts[0][1] = 13;
    assert!(moe_inputs_routed(&shape, &past, 9).unwrap_err().to_string().contains("outside 0..=12"));
    let balanced = moe_inputs_routed(&MoeShape::tiny(2), &routing, 9).unwrap_err().to_string();
    assert!(balanced.contains("naturally routed"), "{balanced}");
}
