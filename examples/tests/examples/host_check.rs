//! The main job's host check on the scaled-down layer.

use hpmoe_core::cost::CostProfile;
use hpmoe_examples::{host_check_outputs, moe_backward_host_check, moe_host_check};
use hpmoe_host::exec::OpImpls;
use hpmoe_host::exec::moe_reference::{moe_inputs, moe_reference};
use hpmoe_host::moe::{DispatchPrecision, MoeShape, Pass};

#[test]
fn tiny_backward_and_training_step_on_the_host_equal_the_gradient_reference_bitwise() {
    let shape = MoeShape::tiny(2);
    let (t, h, i, k, experts) = (16, 32, 16, 2, 2);
    // dx [T, H], dw13 [E, H, 2I], dw2 [E, I, H], d_weights [T, k] on each of the two ranks.
    let gradients = t * h + experts * h * 2 * i + experts * i * h + t * k;
    for (pass, per_rank) in [(Pass::Backward, gradients), (Pass::TrainingStep, gradients + t * h)] {
        let check = moe_backward_host_check(&shape, pass, &CostProfile::ascend_a3_die(), 42).unwrap();
        assert!(check.passed(), "{}: {:?}", pass.name(), check.first_difference);
        assert_eq!(check.max_abs_err, 0.0);
        assert_eq!(check.elements, 2 * per_rank, "{}: the training step also compares `out`", pass.name());
    }
    // The forward has no gradients to compare: it is moe_host_check's.
    assert!(moe_backward_host_check(&shape, Pass::Forward, &CostProfile::ascend_a3_die(), 42).is_err());
}

#[test]
fn a_check_of_several_outputs_names_the_first_that_differs() {
    let shape = MoeShape::tiny(2);
    let tf = shape.taskflow().unwrap();
    let inputs = moe_inputs(&shape, 42);
    let good = moe_reference(&shape, &inputs).unwrap();
    let mut bad = good.clone();
    bad[1] = hpmoe_host::exec::HostTensor::from_f32(bad[1].dtype(), bad[1].shape(), &vec![0.5; bad[1].len()]);
    let profile = CostProfile::ascend_a3_die();
    let impls = OpImpls::builtin();
    let check = host_check_outputs(&tf, &impls, &profile, &inputs, &[("out", &good), ("out", &bad)]).unwrap();
    let difference = check.first_difference.unwrap_or_default();
    assert!(difference.starts_with("rank 1 out:"), "{difference}");
    assert_eq!(check.elements, 2 * 2 * 16 * 32, "both outputs compared");
}

#[test]
fn tiny_layer_on_the_host_equals_the_reference_bitwise() {
    let check = moe_host_check(&MoeShape::tiny(2), &CostProfile::ascend_a3_die(), 42).unwrap();
    assert!(check.passed(), "{:?}", check.first_difference);
    assert_eq!(check.max_abs_err, 0.0);
    assert_eq!(check.elements, 2 * 16 * 32);
}

#[test]
fn tiny_natural_layers_on_the_host_equal_the_reference_bitwise() {
    for ranks in [2, 4] {
        let shape = MoeShape::tiny_natural(ranks);
        let check = moe_host_check(&shape, &CostProfile::ascend_a3_die(), 42).unwrap();
        assert!(check.passed(), "tiny_natural({ranks}): {:?}", check.first_difference);
        assert_eq!(check.max_abs_err, 0.0);
        assert_eq!(check.elements, ranks as usize * 16 * 32);
        assert_eq!(check.tiles, shape.instances_per_rank() * u64::from(ranks));
        // The routing leaves blocks empty, and their tiles did no work.
        assert!(check.skipped > 0 && check.skipped < check.tiles, "{check:?}");
    }
    let balanced = moe_host_check(&MoeShape::tiny(2), &CostProfile::ascend_a3_die(), 42).unwrap();
    assert_eq!(balanced.skipped, 0);
}

#[test]
fn int8_dispatch_layers_on_the_host_equal_the_quantised_reference_bitwise() {
    for shape in [MoeShape::tiny(2), MoeShape::tiny(4), MoeShape::tiny_natural(2)] {
        let shape = shape.with_dispatch(DispatchPrecision::Int8);
        let check = moe_host_check(&shape, &CostProfile::ascend_a3_die(), 42).unwrap();
        assert!(check.passed(), "{shape:?}: {:?}", check.first_difference);
        assert_eq!(check.max_abs_err, 0.0);
        assert_eq!(check.elements, shape.ranks as usize * 16 * 32);
        assert_eq!(check.tiles, shape.instances_per_rank() * u64::from(shape.ranks));
    }
}
