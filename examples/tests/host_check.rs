//! The main job's host check on the scaled-down layer.

use hpmoe_core::cost::CostProfile;
use hpmoe_core::moe::MoeShape;
use hpmoe_examples::moe_host_check;

#[test]
fn tiny_layer_on_the_host_equals_the_reference_bitwise() {
    let check = moe_host_check(&MoeShape::tiny(2), &CostProfile::ascend_a3_die(), 42).unwrap();
    assert!(check.passed(), "{:?}", check.first_difference);
    assert_eq!(check.max_abs_err, 0.0);
    assert_eq!(check.elements, 2 * 16 * 32);
}
