//! The main job's host check on the scaled-down layer.

use hpmoe_core::cost::CostProfile;
use hpmoe_examples::moe_host_check;
use hpmoe_host::moe::{DispatchPrecision, MoeShape};

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
