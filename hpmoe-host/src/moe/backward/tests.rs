//! Tests of the backward and training-step builders: each tile's predecessors, refusals.

use super::*;

/// The predecessors of instance `(family, local index)` on rank 0, by name.
fn preds(tf: &Taskflow, family: &str, local: u32) -> Vec<String> {
    let e = hpmoe_core::analyse(tf).unwrap_or_else(|d| panic!("{}", d.render(&tf.sources)));
    let f = tf.families.iter().position(|f| f.name == family).unwrap();
    let node = e.space.node(hpmoe_core::ids::RankId::new(0), e.space.families[f].first + local);
    e.dag.pred.row(node).iter().map(|&p| hpmoe_core::check::node_name(tf, &e.space, p)).collect()
}

#[test]
fn every_pass_analyses_with_the_instances_it_counts() {
    let int8 = |s: MoeShape| s.with_dispatch(super::super::DispatchPrecision::Int8);
    for shape in [
        MoeShape::tiny(1),
        MoeShape::tiny(2),
        MoeShape::tiny(4),
        MoeShape::tiny(2).with_whole_expert_wgrad(),
        MoeShape::tiny_natural(1),
        MoeShape::tiny_natural(2),
        MoeShape::tiny_natural(4),
        int8(MoeShape::tiny(2)),
        int8(MoeShape::tiny_natural(2)),
        MoeShape::tiny_natural(2).with_relay(),
        MoeShape::tiny(2).with_relay(),
    ] {
        let per_rank = [
            shape.instances_per_rank(),
            shape.backward_instances_per_rank(),
            shape.instances_per_rank() + shape.backward_instances_per_rank(),
        ];
        for (pass, n) in Pass::ALL.into_iter().zip(per_rank) {
            let tf = shape.pass_taskflow(pass).unwrap();
            let e = hpmoe_core::analyse(&tf).unwrap_or_else(|d| panic!("{}", d.render(&tf.sources)));
            assert_eq!(e.nodes() as u64, n * u64::from(shape.ranks), "{} of {shape:?}", pass.name());
        }
    }
    for ep in [8, 16, 32, 64] {
        let shape = MoeShape::deepseek_v3(ep, 4096);
        assert_eq!(shape.wgrad_rows, shape.rows_per_expert());
        shape.validate_backward().unwrap();
        let natural = MoeShape::deepseek_v3_natural(ep, 4096);
        natural.validate_backward().unwrap();
        // One group of sources per 16-die server.
        assert_eq!(natural.wgrad_source_groups, u64::from(ep / 16).max(1), "EP {ep}");
    }
}

#[test]
fn natural_tiles_wait_only_for_the_block_they_read_and_the_weight_gradient_for_its_group_s_rows() {
    // tiny_natural(2): slots of 12 rows (3 blocks of 4), 2 local experts, 2 gradient column
    // blocks of GMM2's weight gradient and 2 of GMM1's.
    let tf = MoeShape::tiny_natural(2).backward_taskflow().unwrap();
    let guarded: Vec<&str> = tf.families.iter().filter(|f| f.guard.is_some()).map(|f| f.name.as_str()).collect();
    assert_eq!(guarded, ["scale_dout", "combine_bwd", "gmm2_dgrad", "swiglu_bwd", "gmm1_dgrad", "dispatch_bwd"]);
    // gmm2_dgrad(e=0, src=1, b=2, n=0) on rank 0: the one put carrying block 2 of rank 1's slot.
    assert_eq!(preds(&tf, "gmm2_dgrad", (3 + 2) * 2), ["combine_bwd(dst=0, e=0, b=2) on rank 1"]);
    // combine_bwd(dst=1, e=0, b=1): the scaled rows of its block only.
    // (local index (dst·E + e)·3 + b)
    assert_eq!(preds(&tf, "combine_bwd", 2 * 3 + 1), ["scale_dout(dst=1, e=0, b=1) on rank 0"]);
    // The weight gradient of expert 0's column block 0 in two groups of one source each: on
    // rank 0, `gmm1_wgrad(e=0, n=0)` (local index 0) writes the sum over source 1's slot
    // (`wgrad_group`'s order), `gmm1_wgrad_acc(e=0, m=0, n=0)` (local index 0) adds source 0's
    // after that write; each after the dH columns of every block of its source's rows (each
    // SwiGLU tile, guarded or not, signals), nothing zeroes the gradient first.
    let link = |tf: &Taskflow, family: &str, sources: &[u32], prev: Option<&str>| {
        let mut want: Vec<String> = prev.map(str::to_string).into_iter().collect();
        for src in sources {
            want.extend((0..3).map(|b| format!("swiglu_bwd(e=0, src={src}, b={b}, n=0) on rank 0")));
        }
        let mut got = preds(tf, family, 0);
        got.sort();
        want.sort();
        assert_eq!(got, want, "{family}");
    };
    let two = MoeShape::tiny_natural(2).with_wgrad_groups(2).backward_taskflow().unwrap();
    link(&two, "gmm1_wgrad", &[1], None);
    link(&two, "gmm1_wgrad_acc", &[0], Some("gmm1_wgrad(e=0, n=0) on rank 0"));
    let body = |tf: &Taskflow, family: &str| {
        let f = tf.families.iter().find(|f| f.name == family).unwrap();
        assert!(f.guard.is_none());
        f.body.iter().map(|c| c.op.clone()).collect::<std::collections::BTreeSet<_>>()
    };
    assert_eq!(body(&two, "gmm1_wgrad"), ["matmul_tn_slots".to_string()].into());
    assert_eq!(body(&two, "gmm1_wgrad_acc"), ["matmul_tn_slots_accumulate".to_string()].into());
    assert!(!two.families.iter().any(|f| f.name.ends_with("_zero")));
    // In one group (the default within a server), one written sum waits for every block of
    // the expert's rows, and there is no chain.
    assert_eq!(MoeShape::tiny_natural(2).wgrad_source_groups, 1);
    link(&tf, "gmm1_wgrad", &[0, 1], None);
    assert!(!tf.families.iter().any(|f| f.name.ends_with("_wgrad_acc")));
    // The gathering sum and the routing-weight gradient read where the routing put the rows.
    let sum = preds(&tf, "sum_bwd", 0);
    assert_eq!(sum.len(), 2 * 2 * 3, "every dispatch_bwd landing on rank 0: {sum:?}");
    // With a relay, through it: the relay waits for them all, the sum for the relay alone.
    let relayed = MoeShape::tiny_natural(2).with_relay().backward_taskflow().unwrap();
    let relay = preds(&relayed, "relay_bwd", 0);
    assert_eq!(relay.len(), 2 * 2 * 3, "every dispatch_bwd landing on rank 0: {relay:?}");
    assert!(relay.iter().all(|p| p.starts_with("dispatch_bwd(")), "{relay:?}");
    assert_eq!(preds(&relayed, "sum_bwd", 0), ["relay_bwd() on rank 0"]);
    assert!(preds(&tf, "weights_grad", 0).is_empty());
}

#[test]
fn data_gradient_tiles_wait_only_for_the_block_they_read() {
    // tiny(2): 8 rows per source and expert, blocks of 4, so rows 4..8 of expert 0 on
    // rank 0 come from rank 0's block 1.
    let tf = MoeShape::tiny(2).backward_taskflow().unwrap();
    // gmm2_dgrad(e=0, m=1, n=0): one block of dy.
    assert_eq!(preds(&tf, "gmm2_dgrad", 2), ["combine_bwd(dst=0, e=0, b=1) on rank 0"]);
    // swiglu_bwd(e=0, m=1, n=1): the one dA tile of its columns.
    assert_eq!(preds(&tf, "swiglu_bwd", 3), ["gmm2_dgrad(e=0, m=1, n=1) on rank 0"]);
    // gmm1_dgrad(e=0, m=1, n=0): every SwiGLU tile of its block.
    assert_eq!(
        preds(&tf, "gmm1_dgrad", 2),
        ["swiglu_bwd(e=0, m=1, n=0) on rank 0", "swiglu_bwd(e=0, m=1, n=1) on rank 0"]
    );
    // combine_bwd(dst=0, e=0, b=0): the scaled rows of its tokens (slots 0..4: token block 0).
    assert_eq!(preds(&tf, "combine_bwd", 0), ["scale_dout(t=0) on rank 0"]);
    // The routing-weight gradient needs inputs only.
    assert!(preds(&tf, "weights_grad", 0).is_empty());
}

#[test]
fn weight_gradients_are_one_chain_per_expert_and_column_block() {
    let tf = MoeShape::tiny(2).backward_taskflow().unwrap();
    // gmm2_wgrad_acc(e=0, m=0, p=0, n=0) adds group 1 (rows 4..8) after the first group's write.
    assert_eq!(
        preds(&tf, "gmm2_wgrad_acc", 0),
        ["combine_bwd(dst=0, e=0, b=1) on rank 0", "gmm2_wgrad(e=0, p=0, n=0) on rank 0"]
    );
    // gmm2_wgrad_acc(e=0, m=1, p=0, n=0) (local index m·2 + n: two column blocks) adds group 2
    // (rank 1's block 0) after m = 0 (and, like every later group, after the first write).
    assert_eq!(
        preds(&tf, "gmm2_wgrad_acc", 2),
        [
            "gmm2_wgrad(e=0, p=0, n=0) on rank 0",
            "gmm2_wgrad_acc(e=0, m=0, p=0, n=0) on rank 0",
            "combine_bwd(dst=0, e=0, b=0) on rank 1"
        ]
    );
    // One group per expert: no accumulating family at all.
    let whole = MoeShape::tiny(2).with_whole_expert_wgrad().backward_taskflow().unwrap();
    assert!(whole.family("gmm2_wgrad_acc").is_none() && whole.family("gmm1_wgrad_acc").is_none());
}

#[test]
fn the_training_step_reads_the_forward_s_tensors_and_waits_for_its_output() {
    let shape = MoeShape::tiny(2);
    let tf = shape.training_step_taskflow().unwrap();
    for name in ["recv", "h", "act", "back"] {
        assert_ne!(tf.tensor(name).unwrap().kind, hpmoe_core::model::TensorKind::Input, "{name}");
    }
    let sums = (shape.tokens_per_rank / shape.sum_rows) as usize;
    assert_eq!(preds(&tf, "scale_dout", 0).len(), sums);
    assert!(preds(&tf, "scale_dout", 0).iter().all(|p| p.starts_with("weighted_sum(")));
    // The routing-weight gradient reads the expert outputs the forward's combine put here, and
    // the output gradient, which exists only once the rank's output does: it waits for every sum.
    let weights_grad = preds(&tf, "weights_grad", 0);
    assert!(weights_grad.iter().any(|p| p.starts_with("combine(")), "{weights_grad:?}");
    assert!(weights_grad.iter().all(|p| p.starts_with("combine(") || p.starts_with("weighted_sum(")));
    assert_eq!(weights_grad.iter().filter(|p| p.starts_with("weighted_sum(")).count(), sums);
}

#[test]
fn in_a_training_step_every_reader_of_the_output_gradient_waits_for_the_rank_s_output() {
    for shape in [MoeShape::tiny(2), MoeShape::tiny_natural(2)] {
        let tf = shape.training_step_taskflow().unwrap();
        let e = hpmoe_core::analyse(&tf).unwrap_or_else(|d| panic!("{}", d.render(&tf.sources)));
        let sum = tf.families.iter().position(|f| f.name == "weighted_sum").unwrap();
        let sums_on_rank_0 = e.space.families[sum].count;
        let mut readers = Vec::new();
        for (f, fam) in tf.families.iter().enumerate() {
            if !fam.body.iter().any(|call| call.args.iter().any(|a| a.tensor == "dout")) {
                continue;
            }
            readers.push(fam.name.as_str());
            let span = &e.space.families[f];
            for local in 0..span.count {
                let node = e.space.node(hpmoe_core::ids::RankId::new(0), span.first + local);
                let waits = e.dag.pred.row(node).iter().filter(|&&p| e.space.family_of(p) == sum).count();
                assert_eq!(waits as u32, sums_on_rank_0, "{} of {shape:?}", fam.name);
            }
        }
        assert_eq!(readers, ["scale_dout", "weights_grad"], "{shape:?}");
    }
}

#[test]
fn shapes_the_backward_cannot_build_are_refused() {
    let refused = |shape: MoeShape, what: &str| {
        let err = shape.backward_taskflow().unwrap_err();
        assert!(err.broken.iter().all(|r| r.is_backward()), "{err}");
        assert!(err.to_string().contains(what), "{err}");
        assert_eq!(shape.training_step_taskflow().unwrap_err(), err);
    };
    refused(MoeShape { wgrad_rows: 6, ..MoeShape::tiny(2) }, "wgrad_rows");
    refused(MoeShape { wgrad_rows: 0, ..MoeShape::tiny(2) }, "wgrad_rows");
    refused(MoeShape { top_k: 8, experts: 4, ..MoeShape::tiny(2) }, "multiple of top_k");
    refused(MoeShape { wgrad_source_groups: 3, ..MoeShape::tiny_natural(2) }, "wgrad_source_groups");
    refused(MoeShape { wgrad_source_groups: 0, ..MoeShape::tiny_natural(4) }, "divisor of ranks");
}

#[test]
fn weight_gradient_groups_of_whole_sources_go_in_arrival_order() {
    // tiny(4): 4 rows per source and expert. One source per group (the default 4 rows) and
    // two, each rank summing the group below its own first and its own last; tiny(2)'s
    // half-source groups go in row order.
    let two = MoeShape { wgrad_rows: 8, ..MoeShape::tiny(4) };
    assert_eq!((MoeShape::tiny(4).wgrad_sources_per_group(), two.wgrad_sources_per_group()), (Some(1), Some(2)));
    assert_eq!(MoeShape::tiny(2).wgrad_sources_per_group(), None);
    assert_eq!((0..4).map(|r| two.wgrad_group(r, 0)).collect::<Vec<_>>(), [1, 1, 0, 0]);
    assert_eq!((0..4).map(|r| MoeShape::tiny(4).wgrad_group(r, 0)).collect::<Vec<_>>(), [3, 0, 1, 2]);
    for shape in [MoeShape::tiny(2), MoeShape::tiny(4), two] {
        let tf = shape.backward_taskflow().unwrap();
        let groups = shape.wgrad_groups();
        for name in ["gmm1_wgrad", "gmm2_wgrad"] {
            let start = |family: &str, coords: &[u64], rank: u32| {
                let f = tf.families.iter().find(|f| f.name == family).unwrap();
                let row = f.body[0].args[0].dims[1].start.eval(coords, u64::from(rank)).unwrap();
                u64::try_from(row).unwrap() / shape.wgrad_rows
            };
            for rank in 0..shape.ranks {
                let order: Vec<u64> = (0..groups)
                    .map(|step| match step {
                        0 => start(name, &[0, 0, 0], rank),
                        m => start(&format!("{name}_acc"), &[0, m - 1, 0, 0], rank),
                    })
                    .collect();
                let want: Vec<u64> = (0..groups).map(|step| shape.wgrad_group(rank, step)).collect();
                assert_eq!(order, want, "{name} on rank {rank} of {shape:?}");
                let mut sorted = order.clone();
                sorted.sort_unstable();
                assert_eq!(sorted, (0..groups).collect::<Vec<_>>(), "every group once");
            }
        }
    }
}

#[test]
fn natural_weight_gradient_links_go_in_arrival_order_over_whole_sources() {
    // tiny_natural(4) in 1, 2 and 4 groups: link m of each rank sums the slots of the sources
    // `wgrad_group(rank, m)` names, every source exactly once per chain, the counts those
    // sources' own.
    for groups in [1, 2, 4] {
        let shape = MoeShape::tiny_natural(4).with_wgrad_groups(groups);
        assert_eq!(shape.wgrad_groups(), groups);
        let q = 4 / groups;
        assert_eq!(shape.wgrad_sources_per_group(), (groups > 1).then_some(q));
        let tf = shape.backward_taskflow().unwrap();
        let c = shape.slot_rows();
        for name in ["gmm1_wgrad", "gmm2_wgrad"] {
            // Link 0 is `{name}` (grid (e, n)), link m > 0 `{name}_acc`'s instance m - 1 (grid
            // (e, m, n)).
            let family = |acc: bool| {
                let wanted = if acc { format!("{name}_acc") } else { name.to_string() };
                tf.families.iter().find(|f| f.name == wanted).unwrap()
            };
            assert_eq!(tf.families.iter().any(|f| f.name == format!("{name}_acc")), groups > 1);
            for rank in 0..4u32 {
                let mut sources = Vec::new();
                for m in 0..groups {
                    let at = |arg: usize, dim: usize| {
                        let (f, index) =
                            if m == 0 { (family(false), vec![0, 0]) } else { (family(true), vec![0, m - 1, 0]) };
                        let v = f.body[0].args[arg].dims[dim].start.eval(&index, u64::from(rank)).unwrap();
                        u64::try_from(v).unwrap()
                    };
                    let (row, count) = (at(0, 1), at(3, 0));
                    let group = shape.wgrad_group(rank, m);
                    assert_eq!((row, count), (group * q * c, group * q), "{name} link {m} on rank {rank}");
                    sources.extend(count..count + q);
                }
                sources.sort_unstable();
                assert_eq!(sources, (0..4).collect::<Vec<_>>(), "{name} on rank {rank}: every source once");
            }
        }
    }
    // Two groups of two: ranks 0 and 1 sum sources 2, 3 first, ranks 2 and 3 sources 0, 1.
    let two = MoeShape::tiny_natural(4).with_wgrad_groups(2);
    assert_eq!((0..4).map(|r| two.wgrad_group(r, 0)).collect::<Vec<_>>(), [1, 1, 0, 0]);
}
