//! One test per check: the error kind, where it points, and the message a user reads.

use hpmoe_core::ids::{NodeId, RankId};
use hpmoe_core::model::{Affine, CoreKind::*, DType::*, IndexSel, MachineProfile, Taskflow};
use hpmoe_core::{Diagnostics, ErrorKind, analyse};

fn tf(ranks: u32) -> Taskflow {
    Taskflow::new("t", MachineProfile::small(2, ranks))
}

fn errors(tf: &Taskflow) -> Diagnostics {
    match analyse(tf) {
        Ok(_) => panic!("taskflow was accepted"),
        Err(d) => d,
    }
}

/// The only error's message, checking its kind.
fn only(tf: &Taskflow, kind: ErrorKind) -> String {
    let d = errors(tf);
    assert_eq!(d.kinds(), vec![kind], "{d}");
    d.errors[0].message.clone()
}

fn idx(i: u8) -> Affine {
    Affine::index(i)
}

#[test]
fn a_correct_pipeline_is_accepted() {
    let mut t = tf(2);
    let x = t.input("x", Bf16, &[64, 32]);
    let w = t.input("w", Bf16, &[32, 16]);
    let h = t.scratch("h", Bf16, &[64, 16]);
    let y = t.output("y", Bf16, &[64, 16]);
    t.tile("mm", Aic, |b| {
        let m = b.grid("m", 4);
        b.op("matmul", [x.slice(m.clone() * 16, 16), w.whole(), h.slice(m * 16, 16)]);
    });
    t.tile("act", Aiv, |b| {
        let m = b.grid("m", 8);
        b.op("copy", [h.slice(m.clone() * 8, 8), y.slice(m * 8, 8)]);
    });
    let e = analyse(&t).unwrap();
    assert_eq!(e.nodes(), (4 + 8) * 2);
    // act(m) reads rows 8m..8m+8, written by mm(m / 2) only.
    assert_eq!(e.dag.edges(), 8 * 2);
    let act0 = e.space.node(RankId::new(1), 4 + 5);
    assert_eq!(e.dag.pred.row(act0), &[e.space.node(RankId::new(1), 2)]);
}

#[test]
fn duplicate_names_point_at_the_second_declaration() {
    let mut t = tf(1);
    t.input("x", Bf16, &[4]);
    t.input("x", Bf16, &[4]);
    t.tile("a", Aiv, |b| {
        b.grid("i", 1);
        b.grid("i", 1);
    });
    t.tile("a", Aiv, |_| {});
    let d = errors(&t);
    assert_eq!(d.kinds(), vec![ErrorKind::DuplicateName; 3]);
    let text = d.to_string();
    assert!(text.contains("tensor `x` is declared twice"), "{text}");
    assert!(text.contains("grid index `i` appears twice in tile `a`"), "{text}");
    assert!(text.contains("tile `a` is declared twice"), "{text}");
    assert_eq!(d.errors[0].notes[0].message, "first declared here");
}

#[test]
fn unknown_tensor_suggests_the_closest_name() {
    let mut t = tf(1);
    let x = t.input("tokens", Bf16, &[4]);
    t.output("out", Bf16, &[4]);
    t.tile("a", Aiv, |b| b.op("copy", [x.whole(), hpmoe_core::model::Region::whole("outt")]));
    let d = errors(&t);
    assert_eq!(d.kinds(), vec![ErrorKind::UnknownTensor]);
    assert_eq!(d.errors[0].message, "unknown tensor `outt` in tile `a`");
    assert_eq!(d.errors[0].help.as_deref(), Some("did you mean `out`?"));
}

#[test]
fn unknown_op_and_unknown_after_tile() {
    let mut t = tf(1);
    let x = t.input("x", Bf16, &[4]);
    let y = t.output("y", Bf16, &[4]);
    t.tile("a", Aiv, |b| b.op("copyy", [x.whole(), y.whole()]));
    t.tile("b", Aiv, |b| b.after("aa", []));
    let d = errors(&t);
    assert_eq!(d.kinds(), vec![ErrorKind::UnknownOp, ErrorKind::UnknownTile]);
    assert_eq!(d.errors[0].message, "unknown op `copyy` in tile `a`");
    assert_eq!(d.errors[0].help.as_deref(), Some("did you mean `copy`?"));
    assert_eq!(d.errors[1].message, "tile `b` runs after unknown tile `aa`");
}

#[test]
fn matmul_on_aiv_and_put_on_aic_are_wrong_core_kinds() {
    let mut t = tf(2);
    let a = t.input("a", Bf16, &[16, 16]);
    let c = t.output("c", Bf16, &[16, 16]);
    let s = t.symmetric("s", Bf16, &[16, 16]);
    t.tile("mm", Aiv, |b| b.op("matmul", [a.whole(), a.whole(), c.whole()]));
    t.tile("send", Aic, |b| b.put(a.whole(), s.on(1)));
    let d = errors(&t);
    assert_eq!(d.kinds(), vec![ErrorKind::WrongCoreKind; 2]);
    assert_eq!(d.errors[0].message, "`matmul` runs on aic cores, but tile `mm` is an aiv tile");
    assert_eq!(d.errors[0].help.as_deref(), Some("move the call into a `#[tile(aic)]` function"));
    assert_eq!(d.errors[1].message, "`put` runs on aiv cores, but tile `send` is an aic tile");
}

#[test]
fn arity_mismatches() {
    let mut t = tf(1);
    let x = t.input("x", Bf16, &[4, 4]);
    let y = t.output("y", Bf16, &[4, 4]);
    t.tile("a", Aiv, |b| {
        b.grid("i", 2);
        b.op("copy", [x.whole()]);
        b.op("copy", [x.at(0).at(0).at(0), y.whole()]);
    });
    t.tile("b", Aiv, |b| b.after("a", []));
    let d = errors(&t);
    assert_eq!(d.kinds(), vec![ErrorKind::ArityMismatch; 3], "{d}");
    assert_eq!(d.errors[0].message, "`copy` takes 2 region arguments (src, dst), but 1 were given");
    assert_eq!(d.errors[1].message, "argument `src` of `copy` in tile `a` slices 3 dimensions of `x`, which has 2");
    assert_eq!(d.errors[2].message, "`after(a(..))` gives 0 indices, but tile `a` has 1 grid index (i)");
}

#[test]
fn unknown_grid_index_in_an_expression() {
    let mut t = tf(1);
    let x = t.input("x", Bf16, &[4]);
    let y = t.output("y", Bf16, &[4]);
    t.tile("a", Aiv, |b| {
        let i = b.grid("i", 4);
        b.op("copy", [x.slice(i.clone(), 1), y.slice(idx(1), 1)]);
    });
    let msg = only(&t, ErrorKind::UnknownIndex);
    assert_eq!(msg, "expression `i1` uses grid index #1, but tile `a` has 1 grid indices");
}

#[test]
fn put_rules() {
    let mut t = tf(2);
    let x = t.input("x", Bf16, &[4]);
    let sym = t.symmetric("s", Bf16, &[4]);
    let plain = t.scratch("p", Bf16, &[4]);
    t.tile("to_plain", Aiv, |b| b.put(x.whole(), plain.on(1)));
    t.tile("local_dst", Aiv, |b| b.put(x.whole(), sym.whole()));
    t.tile("remote_src", Aiv, |b| b.op("copy", [sym.on(1), plain.whole()]));
    let d = errors(&t);
    assert_eq!(
        d.kinds(),
        vec![ErrorKind::PutIntoNonSymmetric, ErrorKind::RemoteMismatch, ErrorKind::RemoteMismatch],
        "{d}"
    );
    assert_eq!(
        d.errors[0].message,
        "argument `dst` of `put` in tile `to_plain` writes into `p` on another rank, but `p` is a scratch tensor, not a symmetric one"
    );
    assert_eq!(d.errors[1].message, "argument `dst` of `put` in tile `local_dst` must name its destination rank");
    assert_eq!(d.errors[2].message, "argument `src` of `copy` in tile `remote_src` addresses another rank's memory");
}

#[test]
fn writing_an_input_is_an_error() {
    let mut t = tf(1);
    let x = t.input("x", Bf16, &[4]);
    t.tile("z", Aiv, |b| b.op("zero", [x.whole()]));
    assert_eq!(only(&t, ErrorKind::WriteToInput), "argument `dst` of `zero` in tile `z` writes into input tensor `x`");
}

#[test]
fn bad_shapes_and_profiles() {
    let mut t = Taskflow::new("t", MachineProfile::small(0, 0));
    t.input("none", Bf16, &[]);
    t.input("zero", Bf16, &[4, 0]);
    t.input("many", Bf16, &[1, 1, 1, 1, 1]);
    let d = errors(&t);
    assert_eq!(
        d.kinds(),
        vec![
            ErrorKind::BadProfile,
            ErrorKind::BadProfile,
            ErrorKind::BadShape,
            ErrorKind::BadShape,
            ErrorKind::BadShape
        ]
    );
    assert_eq!(d.errors[0].message, "taskflow `t` has 0 ranks; allowed: 1..=1024");
    assert_eq!(d.errors[3].message, "tensor `zero` has extent 0 in dimension 1; extents must be in 1..=4294967295");
}

#[test]
fn empty_and_oversized_grids() {
    let mut t = tf(1);
    t.tile("empty", Aiv, |b| {
        b.grid("i", 0);
    });
    t.tile("huge", Aiv, |b| {
        b.grid("i", 1 << 12);
        b.grid("j", 1 << 12);
    });
    t.tile("deep", Aiv, |b| {
        for n in ["a", "b", "c", "d", "e"] {
            b.grid(n, 1);
        }
    });
    let d = errors(&t);
    assert_eq!(
        d.kinds(),
        vec![ErrorKind::EmptyGrid, ErrorKind::GridTooLarge, ErrorKind::GridTooLarge, ErrorKind::TooManyInstances],
        "{d}"
    );
    assert_eq!(d.errors[0].message, "grid index `i` of tile `empty` ranges over 0..0: the tile would never run");
    assert_eq!(
        d.errors[1].message,
        "tile `huge` has 16777216 instances per rank; the limit is 1048576 (MAX_FAMILY_INSTANCES)"
    );
    assert_eq!(d.errors[2].message, "tile `deep` has 5 grid dimensions; at most 4 are supported");
}

#[test]
fn too_many_instances_and_edges() {
    let mut t = tf(64);
    t.tile("a", Aiv, |b| {
        b.grid("i", 1 << 20);
    });
    t.tile("b", Aiv, |b| {
        b.grid("i", 1 << 20);
        b.after("a", [IndexSel::All]);
    });
    let d = errors(&t);
    assert_eq!(d.kinds(), vec![ErrorKind::TooManyInstances, ErrorKind::TooManyEdges], "{d}");
    assert!(d.errors[0].message.starts_with("taskflow `t` expands to 134217728 tile instances over 64 ranks"));
    assert_eq!(d.errors[1].message, "`after(a(..))` in tile `b` adds more than 67108864 edges (MAX_EDGES)");
}

#[test]
fn too_many_ops_in_a_tile() {
    let mut t = tf(1);
    let y = t.output("y", Bf16, &[4]);
    t.tile("busy", Aiv, |b| {
        for _ in 0..65 {
            b.op("zero", [y.whole()]);
        }
    });
    let d = errors(&t);
    assert_eq!(d.kinds()[0], ErrorKind::TileTooLarge);
    assert_eq!(d.errors[0].message, "tile `busy` calls 65 ops; at most 64 are allowed");
}

#[test]
fn region_out_of_bounds_names_the_instance_and_counts_the_rest() {
    let mut t = tf(1);
    let x = t.input("x", Bf16, &[64, 8]);
    let y = t.output("y", Bf16, &[64, 8]);
    t.tile("rows", Aiv, |b| {
        let m = b.grid("m", 5);
        b.op("copy", [x.slice(m.clone() * 16, 16), y.slice(m * 16, 16)]);
    });
    let d = errors(&t);
    assert_eq!(d.kinds(), vec![ErrorKind::RegionOutOfBounds; 2], "{d}");
    assert_eq!(
        d.errors[0].message,
        "argument `src` of `copy` in rows(m=4) on rank 0 is out of bounds: dimension 0 of `x` is 64..80 but the tensor has 64"
    );
    // A static length larger than the tensor is caught before expansion.
    let mut t = tf(1);
    let x = t.input("x", Bf16, &[64]);
    let y = t.output("y", Bf16, &[64]);
    t.tile("big", Aiv, |b| b.op("copy", [x.slice(0, 65), y.whole()]));
    assert_eq!(
        only(&t, ErrorKind::RegionOutOfBounds),
        "argument `src` of `copy` in tile `big` takes 65 elements of dimension 0 of `x`, which has 64"
    );
}

#[test]
fn many_bad_instances_fold_into_one_error() {
    let mut t = tf(2);
    let x = t.input("x", Bf16, &[8]);
    let y = t.output("y", Bf16, &[8]);
    t.tile("rows", Aiv, |b| {
        let m = b.grid("m", 8);
        b.op("copy", [x.slice(m.clone() + 4, 1), y.slice(m, 1)]);
    });
    let d = errors(&t);
    assert_eq!(d.kinds(), vec![ErrorKind::RegionOutOfBounds]);
    assert!(d.errors[0].message.ends_with("(and 7 more instances)"), "{}", d.errors[0].message);
}

#[test]
fn destination_rank_out_of_range() {
    let mut t = tf(4);
    let x = t.input("x", Bf16, &[4]);
    let s = t.symmetric("s", Bf16, &[8, 4]);
    t.tile("send", Aiv, |b| {
        let d = b.grid("d", 4);
        b.put(x.whole(), s.on(Affine::rank() + d).at(Affine::rank()));
    });
    let d = errors(&t);
    assert_eq!(d.kinds(), vec![ErrorKind::RankOutOfRange], "{d}");
    assert_eq!(
        d.errors[0].message,
        "argument `dst` of `put` in send(d=3) on rank 1 puts to rank 4, but ranks are 0..4 (and 5 more instances)"
    );
    assert_eq!(
        d.errors[0].help.as_deref(),
        Some("wrap the destination with `% RANKS`, or bound the grid index by RANKS")
    );
}

#[test]
fn after_index_out_of_range() {
    let mut t = tf(1);
    t.tile("a", Aiv, |b| {
        b.grid("i", 4);
    });
    t.tile("b", Aiv, |b| {
        let i = b.grid("i", 4);
        b.after("a", [IndexSel::At(i - 1)]);
    });
    assert_eq!(
        only(&t, ErrorKind::AfterOutOfRange),
        "in b(i=0) on rank 0, index `i` of `after(a(..))` is -1, outside 0..4"
    );
}

#[test]
fn overflow_is_an_error_not_a_wrap() {
    let mut t = tf(1);
    let x = t.input("x", Bf16, &[4]);
    let y = t.output("y", Bf16, &[4]);
    t.tile("a", Aiv, |b| {
        let i = b.grid("i", 2);
        b.op("copy", [x.slice(i.clone() * i64::MAX + 1, 1), y.slice(i, 1)]);
    });
    let msg = only(&t, ErrorKind::Overflow);
    assert_eq!(msg, "argument `src` of `copy` in a(i=1) on rank 0: a region expression overflows 64-bit arithmetic");
}

#[test]
fn reading_scratch_nobody_wrote() {
    let mut t = tf(1);
    let h = t.scratch("h", Bf16, &[16]);
    let y = t.output("y", Bf16, &[16]);
    t.tile("half", Aiv, |b| b.op("zero", [h.slice(0, 8)]));
    t.tile("use", Aiv, |b| b.op("copy", [h.whole(), y.whole()]));
    assert_eq!(
        only(&t, ErrorKind::UnwrittenRead),
        "use() on rank 0 reads scratch `h`[0..16] but only part of it is written by a tile declared before `use`"
    );
    // A write later in the body of the same tile does not count; an earlier one does.
    let mut t = tf(1);
    let h = t.scratch("h", Bf16, &[16]);
    let y = t.output("y", Bf16, &[16]);
    t.tile("ok", Aiv, |b| {
        b.op("zero", [h.whole()]);
        b.op("copy", [h.whole(), y.whole()]);
    });
    analyse(&t).unwrap();
}

#[test]
fn unordered_write_after_read() {
    let mut t = tf(1);
    let x = t.input("x", Bf16, &[16]);
    let h = t.scratch("h", Bf16, &[16]);
    let y = t.output("y", Bf16, &[16]);
    t.tile("fill", Aiv, |b| b.op("copy", [x.whole(), h.whole()]));
    t.tile("read", Aiv, |b| b.op("copy", [h.whole(), y.whole()]));
    t.tile("clobber", Aiv, |b| b.op("zero", [h.slice(4, 4)]));
    let d = errors(&t);
    // `clobber` also overwrites `fill`'s data unordered: a write-after-write as well.
    assert_eq!(d.kinds(), vec![ErrorKind::UnorderedWriteAfterWrite, ErrorKind::UnorderedWriteAfterRead], "{d}");
    assert_eq!(
        d.errors[1].message,
        "unordered write after read: clobber() on rank 0 may overwrite `h`[4..8] on rank 0 before read() on rank 0 reads it"
    );
    // Ordering the clobber after the reader resolves both (fill -> read -> clobber).
    let mut t2 = t.clone();
    t2.families[2].after.push(hpmoe_core::model::After {
        family: "read".into(),
        indices: Default::default(),
        loc: Default::default(),
    });
    analyse(&t2).unwrap();
}

#[test]
fn colliding_puts_from_two_ranks_are_unordered_writes() {
    let mut t = tf(4);
    let x = t.input("x", Bf16, &[4, 8]);
    let recv = t.symmetric("recv", Bf16, &[4, 8]);
    // Every rank writes row 0 of rank (RANK+1)%4 ... and row 0 again from rank+3: collide.
    t.tile("send", Aiv, |b| {
        let d = b.grid("d", 2);
        b.put(x.at(0), recv.on((Affine::rank() + d.clone() * 2 + 1).modulo(4)).at(0));
    });
    let d = errors(&t);
    // Four colliding pairs (one per destination rank), one place in the source: one error.
    assert_eq!(d.kinds(), vec![ErrorKind::UnorderedWriteAfterWrite], "{d}");
    assert!(d.errors[0].message.contains("unordered conflict inside tile `send`"), "{}", d.errors[0].message);
    assert!(d.errors[0].message.ends_with("(and 3 more pairs)"), "{}", d.errors[0].message);
    assert!(d.errors[0].message.contains("`recv`[0..1, 0..8] on rank 1"), "{}", d.errors[0].message);
    // Rows grouped by source rank do not collide.
    let mut ok = tf(4);
    let x = ok.input("x", Bf16, &[4, 8]);
    let recv = ok.symmetric("recv", Bf16, &[4, 8]);
    ok.tile("send", Aiv, |b| {
        let d = b.grid("d", 4);
        b.put(x.at(d.clone()), recv.on(d).at(Affine::rank()));
    });
    analyse(&ok).unwrap();
}

#[test]
fn accumulation_chain_needs_after() {
    let build = |chain: &[i64]| {
        let mut t = tf(1);
        let parts = t.input("parts", F32, &[4, 16]);
        let out = t.output("out", F32, &[16]);
        t.tile("init", Aiv, |b| b.op("zero", [out.whole()]));
        t.tile("acc", Aiv, |b| {
            let k = b.grid("k", 4);
            b.op("accumulate", [parts.at(k.clone()), out.whole()]);
            for &step in chain {
                b.after("acc", [IndexSel::At(k.clone() + step)]);
            }
        });
        t
    };
    // Unchained, the accumulations into `out` have no order: their own error, with the chain as help.
    let d = errors(&build(&[]));
    assert_eq!(d.kinds(), vec![ErrorKind::UnorderedAccumulation], "{d}");
    assert!(d.errors[0].help.as_deref().is_some_and(|h| h.contains("`after(acc(k - 1))` in `acc`")), "{d}");
    // `after(acc(k - 1))` chains the writers in order of `k`; `acc(k = 0)` has no earlier
    // instance, so no such dependency. The other direction is a chain too.
    analyse(&build(&[-1])).unwrap();
    analyse(&build(&[1])).unwrap();
    let exp = analyse(&build(&[-1])).unwrap();
    assert_eq!(exp.dag.pred.row(NodeId::new(1)), &[NodeId::new(0)], "acc(k = 0) waits for `init` only");
    assert_eq!(exp.dag.pred.row(NodeId::new(2)), &[NodeId::new(0), NodeId::new(1)]);
    // Both directions at once: each instance waits for its neighbours, a cycle.
    let d = errors(&build(&[-1, 1]));
    assert_eq!(d.kinds(), vec![ErrorKind::Cycle], "{d}");
    assert!(d.errors[0].help.as_deref().is_some_and(|h| h.contains("must all point the same way")), "{d}");
    // No offset: every instance waits for itself.
    let d = errors(&build(&[0]));
    assert_eq!(d.kinds(), vec![ErrorKind::Cycle], "{d}");
    assert_eq!(d.errors[0].message, "`after(acc(..))` makes acc(k=0) on rank 0 wait for itself (and 3 more instances)");
}

#[test]
fn two_tile_cycle_is_reported_at_the_after_entry() {
    let mut t = tf(1);
    let x = t.input("x", Bf16, &[8]);
    let h = t.scratch("h", Bf16, &[8]);
    let y = t.output("y", Bf16, &[8]);
    t.tile("a", Aiv, |b| {
        b.op("copy", [x.whole(), h.whole()]);
        b.after("b", []);
    });
    t.tile("b", Aiv, |b| b.op("copy", [h.whole(), y.whole()]));
    let d = errors(&t);
    assert_eq!(d.kinds(), vec![ErrorKind::Cycle]);
    assert_eq!(d.errors[0].message, "dependency cycle: a() on rank 0 -> b() on rank 0 -> a() on rank 0");
    assert_eq!(d.errors[0].loc, t.families[0].after[0].loc);
}

#[test]
fn long_cycle_names_every_tile() {
    let mut t = tf(1);
    for (name, prev) in [("a", "d"), ("b", "a"), ("c", "b"), ("d", "c")] {
        t.tile(name, Aiv, |b| b.after(prev, []));
    }
    let d = errors(&t);
    assert_eq!(d.kinds(), vec![ErrorKind::Cycle]);
    let m = &d.errors[0].message;
    for name in ["a()", "b()", "c()", "d()"] {
        assert!(m.contains(name), "{m}");
    }
    assert_eq!(d.errors[0].help.as_deref().map(|h| h.starts_with("tiles on the cycle:")), Some(true));
}

#[test]
fn all_errors_are_reported_together() {
    let mut t = tf(1);
    let x = t.input("x", Bf16, &[4]);
    t.tile("a", Aiv, |b| b.op("matmul", [x.whole(), x.whole(), x.whole()]));
    t.tile("b", Aiv, |b| b.op("nope", []));
    t.tile("c", Aiv, |b| b.after("zz", []));
    let d = errors(&t);
    assert_eq!(
        d.kinds(),
        vec![ErrorKind::WrongCoreKind, ErrorKind::WriteToInput, ErrorKind::UnknownOp, ErrorKind::UnknownTile]
    );
}

#[test]
fn builder_locations_point_at_this_file() {
    let mut t = tf(1);
    t.tile("a", Aiv, |b| b.op("nope", []));
    let d = errors(&t);
    let rendered = d.render(&t.sources);
    assert!(rendered.starts_with("error[unknown_op]: hpmoe-core/tests/compiler/checks.rs:"), "{rendered}");
}

#[test]
fn a_guard_reads_one_local_i32_element_the_tile_does_not_write() {
    let mut t = tf(2);
    let counts = t.input("counts", I32, &[4, 2]);
    let wide = t.input("wide", F32, &[4]);
    let y = t.output("y", Bf16, &[4, 8]);
    let sym = t.symmetric("n", I32, &[2]);
    t.tile("not_i32", Aiv, |b| {
        let i = b.grid("i", 4);
        b.run_if_above(wide.at(i.clone()), 0);
        b.op("zero", [y.at(i)]);
    });
    t.tile("a_row", Aiv, |b| {
        let i = b.grid("i", 4);
        b.run_if_above(counts.at(i.clone()), 0);
        b.op("zero", [y.at(i)]);
    });
    t.tile("remote", Aiv, |b| b.run_if_above(sym.on(1).at(0), 0));
    t.tile("self_written", Aiv, |b| {
        b.run_if_above(sym.at(0), 0);
        b.op("zero", [sym.whole()]);
    });
    let d = errors(&t);
    assert_eq!(
        d.kinds(),
        vec![ErrorKind::BadGuard, ErrorKind::BadGuard, ErrorKind::RemoteMismatch, ErrorKind::BadGuard],
        "{d}"
    );
    assert_eq!(
        d.errors[0].message,
        "the count of `run_if_above` in tile `not_i32` must be an i32 element, but `wide` holds f32"
    );
    assert_eq!(
        d.errors[1].message,
        "the count of `run_if_above` in tile `a_row` must be one element, but it covers 2 elements of `counts`"
    );
    assert_eq!(
        d.errors[2].message,
        "argument `count` of `run_if_above` in tile `remote` addresses another rank's memory"
    );
    assert_eq!(d.errors[3].message, "tile `self_written` writes `n`, which its own `run_if_above` guard reads");
}

#[test]
fn a_guard_depends_on_the_writer_of_its_count() {
    let mut t = tf(2);
    let sent = t.input("sent", I32, &[2]);
    let counts = t.symmetric("counts", I32, &[2]);
    let y = t.output("y", Bf16, &[2, 4, 8]);
    t.tile("announce", Aiv, |b| {
        let dst = b.grid("dst", 2);
        b.put(sent.at(dst.clone()), counts.on(dst).at(Affine::rank()));
    });
    t.tile("work", Aiv, |b| {
        let src = b.grid("src", 2);
        let blk = b.grid("b", 4);
        b.run_if_above(counts.at(src.clone()), blk.clone() * 2);
        b.op("zero", [y.at(src).at(blk)]);
    });
    let e = analyse(&t).unwrap();
    // work(src=1, b) on rank 0 waits for announce(dst=0) on rank 1, which wrote counts[1].
    let work = e.space.node(RankId::new(0), 2 + 4);
    assert_eq!(e.dag.pred.row(work), &[e.space.node(RankId::new(1), 0)]);
    let mut unwritten = tf(1);
    let counts = unwritten.scratch("c", I32, &[1]);
    unwritten.tile("w", Aiv, |b| b.run_if_above(counts.at(0), 0));
    assert_eq!(
        only(&unwritten, ErrorKind::UnwrittenRead),
        "w() on rank 0 reads scratch `c`[0..1] but nothing written by a tile declared before `w`"
    );
}
