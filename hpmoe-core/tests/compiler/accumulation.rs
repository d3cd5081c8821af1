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

/// A chain of slot sums whose first link writes: `first` (`matmul_tn_slots`, grid `e`) writes
/// each expert's gradient, `acc` (`matmul_tn_slots_accumulate`, grid `(e, m)`) adds `S` more
/// groups; `chained` orders `acc` along `m`, `write_after` declares another writing slot sum
/// after the chain, with no `after`.
fn slot_chain(chained: bool, write_after: bool) -> Taskflow {
    const S: u64 = 3;
    let mut tf = Taskflow::new("slot_chain", MachineProfile::small(2, 1));
    let x = tf.input("x", Bf16, &[2, (S + 1) * 8, 16]);
    let g = tf.input("g", Bf16, &[2, (S + 1) * 8, 32]);
    let counts = tf.input("counts", I32, &[S + 1, 2]);
    let grad = tf.output("grad", F32, &[2, 16, 32]);
    let args = |e: hpmoe_core::model::Affine, group: hpmoe_core::model::Affine| {
        [
            x.at(e.clone()).slice(group.clone() * 8, 8),
            g.at(e.clone()).slice(group.clone() * 8, 8),
            grad.at(e.clone()),
            counts.slice(group, 1).slice(e, 1),
        ]
    };
    tf.tile("first", Aic, |t| {
        let e = t.grid("e", 2);
        t.op("matmul_tn_slots", args(e, hpmoe_core::model::Affine::constant(0)));
    });
    tf.tile("acc", Aic, |t| {
        let (e, m) = (t.grid("e", 2), t.grid("m", S));
        t.op("matmul_tn_slots_accumulate", args(e.clone(), m.clone() + 1));
        if chained {
            t.after("acc", [hpmoe_core::model::IndexSel::At(e), hpmoe_core::model::IndexSel::At(m - 1)]);
        }
    });
    if write_after {
        tf.tile("rewrite", Aic, |t| {
            let e = t.grid("e", 2);
            t.op("matmul_tn_slots", args(e, hpmoe_core::model::Affine::constant(0)));
        });
    }
    tf
}

#[test]
fn a_slot_sum_chain_whose_first_link_writes_is_accepted_and_orders_every_link() {
    let tf = slot_chain(true, false);
    let exp = analyse(&tf).unwrap_or_else(|d| panic!("{d}"));
    let name = |n| hpmoe_core::check::node_name(&tf, &exp.space, n);
    let preds = |family: usize, local: u32| -> Vec<String> {
        let node = exp.space.node(hpmoe_core::ids::RankId::new(0), exp.space.families[family].first + local);
        let mut p: Vec<String> = exp.dag.pred.row(node).iter().map(|&p| name(p)).collect();
        p.sort();
        p
    };
    // acc(e=0, m=0) (local 0) waits for the write (its read of the gradient), acc(e=0, m=1)
    // (local 1) for acc(e=0, m=0) (the write reached through it).
    assert_eq!(preds(1, 0), ["first(e=0) on rank 0"]);
    assert!(preds(1, 1).contains(&"acc(e=0, m=0) on rank 0".to_string()), "{:?}", preds(1, 1));
    // The writing form prices the gradient's write alone, the accumulating one its read too.
    let traffic = family_traffic(&tf);
    let grad_bytes = 16 * 32 * 4;
    assert_eq!(traffic[1].reads.total(), traffic[0].reads.total() + grad_bytes, "{traffic:?}");
    assert_eq!(traffic[1].write_bytes, traffic[0].write_bytes);
}

#[test]
fn a_writing_slot_sum_after_the_chain_without_an_order_is_refused() {
    // A later family overwriting the chain's gradient is not ordered by declaration: refused,
    // as any unordered write after write (and after the adds' reads).
    let d = analyse(&slot_chain(true, true)).unwrap_err();
    let kinds = d.kinds();
    assert!(kinds.contains(&ErrorKind::UnorderedWriteAfterWrite), "{d}");
    assert!(d.errors.iter().any(|e| e.message.contains("first(e=0) on rank 0 and rewrite(e=0) on rank 0")), "{d}");
    assert!(!kinds.contains(&ErrorKind::UnorderedAccumulation), "{d}");
}

#[test]
fn unordered_slot_sums_after_a_written_first_link_are_an_unordered_accumulation() {
    let d = analyse(&slot_chain(false, false)).unwrap_err();
    assert_eq!(d.kinds(), vec![ErrorKind::UnorderedAccumulation], "{d}");
    assert!(d.errors[0].help.as_deref().unwrap_or("").contains("`after(acc(e, m - 1))`"), "{d}");
}

#[test]
fn two_writing_slot_sums_into_one_region_are_a_write_conflict() {
    // One family of writing slot sums over the groups: each instance overwrites the others'.
    let mut tf = Taskflow::new("rewrites", MachineProfile::small(2, 1));
    let x = tf.input("x", Bf16, &[16, 16]);
    let g = tf.input("g", Bf16, &[16, 32]);
    let counts = tf.input("counts", I32, &[2]);
    let grad = tf.output("grad", F32, &[16, 32]);
    tf.tile("sums", Aic, |t| {
        let m = t.grid("m", 2);
        t.op(
            "matmul_tn_slots",
            [x.slice(m.clone() * 8, 8), g.slice(m.clone() * 8, 8), grad.whole(), counts.slice(m, 1)],
        );
    });
    let d = analyse(&tf).unwrap_err();
    assert!(d.kinds().contains(&ErrorKind::UnorderedWriteAfterWrite), "{d}");
    assert!(!d.kinds().contains(&ErrorKind::UnorderedAccumulation), "{d}");
}
