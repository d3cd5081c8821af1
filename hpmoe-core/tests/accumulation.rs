//! Ordered accumulation: tiles that add into one region are accepted only when totally ordered,
//! and the cost model prices an accumulating matmul's read of `c`.

use hpmoe_core::cost::{CostProfile, TaskflowCost, family_traffic};
use hpmoe_core::model::{CoreKind::*, DType::*, MachineProfile, Taskflow};
use hpmoe_core::{ErrorKind, analyse};

/// `S` tiles each add `x[s] · w` into one output `c`, first a plain matmul then `S` accumulating
/// ones; `one_family` puts the accumulations in one family (unordered instances), otherwise each
/// gets a family of its own (ordered by declaration).
fn weight_gradient(one_family: bool) -> Taskflow {
    const S: u64 = 4;
    let mut tf = Taskflow::new("wgrad", MachineProfile::small(2, 1));
    let x = tf.input("x", Bf16, &[S + 1, 16, 32]);
    let w = tf.input("w", Bf16, &[32, 16]);
    let c = tf.output("c", F32, &[16, 16]);
    tf.tile("first", Aic, |t| t.op("matmul", [x.at(0), w.whole(), c.whole()]));
    if one_family {
        tf.tile("acc", Aic, |t| {
            let s = t.grid("s", S);
            t.op("matmul_accumulate", [x.at(s + 1), w.whole(), c.whole()]);
        });
    } else {
        for s in 0..S as i64 {
            tf.tile(&format!("acc{s}"), Aic, |t| t.op("matmul_accumulate", [x.at(s + 1), w.whole(), c.whole()]));
        }
    }
    tf
}

#[test]
fn accumulations_in_declaration_order_are_accepted() {
    analyse(&weight_gradient(false)).unwrap_or_else(|d| panic!("{d}"));
}

#[test]
fn unordered_accumulation_is_an_error_with_a_chain_help() {
    let d = analyse(&weight_gradient(true)).unwrap_err();
    assert_eq!(d.kinds(), vec![ErrorKind::UnorderedAccumulation], "{d}");
    let e = &d.errors[0];
    assert_eq!(
        e.message,
        "unordered accumulation: acc(s=0) on rank 0 and acc(s=1) on rank 0 both add into `c`[0..16, 0..16] on \
         rank 0 with no order between them, so the sum's order (and its rounding) would depend on the schedule \
         (and 5 more pairs)"
    );
    assert_eq!(
        e.help.as_deref(),
        Some(
            "accumulations into one region must be totally ordered: chain the instances along `s` so that each \
             waits for the one before it, `after(acc(s - 1))` in `acc` (the first instance has none to wait for), \
             or add into disjoint regions and sum those in a fixed order"
        )
    );
    assert_eq!(ErrorKind::UnorderedAccumulation.code(), "unordered_accumulation");
}

#[test]
fn a_plain_write_beside_an_accumulation_keeps_the_write_conflict_error() {
    // One instance overwrites, the others add: not an accumulation, a write conflict.
    let mut tf = Taskflow::new("mixed", MachineProfile::small(1, 1));
    let x = tf.input("x", F32, &[2, 8]);
    let y = tf.output("y", F32, &[8]);
    tf.tile("init", Aiv, |t| t.op("zero", [y.whole()]));
    tf.tile("both", Aiv, |t| {
        let s = t.grid("s", 2);
        t.op("copy", [x.at(s.clone()), y.whole()]);
        t.op("accumulate", [x.at(s), y.whole()]);
    });
    let d = analyse(&tf).unwrap_err();
    assert!(d.kinds().contains(&ErrorKind::UnorderedWriteAfterWrite), "{d}");
}

#[test]
fn an_accumulating_matmul_costs_the_read_of_c_too() {
    let tf = weight_gradient(false);
    let traffic = family_traffic(&tf);
    let (plain, acc) = (traffic[0], traffic[1]);
    let c_bytes = 16 * 16 * 4;
    assert_eq!(acc.flops, plain.flops);
    assert_eq!(acc.write_bytes, plain.write_bytes);
    assert_eq!(acc.reads.total(), plain.reads.total() + c_bytes, "{plain:?} {acc:?}");
    // The simulator and the lower bound price tiles with this model: the accumulating tile's
    // exec phase is not cheaper than the plain one's.
    let cost = TaskflowCost::new(&tf, CostProfile::ascend910b());
    assert!(cost.family(1).exec_ns >= cost.family(0).exec_ns);
}
