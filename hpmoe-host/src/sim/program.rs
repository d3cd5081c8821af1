//! What the event engine runs: per-core lists of tasks with their waits, signals and costs.
//!
//! Built from a schedule table ([`Program::from_compiled`]) or by the kernel-by-kernel
//! baseline, one program per kernel.

use super::SimError;
use hpmoe_core::Compiled;
use hpmoe_core::cost::TaskflowCost;
use hpmoe_core::expand::Expanded;
use hpmoe_core::graph::Csr;
use hpmoe_core::ids::{CoreId, FamilyId, IdVec, NodeId, RankId};

hpmoe_core::define_id! {
    /// A task of a [`Program`]: for a compiled taskflow its node id, for the baseline its
    /// place in kernel order.
    pub(crate) struct TaskId;
}

hpmoe_core::define_id! {
    /// A counter of a simulated program, numbered across all ranks (rank 0's first); unlike a
    /// [`hpmoe_core::ids::CounterId`], which numbers one rank's counters.
    pub struct SimCounterId;
}

/// The link part of a task: bytes from its rank to rank `to` through the network, at most
/// `cap` bytes/s.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LinkUse {
    pub bytes: u64,
    pub cap: u64,
    pub to: RankId,
}

/// One tile instance as the engine sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Task {
    /// Node id in the expanded taskflow.
    pub node: NodeId,
    pub family: FamilyId,
    pub rank: RankId,
    /// The counter and the value to wait for.
    pub wait: Option<(SimCounterId, u32)>,
    /// Core time before the link part (overhead, roofline, a local put's copy).
    pub exec_ns: u64,
    pub link: Option<LinkUse>,
    /// Whether the exec part is computation (not only a put's overhead).
    pub computes: bool,
    /// Bytes the exec part moves through the die's HBM.
    pub hbm_bytes: u64,
}

/// Per-core task lists with their synchronisation.
#[derive(Clone, Debug)]
pub(crate) struct Program {
    pub ranks: u32,
    pub cores_per_rank: u32,
    pub aic_per_rank: u32,
    /// Row `c`: the tasks global core `c` runs, in order.
    pub queues: Csr<CoreId, TaskId>,
    pub tasks: IdVec<TaskId, Task>,
    /// Row `t`: the counters task `t` adds 1 to when it finishes.
    pub signals: Csr<TaskId, SimCounterId>,
    /// Per counter: the rank it lives on.
    pub counter_rank: IdVec<SimCounterId, RankId>,
}

/// The cost of node `node` as a task: exec time, link use, whether it computes.
///
/// A put (a family with remote bytes) whose destination is its own rank (rotation 0)
/// copies locally at its stream rate and leaves the link alone. A tile with several puts is
/// judged by its first put's destination ([`Expanded::rotation`]): all its remote bytes go
/// through the link, or none. An instance the cost's activity skips costs its overhead; one it
/// gives a share below 1 (a slot sum's) its overhead plus that share of the rest.
pub(crate) fn lower_node(exp: &Expanded, cost: &TaskflowCost, node: NodeId) -> (u64, Option<LinkUse>, bool) {
    let family = exp.space.family_of(node);
    let c = cost.family(family);
    let overhead = cost.profile().tile_overhead();
    if cost.skips(node) {
        // A guarded instance past its run-time count: reads its count, skips the body.
        return (overhead, None, false);
    }
    // A put's setup is core time before its bytes, not computation.
    let bare = overhead.saturating_add(cost.profile().put_setup());
    // A slot sum's instance does the share of its body its counts leave it.
    let share = f64::from(cost.share(node));
    let exec_ns =
        if share < 1.0 { overhead + (c.exec_ns.saturating_sub(overhead) as f64 * share) as u64 } else { c.exec_ns };
    match c.put {
        None => (exec_ns, None, true),
        Some(put) if exp.rotation[node] == 0 => (c.exec_ns.saturating_add(put.local_ns()), None, c.computes(bare)),
        Some(put) => {
            let to = exp.destination(node);
            (c.exec_ns, Some(LinkUse { bytes: put.bytes, cap: put.stream_bytes_per_s, to }), c.computes(bare))
        }
    }
}

/// HBM bytes of node `node`'s exec part ([`hpmoe_core::cost::FamilyCost::hbm_bytes`]; none for an
/// instance the cost's activity skips, its share for a slot sum's).
pub(crate) fn node_hbm_bytes(exp: &Expanded, cost: &TaskflowCost, node: NodeId) -> u64 {
    if cost.skips(node) {
        return 0;
    }
    let bytes = cost.family(exp.space.family_of(node)).hbm_bytes;
    let share = f64::from(cost.share(node));
    if share < 1.0 { (bytes as f64 * share) as u64 } else { bytes }
}

/// Checks that `cost` was built for a taskflow with the families of `exp`.
pub(crate) fn check_families(exp: &Expanded, cost: &TaskflowCost) -> Result<(), SimError> {
    let costs = cost.family_costs();
    let same = costs.len() == exp.family_core.len() && costs.iter().zip(&exp.family_core).all(|(c, &k)| c.core == k);
    if let Some(a) = cost.activity()
        && a.nodes() != exp.nodes()
    {
        return Err(SimError::Mismatch(super::Mismatch::ActivityNodes { activity: a.nodes(), taskflow: exp.nodes() }));
    }
    if same {
        Ok(())
    } else {
        Err(SimError::Mismatch(super::Mismatch::Families { cost: costs.len(), taskflow: exp.family_core.len() }))
    }
}

impl Program {
    /// The counters task `task` signals, in order.
    pub(crate) fn signals_of(&self, task: TaskId) -> impl Iterator<Item = SimCounterId> + '_ {
        self.signals.row(task).iter().copied()
    }

    /// The schedule of `compiled`: its per-core lists, with every kept dependency's wait and
    /// signals from its counter plan (`compiled.sync`, the table's counters before the hardware
    /// flag takes some dependencies off them: the simulator prices a flag-carried dependency like
    /// a counter), and each instance's cost under `cost`. Task ids are node ids.
    pub(crate) fn from_compiled(compiled: &Compiled, cost: &TaskflowCost) -> Result<Program, SimError> {
        let exp = &compiled.expanded;
        check_families(exp, cost)?;
        let h = compiled.table.header();
        let sync = &compiled.sync;
        let mut counter_base = Vec::with_capacity(h.ranks as usize);
        let mut counter_rank = IdVec::new();
        for (rank, &n) in sync.counters_per_rank.iter() {
            counter_base.push(counter_rank.len() as u32);
            for _ in 0..n {
                counter_rank.push(rank);
            }
        }
        let nodes = exp.nodes();
        let mut tasks: IdVec<TaskId, Option<Task>> = IdVec::filled(nodes, None);
        let mut signal_rows: IdVec<TaskId, Vec<SimCounterId>> = IdVec::filled(nodes, Vec::new());
        let mut queue_rows: Vec<Vec<TaskId>> = Vec::with_capacity(compiled.placement.queues.nodes());
        for core in compiled.placement.queues.row_ids() {
            let rank = core.raw() / h.cores_per_rank.max(1);
            let mut row = Vec::new();
            for &id in compiled.placement.queues.row(core) {
                let (exec_ns, link, computes) = lower_node(exp, cost, id);
                let node = TaskId::new(id.raw());
                let wait = sync.waits[id]
                    .map(|w| (SimCounterId::new(counter_base[rank as usize] + w.counter.raw()), w.target));
                let family = FamilyId::from_index(exp.space.family_of(id));
                let hbm_bytes = node_hbm_bytes(exp, cost, id);
                tasks[node] =
                    Some(Task { node: id, family, rank: RankId::new(rank), wait, exec_ns, link, computes, hbm_bytes });
                signal_rows[node] = sync
                    .signals(id)
                    .iter()
                    .map(|s| SimCounterId::new(counter_base[s.rank.index()] + s.counter.raw()))
                    .collect();
                row.push(node);
            }
            queue_rows.push(row);
        }
        let tasks = tasks
            .into_vec()
            .into_iter()
            .enumerate()
            .map(|(n, t)| t.ok_or(SimError::Mismatch(super::Mismatch::Unplaced(NodeId::from_index(n)))))
            .collect::<Result<IdVec<_, _>, _>>()?;
        Ok(Program {
            ranks: h.ranks,
            cores_per_rank: h.cores_per_rank,
            aic_per_rank: h.aic_per_rank,
            queues: Csr::from_rows(queue_rows),
            tasks,
            signals: Csr::from_rows(signal_rows.into_vec()),
            counter_rank,
        })
    }
}
