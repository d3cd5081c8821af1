//! The custom variant's host check (`moe_ffn_shared`) on the scaled-down layer, and that the
//! check is strict enough to notice a different summation order in the user op.

use hpmoe_core::cost::CostProfile;
use hpmoe_examples::shared_expert::{self, SharedMoe, op};
use hpmoe_host::exec::{Arg, ArgDesc, OpError, RefOp};

#[test]
fn tiny_variant_on_the_host_equals_the_reference_bitwise() {
    let check = shared_expert::host_check(&SharedMoe::tiny(2), &CostProfile::ascend_a3_die(), 42).unwrap();
    assert!(check.passed(), "{:?}", check.first_difference);
    assert_eq!(check.max_abs_err, 0.0);
    assert_eq!(check.elements, 2 * 16 * 32);
}

/// `weighted_sum_shared` with the shared expert's row added last instead of first: the same
/// sum in exact arithmetic, a different one in FP32.
#[derive(Debug)]
struct SharedAddedLast;

impl RefOp for SharedAddedLast {
    fn check(&self, args: &[ArgDesc]) -> Result<(), OpError> {
        op::WeightedSumShared.check(args)
    }

    fn run(&self, args: &[Arg<'_>]) -> Result<(), OpError> {
        let n = args[3].desc().cols();
        let k = args[0].desc().rows() / args[3].desc().rows();
        let (routed, weight, shared) = (args[0].load(), args[1].load(), args[2].load());
        let mut acc = vec![0.0f32; shared.len()];
        for (i, row) in acc.chunks_exact_mut(n).enumerate() {
            for j in 0..k {
                let r = i * k + j;
                for (a, &y) in row.iter_mut().zip(&routed[r * n..(r + 1) * n]) {
                    *a += y * weight[r];
                }
            }
            for (a, &s) in row.iter_mut().zip(&shared[i * n..(i + 1) * n]) {
                *a += s;
            }
        }
        args[3].store(&acc)
    }
}

#[test]
fn the_check_notices_a_different_summation_order() {
    let shape = SharedMoe::tiny(2);
    let tf = shape.taskflow().unwrap();
    let inputs = shared_expert::inputs(&shape, 42);
    let expected = shared_expert::reference(&shape, &inputs).unwrap();
    let mut impls = op::impls();
    impls.replace(op::OP_NAME, SharedAddedLast);
    let profile = CostProfile::ascend_a3_die();
    let check = hpmoe_examples::host_check(&tf, &impls, &profile, &inputs, "out", &expected).unwrap();
    assert!(!check.passed(), "adding the shared row last gave the same bits");
    assert!(check.max_abs_err > 0.0 && check.max_abs_err < 0.05, "{}", check.max_abs_err);
}

#[test]
fn the_variant_needs_the_user_op_body() {
    let shape = SharedMoe::tiny(2);
    let tf = shape.taskflow().unwrap();
    let inputs = shared_expert::inputs(&shape, 42);
    let expected = shared_expert::reference(&shape, &inputs).unwrap();
    let profile = CostProfile::ascend_a3_die();
    let builtin = hpmoe_host::exec::OpImpls::builtin();
    let err = hpmoe_examples::host_check(&tf, &builtin, &profile, &inputs, "out", &expected).unwrap_err();
    assert!(matches!(err, hpmoe_examples::ExampleError::Execute { .. }), "{err}");
    assert!(err.to_string().contains(op::OP_NAME), "{err}");
}
