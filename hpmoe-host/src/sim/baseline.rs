//! The kernel-by-kernel baseline: the same tile instances, run the way frameworks run
//! MoE-FFN today — one whole-device kernel per step, each waiting for the previous one on
//! every core of every rank.
//!
//! Derived from the taskflow, for any taskflow:
//!
//! - **Steps.** One kernel per tile family, in a topological order of the family graph
//!   (family A before B if an instance of B depends on one of A), ties in declaration
//!   order. For the MoE layer: dispatch, GMM1, SwiGLU, GMM2, combine, weighted sum. A
//!   family graph with a cycle cannot run as a sequence of kernels and is refused.
//! - **Inside a kernel.** Every rank runs the family's instances on all cores of the
//!   family's kind, dealt round-robin in a topological order of the instances (instance
//!   order when they do not depend on each other), so a kernel of `n` equal tiles on `c`
//!   cores takes `ceil(n / c)` *waves* — wave quantisation. A put kernel (an all-to-all)
//!   deals its puts in *rounds*, each round one block to every rank in *rotation* order,
//!   rank `r` to `r, r+1, r+2, …`, as all-to-all libraries spread their traffic over the
//!   destinations: dealt in instance order, every rank would put into rank 0 first, then
//!   rank 1, …, and the puts would queue at one rank's ejection; dealt by destination alone,
//!   a rank would send to its own server first and to the others only later, one tier of the
//!   network idle at a time. Puts share the network as in the taskflow simulation.
//!   Dependencies inside a kernel wait on counters as in the taskflow.
//!
//! An all-to-all kernel of this baseline is exactly what [`super::all_to_all_bandwidth`]
//! measures: one model of the network serves both.
//! - **Between kernels.** Each kernel starts `kernel_launch_ns` after the previous one ended
//!   on every rank (launch and inter-kernel synchronisation); a kernel that puts to other
//!   ranks (an all-to-all) also waits `host_collective_sync_ns` for the host-driven
//!   collective's synchronisation. Both are guesses the sensitivity study sweeps.

use super::engine::{Timing, run};
use super::program::{Program, SimCounterId, Task, TaskId, check_families, lower_node, node_hbm_bytes};
use super::{SimError, SimResult};
use hpmoe_core::cost::TaskflowCost;
use hpmoe_core::expand::Expanded;
use hpmoe_core::graph::Csr;
use hpmoe_core::ids::{FamilyId, IdVec, NodeId, RankId};
use hpmoe_core::model::{CoreKind, MachineProfile};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// One kernel of the baseline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BaselineKernel {
    /// Family index (declaration order).
    pub family: usize,
    /// The core kind the kernel runs on (its family's).
    pub core: CoreKind,
    /// Tile instances the kernel runs on each rank.
    pub instances_per_rank: u32,
    /// `ceil(instances_per_rank / cores of the kind)`.
    pub waves: u32,
    /// Whether it puts to other ranks (and so pays the host collective synchronisation).
    pub collective: bool,
    /// Launch overhead charged before the kernel, ns.
    pub launch_ns: u64,
    /// Host synchronisation charged before it (the collective's barrier, for a kernel that puts
    /// to other ranks; 0 otherwise), ns.
    pub host_sync_ns: u64,
    /// When its tiles could start (after the launch and the synchronisation), ns.
    pub start_ns: u64,
    /// When its last tile (or put) finished, ns.
    pub end_ns: u64,
}

/// The baseline's run: kernels in order, and the stitched simulation of all of them
/// (`result.makespan_ns` is the baseline's Dispatch-to-Combine latency).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Baseline {
    /// The kernels, one per family, in declaration order.
    pub kernels: Vec<BaselineKernel>,
    /// The stitched simulation of all of them on every rank.
    pub result: SimResult,
}

impl Baseline {
    /// Time spent in launch overheads and host synchronisation, ns.
    pub fn overhead_ns(&self) -> u64 {
        self.kernels.iter().map(|k| k.launch_ns + k.host_sync_ns).sum()
    }
}

/// Simulates `exp` kernel by kernel on `profile` under `cost`. See the [module docs](self).
///
/// # Errors
/// [`SimError::FamilyCycle`] if the families cannot be ordered, [`SimError::Mismatch`] if
/// `cost` was built for another taskflow or `profile` has another number of ranks.
pub fn kernel_by_kernel(exp: &Expanded, profile: &MachineProfile, cost: &TaskflowCost) -> Result<Baseline, SimError> {
    check_families(exp, cost)?;
    if profile.ranks != exp.space.ranks {
        return Err(SimError::Mismatch(super::Mismatch::Ranks { profile: profile.ranks, taskflow: exp.space.ranks }));
    }
    let p = cost.profile();
    let timing = Timing::of(p);
    let order = family_order(exp)?;
    let mut result = SimResult::empty(profile.ranks, profile.cores_per_rank(), profile.aic_per_rank, exp.nodes());
    let mut kernels = Vec::with_capacity(order.len());
    let mut clock = 0u64;
    for family in order {
        let span = &exp.space.families[family];
        let core = exp.family_core[family];
        let collective = cost.family(family).put.is_some() && profile.ranks > 1;
        let launch_ns = p.kernel_launch();
        let host_sync_ns = if collective { p.host_collective_sync() } else { 0 };
        let start_ns = clock.saturating_add(launch_ns).saturating_add(host_sync_ns);
        let program = kernel_program(exp, profile, cost, family);
        let run = run(&program, timing)?;
        result.absorb(&program, &run, start_ns);
        let end_ns = result.makespan_ns.max(start_ns);
        result.makespan_ns = end_ns;
        let cores = profile.count_of(core).max(1);
        kernels.push(BaselineKernel {
            family,
            core,
            instances_per_rank: span.count,
            waves: span.count.div_ceil(cores),
            collective,
            launch_ns,
            host_sync_ns,
            start_ns,
            end_ns,
        });
        clock = end_ns;
    }
    result.finish(p.poll_ns());
    Ok(Baseline { kernels, result })
}

/// Families in a topological order of the family graph, ties by declaration order.
fn family_order(exp: &Expanded) -> Result<Vec<usize>, SimError> {
    let families = exp.family_core.len();
    let mut pairs = Vec::new();
    for (u, v) in exp.dag.succ.pairs() {
        let (fu, fv) = (exp.space.family_of(u), exp.space.family_of(v));
        if fu != fv {
            pairs.push((FamilyId::from_index(fu), FamilyId::from_index(fv)));
        }
    }
    let graph = Csr::from_pairs(families, &pairs);
    let mut indegree: IdVec<FamilyId, u32> = IdVec::filled(families, 0);
    for (_, v) in graph.pairs() {
        indegree[v] += 1;
    }
    let mut ready: BinaryHeap<Reverse<FamilyId>> =
        indegree.iter().filter(|&(_, &d)| d == 0).map(|(f, _)| Reverse(f)).collect();
    let mut order = Vec::with_capacity(families);
    while let Some(Reverse(f)) = ready.pop() {
        order.push(f.index());
        for &g in graph.row(f) {
            indegree[g] -= 1;
            if indegree[g] == 0 {
                ready.push(Reverse(g));
            }
        }
    }
    if order.len() < families {
        let stuck = indegree.iter().filter(|&(_, &d)| d > 0).map(|(f, _)| f.index()).collect();
        return Err(SimError::FamilyCycle(stuck));
    }
    Ok(order)
}

/// Per task (a position in `nodes`): how many earlier tasks of its rank put to the same
/// destination, its *round* (0 for tasks that do not put).
fn put_rounds(exp: &Expanded, nodes: &[NodeId]) -> Vec<u32> {
    let mut seen: std::collections::BTreeMap<(RankId, u32), u32> = std::collections::BTreeMap::new();
    nodes
        .iter()
        .map(|&v| {
            let k = seen.entry((exp.space.rank_of(v), exp.rotation[v])).or_insert(0);
            *k += 1;
            *k - 1
        })
        .collect()
}

/// The program of one kernel: family `family`'s instances on every rank, dealt
/// round-robin over the cores of its kind in a topological order of the kernel's own edges.
fn kernel_program(exp: &Expanded, profile: &MachineProfile, cost: &TaskflowCost, family: usize) -> Program {
    let span = &exp.space.families[family];
    let ranks = exp.space.ranks;
    let nodes: Vec<NodeId> =
        (0..ranks).flat_map(|r| (0..span.count).map(move |i| exp.space.node(RankId::new(r), span.first + i))).collect();
    // Task ids: position in `nodes`.
    let task_of = |v: NodeId| -> Option<u32> {
        let (r, local) = (exp.space.rank_of(v).raw(), exp.space.local_of(v));
        (exp.space.family_of(v) == family).then(|| r * span.count + (local - span.first))
    };
    let tasks_n = nodes.len();
    let mut indegree = vec![0u32; tasks_n];
    for &v in &nodes {
        for &s in exp.dag.succ.row(v) {
            if let Some(t) = task_of(s) {
                indegree[t as usize] += 1;
            }
        }
    }
    // Kahn, smallest (round, rotation, task id) first: instance order when there are no
    // inner edges; puts in rounds, each round one put to every destination in rotation order
    // (the rotation and the round are 0 for anything but a put).
    let round = put_rounds(exp, &nodes);
    let key = |t: u32| Reverse((round[t as usize], exp.rotation[nodes[t as usize]], t));
    let mut ready: BinaryHeap<Reverse<(u32, u32, u32)>> =
        (0..tasks_n as u32).filter(|&t| indegree[t as usize] == 0).map(key).collect();
    let kind = exp.family_core[family];
    let local_cores = profile.cores_of(kind);
    let count = local_cores.len() as u32;
    let mut dealt = vec![0u32; ranks as usize];
    let mut core_of = vec![0u32; tasks_n];
    let mut queue_rows: Vec<Vec<TaskId>> = vec![Vec::new(); profile.total_cores() as usize];
    while let Some(Reverse((_, _, t))) = ready.pop() {
        let v = nodes[t as usize];
        let rank = exp.space.rank_of(v).raw();
        let k = &mut dealt[rank as usize];
        let core = rank * profile.cores_per_rank() + local_cores.start + *k % count.max(1);
        *k += 1;
        core_of[t as usize] = core;
        queue_rows[core as usize].push(TaskId::new(t));
        for &s in exp.dag.succ.row(v) {
            if let Some(u) = task_of(s) {
                indegree[u as usize] -= 1;
                if indegree[u as usize] == 0 {
                    ready.push(key(u));
                }
            }
        }
    }
    // One counter per task with inner predecessors on other cores; each such predecessor
    // signals it once.
    let mut counter_rank: IdVec<SimCounterId, RankId> = IdVec::new();
    let mut signal_rows: Vec<Vec<SimCounterId>> = vec![Vec::new(); tasks_n];
    let mut tasks: IdVec<TaskId, Task> = IdVec::with_capacity(tasks_n);
    for (t, &v) in nodes.iter().enumerate() {
        let preds: Vec<u32> = exp
            .dag
            .pred
            .row(v)
            .iter()
            .filter_map(|&u| task_of(u))
            .filter(|&u| core_of[u as usize] != core_of[t])
            .collect();
        let wait = (!preds.is_empty()).then(|| {
            let counter = counter_rank.push(exp.space.rank_of(v));
            for &u in &preds {
                signal_rows[u as usize].push(counter);
            }
            (counter, preds.len() as u32)
        });
        let (exec_ns, link, computes) = lower_node(exp, cost, v);
        let (rank, hbm_bytes) = (exp.space.rank_of(v), node_hbm_bytes(exp, cost, v));
        let family = FamilyId::from_index(family);
        tasks.push(Task { node: v, family, rank, wait, exec_ns, link, computes, hbm_bytes });
    }
    Program {
        ranks,
        cores_per_rank: profile.cores_per_rank(),
        aic_per_rank: profile.aic_per_rank,
        queues: Csr::from_rows(queue_rows),
        tasks,
        signals: Csr::from_rows(signal_rows),
        counter_rank,
    }
}
