//! The transposed matmuls of the backward (`matmul_nt`, `matmul_tn`, `matmul_tn_accumulate`)
//! are priced as the product they compute: the same flops, bytes and buffer panels as the plain
//! `matmul` of the same M, N, K, whichever way `a` and `b` are stored.

use hpmoe_core::analyse;
use hpmoe_core::cost::family_traffic;
use hpmoe_core::model::{CoreKind::*, DType::*, MachineProfile, Taskflow, TensorDecl};
use hpmoe_core::resolve::{footprint, op_pieces};

const M: u64 = 48;
const N: u64 = 80;
const K: u64 = 112;

/// Four families computing one `M × N × K` product: `matmul` (a `[M, K]`, b `[K, N]`),
/// `matmul_nt` (b `[N, K]`), `matmul_tn` (a `[K, M]`) and `matmul_tn_accumulate`.
fn products() -> Taskflow {
    let mut tf = Taskflow::new("products", MachineProfile::small(1, 1));
    let a = tf.input("a", Bf16, &[M, K]);
    let b = tf.input("b", Bf16, &[K, N]);
    let bt = tf.input("bt", Bf16, &[N, K]);
    let at = tf.input("at", Bf16, &[K, M]);
    let [c0, c1, c2] = ["c0", "c1", "c2"].map(|name| tf.output(name, F32, &[M, N]));
    tf.tile("nn", Aic, |t| t.op("matmul", [a.whole(), b.whole(), c0.whole()]));
    tf.tile("nt", Aic, |t| t.op("matmul_nt", [a.whole(), bt.whole(), c1.whole()]));
    tf.tile("tn", Aic, |t| t.op("matmul_tn", [at.whole(), b.whole(), c2.whole()]));
    tf.tile("tn_acc", Aic, |t| t.op("matmul_tn_accumulate", [at.whole(), b.whole(), c2.whole()]));
    tf
}

#[test]
fn every_layout_costs_the_same_flops_and_bytes() {
    let tf = products();
    let expanded = analyse(&tf).unwrap_or_else(|d| panic!("{d}"));
    let flops = 2 * M * N * K;
    for (f, work) in expanded.family_work.iter().enumerate() {
        assert_eq!(work.flops, flops, "family {f}");
    }
    assert_eq!(expanded.family_work[1].bytes, expanded.family_work[0].bytes);
    assert_eq!(expanded.family_work[2].bytes, expanded.family_work[0].bytes);
    let traffic = family_traffic(&tf);
    for t in &traffic {
        assert_eq!(t.flops, flops);
    }
    assert_eq!(traffic[1], traffic[0]);
    assert_eq!(traffic[2], traffic[0]);
    // The accumulation also reads c.
    assert_eq!(traffic[3].reads.total(), traffic[2].reads.total() + M * N * 4);
}

#[test]
fn every_layout_holds_the_same_panels() {
    let tf = products();
    let pieces: Vec<_> = tf
        .families
        .iter()
        .map(|f| {
            let call = &f.body[0];
            let decls: Vec<&TensorDecl> = call.args.iter().map(|r| tf.tensor(&r.tensor).unwrap()).collect();
            op_pieces(tf.ops.get(&call.op).unwrap(), &call.args, &decls)
        })
        .collect();
    let sizes = |p: &[hpmoe_core::resolve::Piece]| p.iter().map(|p| (p.what.clone(), p.bytes)).collect::<Vec<_>>();
    assert_eq!(
        sizes(&pieces[0]),
        vec![(format!("a {M} x 64 panel"), M * 64 * 2), (format!("a 64 x {N} panel"), 64 * N * 2)]
    );
    for p in &pieces[1..] {
        assert_eq!(sizes(p), sizes(&pieces[0]));
        assert_eq!(footprint(p), footprint(&pieces[0]));
    }
}
