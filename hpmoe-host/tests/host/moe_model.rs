//! The compiler's footprint check and cost model on the MoE layers of [`hpmoe_host::moe`]: the
//! cases of hpmoe-core's checks and cost model that need a full MoE taskflow, kept here because
//! hpmoe-core's own unit tests cannot build one (the MoE layers live in this crate).

use hpmoe_core::cost::{Activity, CostProfile, FamilyTraffic, Reads, TaskflowCost, family_traffic};
use hpmoe_core::expand::InstanceSpace;
use hpmoe_core::resolve::{check_footprint, check_structure};
use hpmoe_core::schedule::{CostModel, PutShape, node_costs};
use hpmoe_core::testing::round_profile;
use hpmoe_host::moe::{DispatchPrecision, MoeShape};

fn footprint_errors(tf: &hpmoe_core::model::Taskflow) -> hpmoe_core::Diagnostics {
    check_footprint(&check_structure(tf).unwrap())
}

#[test]
fn the_moe_layer_fits() {
    let tf = MoeShape::deepseek_v3(8, 4096).taskflow().unwrap();
    assert!(footprint_errors(&tf).is_empty(), "{}", footprint_errors(&tf));
}

#[test]
fn the_backward_and_the_training_step_fit() {
    for ep in [8, 64] {
        let shape = MoeShape::deepseek_v3(ep, 4096);
        for tf in [shape.backward_taskflow().unwrap(), shape.training_step_taskflow().unwrap()] {
            assert!(footprint_errors(&tf).is_empty(), "{}", footprint_errors(&tf));
        }
    }
}

#[test]
fn moe_traffic_agrees_with_the_expanded_work() {
    for shape in [MoeShape::tiny(2), MoeShape { experts: 16, ..MoeShape::deepseek_v3(2, 1024) }] {
        let tf = shape.taskflow().unwrap();
        let exp = hpmoe_core::analyse(&tf).unwrap();
        let traffic = family_traffic(&tf);
        for (f, (t, w)) in traffic.iter().zip(&exp.family_work).enumerate() {
            assert_eq!(t.flops, w.flops, "flops of family {f}");
            assert_eq!(t.remote_bytes, w.remote_bytes, "remote bytes of family {f}");
            // Work counts a read-write argument once; traffic reads and writes it.
            assert!(t.reads.total() + t.put_reads.total() + t.write_bytes >= w.bytes, "family {f}");
        }
        // Puts: dispatch reads its source rows once (cold input), combine reads GMM2's
        // output (scratch, L2-eligible).
        let (dispatch, combine) = (traffic[0], traffic[4]);
        let block = shape.row_block * shape.hidden * 2;
        assert_eq!(dispatch.put_reads, Reads { cold_bytes: block, warm_bytes: 0 });
        assert_eq!(combine.put_reads, Reads { cold_bytes: 0, warm_bytes: block });
        assert_eq!((dispatch.remote_bytes, dispatch.reads.total()), (block, 0));
    }
}

#[test]
fn int8_dispatch_prices_the_quantisation_on_the_aiv_and_puts_int8_rows_with_scales() {
    let shape = MoeShape::deepseek_v3(8, 4096).with_dispatch(DispatchPrecision::Int8);
    let tf = shape.taskflow().unwrap();
    assert!(footprint_errors(&tf).is_empty(), "{}", footprint_errors(&tf));
    let cost = TaskflowCost::new(&tf, CostProfile::ascend_a3_die());
    let f = |name: &str| tf.families.iter().position(|f| f.name == name).unwrap();
    let (b, h) = (shape.row_block, shape.hidden);
    let t = cost.traffic();
    // Quantise: the block's BF16 rows in (cold input), its INT8 rows and FP32 scales out, 4
    // flops an element, on the AIV.
    let q = t[f("quantize")];
    assert_eq!((q.reads.cold_bytes, q.write_bytes, q.flops, q.remote_bytes), (b * h * 2, b * h + b * 4, 4 * b * h, 0));
    // Dispatch: streams them from L2 (written by the quantisation), H + 4 bytes a row.
    let d = t[f("dispatch")];
    assert_eq!((d.put_reads, d.remote_bytes), (Reads { cold_bytes: 0, warm_bytes: b * (h + 4) }, b * (h + 4)));
    // Dequantise: the landed INT8 rows and scales in (cold), BF16 rows out, for GMM1.
    let dq = t[f("dequantize")];
    assert_eq!((dq.reads.cold_bytes, dq.write_bytes), (b * h + b * 4, b * h * 2));
    for name in ["quantize", "dequantize"] {
        let c = cost.family(f(name));
        assert_eq!(c.core, hpmoe_core::model::CoreKind::Aiv);
        assert!(c.put.is_none() && c.exec_ns > cost.profile().tile_overhead(), "{name}: {c:?}");
    }
    // The put half of the BF16 layer's, plus the scales.
    let bf16 = TaskflowCost::new(&MoeShape::deepseek_v3(8, 4096).taskflow().unwrap(), CostProfile::ascend_a3_die());
    assert_eq!(bf16.traffic()[0].remote_bytes, 2 * b * h);
}

#[test]
fn the_scheduler_sees_family_costs() {
    let shape = MoeShape::tiny(2);
    let tf = shape.taskflow().unwrap();
    let exp = hpmoe_core::analyse(&tf).unwrap();
    let cost = TaskflowCost::new(&tf, round_profile());
    let nodes = node_costs(&exp, &cost);
    for (f, span) in exp.space.families.iter().enumerate() {
        let c = cost.family(f);
        // A put's core also waits a round trip (2 × 1000 ns) for its completion.
        let expected = c.exec_ns + c.put.map_or(0, |p| p.uncontended_ns(4_000_000_000) + 2000);
        assert_eq!(nodes[span.first as usize], expected, "family {f}");
        // Puts: the link and each put's parts, as the simulator charges them.
        if let Some(put) = c.put {
            let shape = cost.family_put(f, c.core, &exp.family_work[f]);
            let parts =
                PutShape { exec_ns: c.exec_ns + 2000, bytes: put.bytes, stream_bytes_per_s: put.stream_bytes_per_s };
            assert_eq!(shape, parts, "family {f}");
        }
    }
    assert_eq!(cost.link_bytes_per_s(), Some(4_000_000_000));
    // Overriding a family's traffic changes what the scheduler sees.
    let heavy = FamilyTraffic { flops: 10_000_000, ..FamilyTraffic::default() };
    let cost = cost.with_traffic("weighted_sum", heavy);
    let ws = exp.space.families[5].first as usize;
    assert_eq!(node_costs(&exp, &cost)[ws], 100 + 1_000_000);
    // Re-pricing under another profile keeps the override.
    let faster = cost.with_profile(CostProfile { vector_flops_per_cycle: 100.0, ..round_profile() });
    assert_eq!(faster.family(5).exec_ns, 100 + 100_000);
}

#[test]
fn plans_charge_the_expected_time_and_runs_average_over_samples() {
    let shape = MoeShape::tiny_natural(2);
    let tf = shape.taskflow().unwrap();
    let exp = hpmoe_core::analyse(&tf).unwrap();
    let nodes = exp.nodes();
    let a = shape.route(1).activity(&shape, &tf, &exp.space).unwrap();
    let b = shape.route(2).activity(&shape, &tf, &exp.space).unwrap();
    assert_eq!(InstanceSpace::of(&tf).unwrap(), exp.space);
    let p = Activity::run_probability(&[a.clone(), b.clone()], nodes);
    for v in exp.space.node_ids() {
        let want = (u32::from(!a.skips(v)) + u32::from(!b.skips(v))) as f32 / 2.0;
        assert_eq!(p[v.index()], want);
    }
    assert!(p.contains(&0.5) || p.contains(&0.0), "the two routings differ somewhere");
    assert_eq!(Activity::run_probability(&[], 3), vec![1.0; 3]);

    let cost = TaskflowCost::new(&tf, CostProfile::ascend_a3_die());
    let overhead = cost.profile().tile_overhead();
    let full = node_costs(&exp, &cost);
    let mut plan = vec![1.0f32; nodes];
    let gmm1 = exp.space.families[2].first;
    plan[gmm1 as usize] = 0.0;
    plan[gmm1 as usize + 1] = 0.5;
    let planned = node_costs(&exp, &cost.clone().with_expected_activity(plan));
    assert_eq!(planned[gmm1 as usize], overhead);
    let half = overhead + ((full[gmm1 as usize + 1] - overhead) as f64 * 0.5).round() as u64;
    assert_eq!(planned[gmm1 as usize + 1], half);
    assert_eq!(planned[gmm1 as usize + 2..], full[gmm1 as usize + 2..]);
}
