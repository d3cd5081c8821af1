//! Receiver pacing (`Compiled::pacing`): the dependencies the schedule adds between puts of
//! different ranks into one receiver, from its own server or another. They hold in the plan,
//! join the table, and the table still certifies against the taskflow's own dependencies.

use hpmoe_core::certify::{FlagSync, certify, certify_compiled, verify};
use hpmoe_core::cost::{CostProfile, TaskflowCost};
use hpmoe_host::moe::MoeShape;
use hpmoe_host::sim;
use std::collections::HashSet;

#[test]
fn puts_into_one_receiver_are_paced_in_the_plans_order_across_servers_too_and_the_table_certifies() {
    // 32 ranks on two servers of 16 dies, in-step lanes (balanced routing): the A3 profile.
    let tf = MoeShape::deepseek_v3(32, 256).taskflow().unwrap();
    let cost = TaskflowCost::new(&tf, CostProfile::ascend_a3_die());
    let options = hpmoe_core::CompileOptions::default();
    let compiled = hpmoe_core::compile_with(&tf, &cost, &options).unwrap();
    let (exp, placement) = (&compiled.expanded, &compiled.placement);
    assert!(!compiled.pacing.is_empty(), "a layer whose lanes go by round gets pacing");
    let ranks = exp.space.ranks;
    let receiver = |v: hpmoe_core::ids::NodeId| (exp.space.rank_of(v).raw() + exp.rotation[v]) % ranks;
    let mut paced = HashSet::new();
    let mut across = 0;
    for &(u, v) in &compiled.pacing {
        let (from_u, from_v) = (exp.space.rank_of(u).raw(), exp.space.rank_of(v).raw());
        // Two puts of different ranks into one receiver.
        assert_ne!(from_u, from_v);
        assert_eq!(receiver(u), receiver(v));
        assert!(exp.rotation[u] != 0 && exp.rotation[v] != 0);
        across += usize::from(from_u / 16 != receiver(u) / 16 || from_v / 16 != receiver(v) / 16);
        // Already true of the plan: `u` ends before `v` starts.
        assert!(placement.finish_ns[u] <= placement.start_ns[v] && placement.start_ns[u] < placement.start_ns[v]);
        // Not a dependency the taskflow has, and one per paced put.
        assert!(!exp.dag.succ.row(u).contains(&v));
        assert!(paced.insert(v.index()), "one pacing dependency per put");
    }
    // Puts from the other server are paced too (since stop 38: README, "Receivers paced").
    assert!(across > 0, "no pacing dependency involves a put from another server");
    // The table enforces the taskflow's dependencies (expanded again from the taskflow, without
    // the pacing ones) and runs to the end.
    let again = certify(&tf, &compiled.table, Some(&compiled.flags)).unwrap();
    assert_eq!(again.dependencies, exp.dag.edges() as u64);
    certify_compiled(&tf, &compiled).unwrap();
    // And it enforces the pacing dependencies too: certified against the DAG with them added.
    let mut pairs: Vec<_> =
        exp.space.node_ids().flat_map(|u| exp.dag.succ.row(u).iter().map(move |&v| (u, v))).collect();
    pairs.extend_from_slice(&compiled.pacing);
    let paced =
        hpmoe_core::expand::Expanded { dag: hpmoe_core::graph::Dag::from_pairs(exp.nodes(), &pairs), ..exp.clone() };
    let cert = verify(&tf, &paced, compiled.table.view(), Some(FlagSync::from(&compiled.flags))).unwrap();
    assert_eq!(cert.dependencies, (exp.dag.edges() + compiled.pacing.len()) as u64);
    let run = sim::simulate(&compiled, &cost).unwrap();
    let bound = sim::lower_bound(&compiled.expanded, &tf.profile, &cost).unwrap();
    assert!(run.makespan_ns >= bound.ns());
    // The same taskflow plans to the same table.
    let twice = hpmoe_core::compile_with(&tf, &cost, &options).unwrap();
    assert_eq!((twice.table.checksum(), &twice.pacing), (compiled.table.checksum(), &compiled.pacing));
}

#[test]
fn one_server_and_no_link_get_no_pacing() {
    // Two ranks: each receiver hears from one sender only.
    let tf = MoeShape::tiny(2).taskflow().unwrap();
    assert!(hpmoe_core::plan(&tf).unwrap().pacing.is_empty());
    // No shared link in the cost model: no lanes, no rounds, no pacing.
    let tf = MoeShape::deepseek_v3(16, 256).taskflow().unwrap();
    let compiled = hpmoe_core::compile(&tf, &hpmoe_core::schedule::SimpleCost::default()).unwrap();
    assert!(compiled.pacing.is_empty());
}
