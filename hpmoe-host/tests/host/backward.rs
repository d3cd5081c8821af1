//! The MoE-FFN backward and training step (issue 12 item 4): the plain-loop reference
//! ([`moe_backward_reference`]) against finite differences of the forward evaluated in f64
//! ([`LayerValues::loss`]); the layers on the host executor bitwise equal to the reference, on
//! every run, schedule and core count; the checks and the certificate accepting them, and
//! refusing the weight gradients without their chain.

use hpmoe_core::ErrorKind;
use hpmoe_core::certify::{self, FlagSync};
use hpmoe_core::model::Taskflow;
use hpmoe_core::schedule::{CostModel, SimpleCost};
use hpmoe_host::exec::moe_backward_reference::{
    LayerValues, MoeGradients, moe_backward_inputs, moe_backward_reference, moe_saved, saved_names,
};
use hpmoe_host::exec::moe_reference::moe_reference;
use hpmoe_host::exec::{Executor, OpImpls, RunOptions, SequentialRunner, Snapshot};
use hpmoe_host::moe::{DispatchPrecision, MoeShape};
use std::time::Duration;

/// Which value a gradient entry is the derivative by, and how to perturb it.
#[derive(Clone, Copy, Debug)]
enum Entry {
    /// `dx[rank][token, col]`: every routed copy of the token's row moves together.
    Dx { rank: usize, token: usize, col: usize },
    /// `dw13[rank][e, p, col]`.
    Dw13 { rank: usize, index: usize },
    /// `dw2[rank][e, q, col]`.
    Dw2 { rank: usize, index: usize },
    /// `d_weights[rank][token, choice]`.
    DWeights { rank: usize, index: usize },
}

impl Entry {
    /// The gradient's name in the backward taskflow.
    fn name(self) -> &'static str {
        match self {
            Entry::Dx { .. } => "dx",
            Entry::Dw13 { .. } => "dw13",
            Entry::Dw2 { .. } => "dw2",
            Entry::DWeights { .. } => "d_weights",
        }
    }

    /// The gradient the layer computed for this entry.
    fn gradient(self, grads: &[MoeGradients], shape: &MoeShape) -> f64 {
        let (rank, index) = match self {
            Entry::Dx { rank, token, col } => (rank, token * shape.hidden as usize + col),
            Entry::Dw13 { rank, index } | Entry::Dw2 { rank, index } | Entry::DWeights { rank, index } => (rank, index),
        };
        f64::from(grads[rank].get(self.name()).unwrap().get(index))
    }

    /// `values` with this entry moved by `delta`.
    fn moved(self, values: &LayerValues, shape: &MoeShape, delta: f64) -> LayerValues {
        let mut v = values.clone();
        match self {
            Entry::Dx { rank, token, col } => {
                let (k, h) = (shape.top_k as usize, shape.hidden as usize);
                for c in 0..k {
                    v.xs[rank][(token * k + c) * h + col] += delta;
                }
            }
            Entry::Dw13 { rank, index } => v.w13[rank][index] += delta,
            Entry::Dw2 { rank, index } => v.w2[rank][index] += delta,
            Entry::DWeights { rank, index } => v.weights[rank][index] += delta,
        }
        v
    }

    /// The central difference `(L(v + ε) − L(v − ε)) / 2ε` in f64.
    fn finite_difference(self, values: &LayerValues, shape: &MoeShape) -> f64 {
        const EPS: f64 = 1e-3;
        let loss = |d| self.moved(values, shape, d).loss(shape).unwrap();
        (loss(EPS) - loss(-EPS)) / (2.0 * EPS)
    }
}

/// A few entries of every gradient, on both ranks, spread over experts, rows and columns.
fn entries(shape: &MoeShape) -> Vec<Entry> {
    let (h, i, e) = (shape.hidden as usize, shape.intermediate as usize, shape.local_experts() as usize);
    let mut out = Vec::new();
    for rank in 0..shape.ranks as usize {
        for (token, col) in [(0, 0), (5, 17), (15, 31)] {
            out.push(Entry::Dx { rank, token, col });
        }
        for index in [0, h * 2 * i + 3 * 2 * i + 9, (e * h - 1) * 2 * i + 2 * i - 1] {
            out.push(Entry::Dw13 { rank, index });
        }
        for index in [1, i * h + 5 * h + 20, e * i * h - 1] {
            out.push(Entry::Dw2 { rank, index });
        }
        for index in [0, 7, 31] {
            out.push(Entry::DWeights { rank, index });
        }
    }
    out
}

/// Root mean square of gradient `name` over every rank.
fn rms(grads: &[MoeGradients], name: &str) -> f64 {
    let values: Vec<f64> = grads.iter().flat_map(|g| g.get(name).unwrap().to_f32()).map(f64::from).collect();
    (values.iter().map(|v| v * v).sum::<f64>() / values.len() as f64).sqrt()
}

/// Checks a few entries of every gradient in `grads` against central differences (ε = 10⁻³)
/// of the loss `Σ dOut ⊙ out` evaluated in f64 without rounding. The backward works from
/// BF16-rounded activations and stores BF16 activation gradients, so the two differ by a few
/// BF16 ulps of the values summed: the tolerance is 3% of the gradient's RMS over all its
/// entries (measured on `tiny(2)`, seed 3: at most 1.0% of it). Each gradient has an
/// entry of at least half its RMS, so a gradient 10% off there fails.
fn check_finite_differences(shape: &MoeShape, inputs: &hpmoe_host::exec::Inputs, grads: &[MoeGradients]) {
    let values = LayerValues::from_inputs(shape, inputs).unwrap();
    let mut largest = std::collections::BTreeMap::<&str, f64>::new();
    for entry in entries(shape) {
        let name = entry.name();
        let (g, fd) = (entry.gradient(grads, shape), entry.finite_difference(&values, shape));
        let scale = rms(grads, name);
        assert!((g - fd).abs() <= 0.03 * scale, "{entry:?}: gradient {g}, finite difference {fd}, RMS {scale}");
        let big = largest.entry(name).or_default();
        *big = big.max(fd.abs() / scale);
    }
    for (name, ratio) in largest {
        assert!(ratio >= 0.5, "`{name}`: every entry checked is below half the RMS ({ratio})");
    }
}

#[test]
fn reference_gradients_agree_with_finite_differences_of_the_f64_forward() {
    let shape = MoeShape::tiny(2);
    let inputs = moe_backward_inputs(&shape, 3).unwrap();
    let grads = moe_backward_reference(&shape, &inputs).unwrap();
    check_finite_differences(&shape, &inputs, &grads);
}

// The layer on the host executor.

/// Every tile sleeps 0–400 µs, picked from its node and the run number.
fn jitter(run: u64) -> RunOptions {
    RunOptions::default().with_tile_hook(move |tile| {
        let pick = (u64::from(tile.node.raw()) + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(run) >> 54;
        std::thread::sleep(Duration::from_micros(pick % 400));
    })
}

/// `tf` scheduled under `cost`, on the executor (which certifies the table first).
fn executor(tf: &Taskflow, cost: &dyn CostModel) -> Executor {
    let compiled = hpmoe_core::compile(tf, cost).unwrap_or_else(|d| panic!("{}", d.render(&tf.sources)));
    Executor::for_compiled(tf, &compiled, &OpImpls::builtin()).unwrap_or_else(|e| panic!("{e}"))
}

/// The gradients of `snapshot`, per rank.
fn gradients(snapshot: &Snapshot) -> Vec<MoeGradients> {
    (0..snapshot.ranks())
        .map(|rank| {
            let get = |name| snapshot.get(rank, name).unwrap_or_else(|| panic!("no `{name}`")).clone();
            MoeGradients { dx: get("dx"), dw13: get("dw13"), dw2: get("dw2"), d_weights: get("d_weights") }
        })
        .collect()
}

/// `got` equals `want` bitwise, gradient by gradient and rank by rank.
fn assert_bitwise(got: &[MoeGradients], want: &[MoeGradients], what: &str) {
    assert_eq!(got.len(), want.len());
    for (rank, (g, w)) in got.iter().zip(want).enumerate() {
        for name in MoeGradients::NAMES {
            if let Some(d) = g.get(name).unwrap().first_difference(w.get(name).unwrap()) {
                panic!("{what}: `{name}` on rank {rank} differs from the reference: {d}");
            }
        }
    }
}

/// The shapes the layer is checked on: the tiny ones, top-4, one weight-gradient tile per
/// expert instead of a chain of four; natural routing (1.5× the average load per slot, with
/// weight gradients in one group of sources by default, in chains of two and four groups, and
/// one block per slot, which drops about half the choices); INT8 dispatch, balanced and natural.
fn shapes() -> Vec<(&'static str, MoeShape)> {
    let int8 = |s: MoeShape| s.with_dispatch(DispatchPrecision::Int8);
    vec![
        ("tiny(1)", MoeShape::tiny(1)),
        ("tiny(2)", MoeShape::tiny(2)),
        ("tiny(4)", MoeShape::tiny(4)),
        ("tiny(2), top-4", MoeShape { top_k: 4, ..MoeShape::tiny(2) }),
        ("tiny(2), whole-expert wgrad", MoeShape::tiny(2).with_whole_expert_wgrad()),
        ("tiny(4), groups of 2 sources in arrival order", MoeShape { wgrad_rows: 8, ..MoeShape::tiny(4) }),
        ("tiny_natural(1)", MoeShape::tiny_natural(1)),
        ("tiny_natural(2)", MoeShape::tiny_natural(2)),
        ("tiny_natural(4)", MoeShape::tiny_natural(4)),
        ("tiny_natural(4), two groups of sources", MoeShape::tiny_natural(4).with_wgrad_groups(2)),
        ("tiny_natural(4), a group per source", MoeShape::tiny_natural(4).with_wgrad_groups(4)),
        ("tiny(2), natural, capacity 4", MoeShape::tiny(2).with_natural_routing(4)),
        ("tiny(2), int8", int8(MoeShape::tiny(2))),
        ("tiny_natural(2), int8", int8(MoeShape::tiny_natural(2))),
        ("tiny_natural(2), a relay before the sums", MoeShape::tiny_natural(2).with_relay()),
    ]
}

#[test]
fn the_backward_on_the_executor_and_sequentially_is_bitwise_the_reference() {
    for (what, shape) in shapes() {
        let tf = shape.backward_taskflow().unwrap();
        let inputs = moe_backward_inputs(&shape, 11).unwrap();
        let want = moe_backward_reference(&shape, &inputs).unwrap();
        let out = executor(&tf, &SimpleCost::default()).run(&inputs, &RunOptions::default()).unwrap();
        assert_bitwise(&gradients(&out.snapshot), &want, what);
        assert_eq!(out.stats.tiles, shape.backward_instances_per_rank() * u64::from(shape.ranks), "{what}");
        let seq = SequentialRunner::new(&tf, &OpImpls::builtin()).unwrap().run(&inputs).unwrap();
        assert_bitwise(&gradients(&seq.snapshot), &want, what);
        // Not trivially zero or NaN.
        for name in MoeGradients::NAMES {
            let values = want[0].get(name).unwrap().to_f32();
            assert!(values.iter().all(|v| v.is_finite()) && values.iter().any(|&v| v != 0.0), "{what}: `{name}`");
        }
    }
    // The weight gradients' bits depend on how their sum is grouped: a chain of four groups
    // and one whole-expert tile differ, so the bitwise comparison sees the order.
    let (chained, whole) = (MoeShape::tiny(2), MoeShape::tiny(2).with_whole_expert_wgrad());
    let inputs = moe_backward_inputs(&chained, 11).unwrap();
    let (a, b) = (moe_backward_reference(&chained, &inputs).unwrap(), moe_backward_reference(&whole, &inputs).unwrap());
    assert_ne!(a[0].dw13, b[0].dw13);
    assert_ne!(a[0].dw2, b[0].dw2);
    assert_eq!(a[0].dx, b[0].dx);
    // Under natural routing too: one sum over all sources and two groups' sums differ.
    let (two, one) = (MoeShape::tiny_natural(2).with_wgrad_groups(2), MoeShape::tiny_natural(2));
    let inputs = moe_backward_inputs(&two, 11).unwrap();
    let (a, b) = (moe_backward_reference(&two, &inputs).unwrap(), moe_backward_reference(&one, &inputs).unwrap());
    assert_ne!(a[0].dw13, b[0].dw13);
    assert_ne!(a[0].dw2, b[0].dw2);
    assert_eq!(a[0].dx, b[0].dx);
}

#[test]
fn the_training_step_computes_the_output_and_the_gradients_in_one_schedule() {
    for (what, shape) in shapes() {
        let tf = shape.training_step_taskflow().unwrap();
        // The saved tensors in `inputs` are not inputs of the training step: only its forward
        // writes them (the executor fills non-inputs with NaN poison).
        let inputs = moe_backward_inputs(&shape, 5).unwrap();
        let out = executor(&tf, &SimpleCost::default()).run(&inputs, &RunOptions::default()).unwrap();
        let forward = moe_reference(&shape, &inputs).unwrap();
        let saved = moe_saved(&shape, &inputs).unwrap();
        for rank in 0..shape.ranks {
            assert_eq!(out.snapshot.get(rank, "out"), Some(&forward[rank as usize]), "{what}: `out` on rank {rank}");
            for (name, tensor) in saved_names(&shape).iter().zip(&saved[rank as usize]) {
                assert_eq!(out.snapshot.get(rank, name), Some(tensor), "{what}: saved `{name}` on rank {rank}");
            }
        }
        assert_bitwise(&gradients(&out.snapshot), &moe_backward_reference(&shape, &inputs).unwrap(), what);
        let per_rank = shape.instances_per_rank() + shape.backward_instances_per_rank();
        assert_eq!(out.stats.tiles, per_rank * u64::from(shape.ranks), "{what}");
    }
}

#[test]
fn the_executor_s_gradients_agree_with_finite_differences() {
    let shape = MoeShape::tiny(2);
    let inputs = moe_backward_inputs(&shape, 3).unwrap();
    let tf = shape.backward_taskflow().unwrap();
    let out = executor(&tf, &SimpleCost::default()).run(&inputs, &RunOptions::default()).unwrap();
    check_finite_differences(&shape, &inputs, &gradients(&out.snapshot));
}

#[test]
fn natural_routing_s_dropped_choices_and_padding_are_handled_and_seen() {
    let shape = MoeShape::tiny(2).with_natural_routing(4);
    let inputs = moe_backward_inputs(&shape, 11).unwrap();
    let routing = shape.route(11);
    assert!(routing.dropped() > 8, "capacity 4 drops choices: {}", routing.dropped());
    let want = moe_backward_reference(&shape, &inputs).unwrap();
    // A dropped choice's routing-weight gradient is +0, a kept one's is not.
    for (rank, slots) in routing.slot_of.iter().enumerate() {
        let dw = want[rank].d_weights.to_f32();
        for (choice, &slot) in slots.iter().enumerate() {
            assert_eq!(slot < 0, dw[choice].to_bits() == 0, "rank {rank}, choice {choice}");
        }
    }
    // The layer reads `choice_of`, the reference inverts `slot_of` itself: a `choice_of` whose
    // two rows trade places gives other gradients, which the comparison sees.
    let tf = shape.backward_taskflow().unwrap();
    let exec = executor(&tf, &SimpleCost::default());
    let out = exec.run(&inputs, &RunOptions::default()).unwrap();
    assert_bitwise(&gradients(&out.snapshot), &want, "capacity 4");
    let mut swapped = inputs.clone();
    let mut bits = inputs.get("choice_of", 0).unwrap().bits().to_vec();
    bits.swap(0, 1);
    let shape_of = inputs.get("choice_of", 0).unwrap().shape().to_vec();
    swapped.set_rank(
        "choice_of",
        0,
        hpmoe_host::exec::HostTensor::from_bits(hpmoe_core::model::DType::I32, &shape_of, bits),
    );
    let out = exec.run(&swapped, &RunOptions::default()).unwrap();
    let got = gradients(&out.snapshot);
    assert!(got.iter().zip(&want).any(|(g, w)| g != w), "a wrong choice_of went unseen");
}

#[test]
fn gradients_are_bitwise_identical_over_20_runs_with_perturbed_timing_and_other_schedules() {
    for shape in [MoeShape::tiny(2), MoeShape::tiny_natural(2), MoeShape::tiny_natural(4).with_wgrad_groups(2)] {
        twenty_runs_and_other_schedules(&shape);
    }
}

fn twenty_runs_and_other_schedules(shape: &MoeShape) {
    let shape = shape.clone();
    let inputs = moe_backward_inputs(&shape, 7).unwrap();
    let want = moe_backward_reference(&shape, &inputs).unwrap();
    let tf = shape.backward_taskflow().unwrap();
    let exec = executor(&tf, &SimpleCost::default());
    for run in 0..20 {
        let out = exec.run(&inputs, &jitter(run)).unwrap_or_else(|e| panic!("run {run}: {e}"));
        assert_bitwise(&gradients(&out.snapshot), &want, &format!("run {run}"));
    }
    // Other core counts and cost models give other schedules, and the same bits.
    let fast_cube = SimpleCost { aic_flops_per_s: 1_000_000_000_000_000, ..SimpleCost::default() };
    let slow_cube = SimpleCost { aic_flops_per_s: 1_000_000_000, ..SimpleCost::default() };
    for aic in [1, 3] {
        let tf = MoeShape { aic_per_rank: aic, ..shape.clone() }.backward_taskflow().unwrap();
        for cost in [&fast_cube, &slow_cube] {
            let out = executor(&tf, cost).run(&inputs, &jitter(u64::from(aic))).unwrap();
            assert_bitwise(&gradients(&out.snapshot), &want, &format!("{aic} AICs"));
        }
    }
}

#[test]
fn the_checks_accept_the_layer_and_refuse_its_weight_gradients_unchained() {
    for shape in [MoeShape::tiny(2), MoeShape::tiny(4), MoeShape::tiny_natural(2)] {
        for tf in [shape.backward_taskflow().unwrap(), shape.training_step_taskflow().unwrap()] {
            // Planned as every front end plans (flags too), and certified from the blobs.
            let compiled = hpmoe_core::plan(&tf).unwrap_or_else(|d| panic!("{}", d.render(&tf.sources)));
            let sync = FlagSync::from(&compiled.flags);
            let cert = certify::verify(&tf, &compiled.expanded, compiled.table.view(), Some(sync)).unwrap();
            assert_eq!(cert.dependencies, compiled.expanded.dag.edges() as u64, "{}", tf.name);
        }
    }
    // Without the chain, the weight-gradient tiles of one expert and column block add into
    // the same data in no fixed order: refused (under natural routing the adding links of the
    // slot sums over the groups of sources: three of them in four groups).
    for shape in [MoeShape::tiny(2), MoeShape::tiny(4), MoeShape::tiny_natural(4).with_wgrad_groups(4)] {
        for family in ["gmm2_wgrad_acc", "gmm1_wgrad_acc"] {
            let mut tf = shape.backward_taskflow().unwrap();
            tf.families.iter_mut().find(|f| f.name == family).unwrap().after.clear();
            let errors = hpmoe_core::analyse(&tf).expect_err("an unchained accumulation was accepted");
            assert_eq!(errors.kinds(), [ErrorKind::UnorderedAccumulation], "{family}: {}", errors.render(&tf.sources));
        }
    }
}
