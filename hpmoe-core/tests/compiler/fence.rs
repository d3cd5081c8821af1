//! The `fence` op: a tile that waits for every earlier write of a region and stands, in the
//! instance DAG, between those writes and the later readers it covers (a relay), moving nothing.

use hpmoe_core::analyse;
use hpmoe_core::check::node_name;
use hpmoe_core::cost::family_traffic;
use hpmoe_core::ids::{NodeId, RankId};
use hpmoe_core::model::{Affine, CoreKind::Aiv, DType::F32, MachineProfile, Taskflow};
use proptest::prelude::*;

/// Two ranks each put their 16 rows of `x` into `y` on both ranks (rows `rank·16 ..`, 4 per
/// put), a fence on rows `fence` of `y`, then 8 readers of 4 rows each.
fn relayed(fence: (u64, u64)) -> Taskflow {
    let mut tf = Taskflow::new("relayed", MachineProfile::small(1, 2));
    let x = tf.input("x", F32, &[16, 4]);
    let y = tf.symmetric("y", F32, &[32, 4]);
    let out = tf.output("out", F32, &[32, 4]);
    tf.tile("send", Aiv, |t| {
        let (d, i) = (t.grid("d", 2), t.grid("i", 4));
        t.put(x.slice(i.clone() * 4, 4), y.on(d).slice(Affine::rank() * 16 + i * 4, 4));
    });
    tf.tile("relay", Aiv, |t| {
        t.op("fence", [y.slice(fence.0 as i64, fence.1)]);
    });
    tf.tile("read", Aiv, |t| {
        let j = t.grid("j", 8);
        t.op("copy", [y.slice(j.clone() * 4, 4), out.slice(j * 4, 4)]);
    });
    tf
}

fn preds_named(tf: &Taskflow, family: &str, local: u32) -> Vec<String> {
    let e = analyse(tf).unwrap_or_else(|d| panic!("{d}"));
    let f = tf.families.iter().position(|f| f.name == family).unwrap();
    let node = e.space.node(RankId::new(0), e.space.families[f].first + local);
    e.dag.pred.row(node).iter().map(|&p| node_name(tf, &e.space, p)).collect()
}

#[test]
fn readers_after_a_fence_over_their_rows_wait_for_it_alone() {
    let tf = relayed((0, 32));
    let relay = preds_named(&tf, "relay", 0);
    assert_eq!(relay.len(), 8, "every put landing on rank 0: {relay:?}");
    assert!(relay.iter().all(|p| p.starts_with("send(d=0")), "{relay:?}");
    for j in 0..8 {
        assert_eq!(preds_named(&tf, "read", j), ["relay() on rank 0"]);
    }
    // It moves nothing and computes nothing.
    let traffic = &family_traffic(&tf)[1];
    assert_eq!((traffic.flops, traffic.write_bytes, traffic.remote_bytes), (0, 0, 0));
}

#[test]
fn a_fence_relays_only_what_it_covers() {
    let tf = relayed((0, 16)); // rank 0's own rows only
    assert_eq!(preds_named(&tf, "relay", 0).len(), 4);
    assert_eq!(preds_named(&tf, "read", 1), ["relay() on rank 0"]);
    // Rows 16..32 (rank 1's puts) are not behind the fence: their reader waits for the put.
    assert_eq!(preds_named(&tf, "read", 5), ["send(d=0, i=1) on rank 1"]);
    // A fence over part of what a put wrote and a reader read does not stand between them.
    let tf = relayed((2, 28));
    assert_eq!(preds_named(&tf, "read", 0), ["send(d=0, i=0) on rank 0", "relay() on rank 0"]);
    assert_eq!(preds_named(&tf, "read", 3), ["relay() on rank 0"]);
}

/// Writers of disjoint row segments (one family each), a fence over `fence` (rows the first
/// `at` write) declared after the first `at` of them, then readers of random rows, on one rank.
fn random_relay(segments: &[u64], at: usize, fence: (u64, u64), reads: &[(u64, u64)]) -> Taskflow {
    let rows: u64 = segments.iter().sum();
    let mut tf = Taskflow::new("random_relay", MachineProfile::small(1, 1));
    let x = tf.input("x", F32, &[rows, 4]);
    let y = tf.scratch("y", F32, &[rows, 4]);
    let out = tf.output("out", F32, &[reads.len() as u64 * rows, 4]); // a block of rows per reader
    let mut start = 0;
    for (w, &len) in segments.iter().enumerate() {
        if w == at {
            tf.tile("relay", Aiv, |t| {
                t.op("fence", [y.slice(fence.0 as i64, fence.1)]);
            });
        }
        tf.tile(&format!("w{w}"), Aiv, |t| {
            t.op("copy", [x.slice(start as i64, len), y.slice(start as i64, len)]);
        });
        start += len;
    }
    if at == segments.len() {
        tf.tile("relay", Aiv, |t| {
            t.op("fence", [y.slice(fence.0 as i64, fence.1)]);
        });
    }
    for (r, &(lo, len)) in reads.iter().enumerate() {
        tf.tile(&format!("r{r}"), Aiv, |t| {
            t.op("copy", [y.slice(lo as i64, len), out.slice((r as u64 * rows + lo) as i64, len)]);
        });
    }
    tf
}

fn reaches(pred: impl Fn(NodeId) -> Vec<NodeId>, from: NodeId, to: NodeId) -> bool {
    let mut stack = vec![to];
    let mut seen = std::collections::HashSet::new();
    while let Some(n) = stack.pop() {
        if n == from {
            return true;
        }
        if seen.insert(n) {
            stack.extend(pred(n));
        }
    }
    false
}

proptest! {
    /// Whatever the segments, the fence's rows and place, and the reads: a reader keeps a direct
    /// edge from a writer exactly when no fence declared between them covers all they share, and
    /// every writer still reaches every reader it overlaps (through the fence if not directly).
    #[test]
    fn a_fence_drops_exactly_the_edges_it_implies(
        segments in prop::collection::vec(1u64..6, 1..6),
        at_frac in 0.0f64..=1.0,
        fence_frac in (0.0f64..1.0, 0.0f64..=1.0),
        reads in prop::collection::vec((0.0f64..1.0, 0.0f64..=1.0), 1..5),
    ) {
        let rows: u64 = segments.iter().sum();
        let span = |rows: u64, (a, b): (f64, f64)| {
            let lo = ((a * rows as f64) as u64).min(rows - 1);
            (lo, 1 + ((b * (rows - lo - 1) as f64) as u64))
        };
        // The fence reads what it covers, so it covers rows written before it.
        let at = 1 + ((at_frac * (segments.len() - 1) as f64) as usize);
        let fence = span(segments[..at].iter().sum(), fence_frac);
        let reads: Vec<(u64, u64)> = reads.into_iter().map(|r| span(rows, r)).collect();
        let tf = random_relay(&segments, at, fence, &reads);
        let e = analyse(&tf).unwrap_or_else(|d| panic!("{d}"));
        let node = |name: &str| {
            let f = tf.families.iter().position(|f| f.name == name).unwrap();
            e.space.node(RankId::new(0), e.space.families[f].first)
        };
        let pred = |n: NodeId| e.dag.pred.row(n).to_vec();
        let mut start = 0;
        for (w, &len) in segments.iter().enumerate() {
            let writer = node(&format!("w{w}"));
            for (r, &(lo, rlen)) in reads.iter().enumerate() {
                let reader = node(&format!("r{r}"));
                let (a, b) = (start.max(lo), (start + len).min(lo + rlen));
                if a >= b {
                    prop_assert!(!pred(reader).contains(&writer));
                    continue;
                }
                let covered = w < at && fence.0 <= a && b <= fence.0 + fence.1;
                prop_assert_eq!(pred(reader).contains(&writer), !covered, "w{} r{}", w, r);
                prop_assert!(reaches(pred, writer, reader));
            }
            start += len;
        }
    }
}

/// The same taskflow in the `#[taskflow]` DSL: `fence` is a built-in function, a gridless tile
/// calls it, and the front-end lowers it to the builder's `relayed((0, 32))`.
#[test]
fn the_dsl_fence_is_the_builders() {
    let src = r#"
#[taskflow(profile = small(1), ranks = 2)]
fn relayed() {
    const X: Tensor<F32> = input([16, 4]);
    const Y: Tensor<F32> = symmetric([32, 4]);
    const OUT: Tensor<F32> = output([32, 4]);
    #[tile(aiv, grid(d in 0..2, i in 0..4))]
    fn send(d: Idx, i: Idx) {
        put(X.slice(i * 4, 4), Y.on(d).slice(RANK * 16 + i * 4, 4));
    }
    #[tile(aiv)]
    fn relay() {
        fence(Y.slice(0, 32));
    }
    #[tile(aiv, grid(j in 0..8))]
    fn read(j: Idx) {
        copy(Y.slice(j * 4, 4), OUT.slice(j * 4, 4));
    }
}
"#;
    let found = hpmoe_core::syntax::parse_file(src)
        .unwrap_or_else(|e| panic!("{}", hpmoe_core::syntax::render_error(&e, "test.rs")));
    let fe = &found[0];
    assert!(fe.errors.is_empty(), "{:?}", fe.errors);
    let relay = &fe.taskflow.families[1];
    assert_eq!((relay.name.as_str(), relay.body[0].op.as_str()), ("relay", "fence"));
    let built = relayed((0, 32));
    assert!(fe.taskflow.same_structure(&built));
    assert_eq!(preds_named(&fe.taskflow, "read", 3), ["relay() on rank 0"]);
}
