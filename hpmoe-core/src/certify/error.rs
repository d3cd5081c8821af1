//! Why a table is not certified, as data: the kind of fault, the nodes it involves, and what
//! was found, with the instances named (family, grid coordinates, rank) as the message shows
//! them.

use super::FLAG_CAPACITY;
use crate::Diagnostics;
use crate::ids::{CoreId, CounterId, NodeId, RankId};
use crate::limits::MAX_TASKS_PER_CORE;
use crate::model::{CoreKind, SourceMap};
use crate::schedule::flags::FlagPlanError;
use crate::table::TableError;
use std::fmt;

/// What kind of fault [`verify`](super::verify) found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CertFault {
    /// The table is for another machine or another instance space.
    Shape,
    /// An instance is on no core, on two, or on a core of the wrong kind, or an entry names
    /// no instance.
    Placement,
    /// A wait's target differs from the number of signals that can reach its counter.
    Target,
    /// A flag set or wait is on the wrong kind of core, or a wait has no matching set, or a
    /// set could overflow the flag.
    Flag,
    /// The entries wait for each other in a ring: the table deadlocks.
    Cycle,
    /// A dependency of the taskflow is not enforced by the table.
    Unenforced,
    /// The taskflow does not pass its checks, so it has no instance DAG to certify against
    /// (from [`certify`](super::certify) and [`certify_blobs`](super::certify_blobs)).
    Taskflow,
    /// The table or flag-plan blob does not decode (from [`certify_blobs`](super::certify_blobs)).
    Decode,
}

/// Why a table is not certified: the kind of fault, the nodes it involves (for
/// [`CertFault::Unenforced`] the producer then the consumer, for [`CertFault::Cycle`] the ring
/// in order) and what was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CertError {
    /// What kind of fault (the kind of [`detail`](Self::detail)).
    pub fault: CertFault,
    /// The nodes involved, possibly none.
    pub nodes: Vec<NodeId>,
    /// What was found (boxed: the error stays small on the success path).
    pub detail: Box<CertDetail>,
}

impl CertError {
    /// The error of `detail`, involving `nodes`.
    pub(super) fn new(nodes: Vec<NodeId>, detail: CertDetail) -> Self {
        CertError { fault: detail.fault(), nodes, detail: Box::new(detail) }
    }
}

/// A node of the table where an error places it: its instance's name
/// (`gmm1(e=0, m=1) on rank 1`), its core and its position in the core's list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placed {
    /// The instance.
    pub name: String,
    /// Its core.
    pub core: CoreId,
    /// Its entry in the core's list.
    pub entry: u32,
}

/// A tile family as the table or the taskflow has it ([`CertDetail::Family`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FamilyRecord {
    /// Its name.
    pub name: String,
    /// Its core kind (`None`: an unknown code in the table).
    pub kind: Option<CoreKind>,
    /// Its grid.
    pub grid: Vec<u32>,
    /// Its first instance id.
    pub first: u32,
    /// Its instances.
    pub count: u32,
}

/// The machine and instance space: (ranks, AIC per rank, AIV per AIC, cores per rank,
/// instances per rank).
pub type Machine = (u32, u32, u32, u32, u32);

/// What [`verify`](super::verify) found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CertDetail {
    /// The machine or instance space differs.
    Machine {
        /// The table's.
        table: Machine,
        /// The taskflow's.
        taskflow: Machine,
    },
    /// The table has another number of cores.
    Cores {
        /// The table's.
        table: usize,
        /// The taskflow's machine's.
        taskflow: u32,
    },
    /// The table has another number of tile families.
    Families {
        /// The table's.
        table: usize,
        /// The taskflow's.
        taskflow: usize,
    },
    /// A tile family differs.
    Family {
        /// Its index.
        index: usize,
        /// The table's.
        table: FamilyRecord,
        /// The taskflow's.
        taskflow: FamilyRecord,
    },
    /// A core's entries lie outside the table.
    EntriesOutside {
        /// The core.
        core: CoreId,
    },
    /// A core has more entries than a core list may hold.
    TooManyEntries {
        /// The core.
        core: CoreId,
        /// Its entries.
        entries: usize,
    },
    /// A core runs an instance id past the instances of a rank.
    NoSuchInstance {
        /// The core.
        core: CoreId,
        /// The instance id.
        instance: u32,
    },
    /// An instance is on two cores.
    TwoCores {
        /// The instance.
        node: String,
        /// The core listed first.
        first: CoreId,
        /// The other.
        second: CoreId,
    },
    /// An instance is on a core of the other kind.
    WrongKind {
        /// The instance.
        node: String,
        /// The core.
        core: CoreId,
    },
    /// An instance's signals lie outside the table.
    SignalsOutside {
        /// The instance.
        node: String,
    },
    /// An instance is on no core.
    NoCore {
        /// The instance.
        node: String,
    },
    /// A wait's target is not the number of signals that can reach its counter.
    Target {
        /// The waiting instance.
        node: String,
        /// The counter.
        counter: CounterId,
        /// Its rank.
        rank: RankId,
        /// The wait's target.
        target: u32,
        /// Signals that can reach the counter.
        sent: u32,
    },
    /// The flag plan covers another number of nodes.
    FlagPlanNodes {
        /// The nodes of the taskflow.
        nodes: usize,
    },
    /// An instance sets or waits on a flag on the wrong kind of core.
    FlagWrongKind {
        /// The instance.
        node: String,
    },
    /// An AIV waits for a flag set its AIC never makes.
    FlagSetMissing {
        /// The waiting instance.
        node: String,
        /// The set it waits for (1-based).
        set: usize,
        /// The sets its AIC makes.
        sets: usize,
    },
    /// A flag set beyond [`FLAG_CAPACITY`] with no AIV wait to take an earlier one.
    FlagNoWait {
        /// The setting instance.
        setter: String,
        /// Its set (1-based).
        set: usize,
        /// The AIV.
        aiv: CoreId,
        /// The waits in the AIV's list.
        waits: usize,
    },
    /// A flag set that may come before the AIV wait that makes room for it.
    FlagOverrun {
        /// The setting instance.
        setter: String,
        /// The wait that must come first.
        waiter: String,
    },
    /// The entries wait for each other in a ring.
    Cycle {
        /// The ring's instances, in run order, the first repeated at the end.
        ring: Vec<String>,
    },
    /// A dependency the table does not enforce.
    Unenforced {
        /// The producer.
        producer: Placed,
        /// The consumer.
        consumer: Placed,
    },
    /// The taskflow fails its checks.
    Taskflow {
        /// Its name.
        taskflow: String,
        /// The checks' errors.
        diagnostics: Diagnostics,
        /// Its source map.
        sources: SourceMap,
    },
    /// The schedule-table blob does not decode.
    TableBlob(TableError),
    /// The flag-plan blob does not decode.
    FlagBlob(FlagPlanError),
}

impl CertDetail {
    /// The kind of fault.
    pub fn fault(&self) -> CertFault {
        use CertDetail as D;
        match self {
            D::Machine { .. } | D::Cores { .. } | D::Families { .. } | D::Family { .. } => CertFault::Shape,
            D::EntriesOutside { .. }
            | D::TooManyEntries { .. }
            | D::NoSuchInstance { .. }
            | D::TwoCores { .. }
            | D::WrongKind { .. }
            | D::SignalsOutside { .. }
            | D::NoCore { .. } => CertFault::Placement,
            D::Target { .. } => CertFault::Target,
            D::FlagPlanNodes { .. }
            | D::FlagWrongKind { .. }
            | D::FlagSetMissing { .. }
            | D::FlagNoWait { .. }
            | D::FlagOverrun { .. } => CertFault::Flag,
            D::Cycle { .. } => CertFault::Cycle,
            D::Unenforced { .. } => CertFault::Unenforced,
            D::Taskflow { .. } => CertFault::Taskflow,
            D::TableBlob(_) | D::FlagBlob(_) => CertFault::Decode,
        }
    }
}

impl fmt::Display for FamilyRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = self.kind.map_or_else(|| "unknown core kind".to_string(), |k| format!("{k:?}"));
        write!(f, "`{}` ({kind}, grid {:?}, instances {}..+{})", self.name, self.grid, self.first, self.count)
    }
}

impl fmt::Display for CertDetail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use CertDetail as D;
        match self {
            D::Machine { table, taskflow } => write!(
                f,
                "the table has (ranks, AIC per rank, AIV per AIC, cores per rank, instances per rank) {table:?}, the taskflow {taskflow:?}"
            ),
            D::Cores { table, taskflow } => write!(f, "the table has {table} cores, not {taskflow}"),
            D::Families { table, taskflow } => {
                write!(f, "the table has {table} tile families, the taskflow {taskflow}")
            }
            D::Family { index, table, taskflow } => {
                write!(f, "family {index} is {table} in the table, {taskflow} in the taskflow")
            }
            D::EntriesOutside { core } => write!(f, "core {core}'s entries lie outside the table"),
            D::TooManyEntries { core, entries } => {
                write!(f, "core {core} has {entries} entries, more than {MAX_TASKS_PER_CORE}")
            }
            D::NoSuchInstance { core, instance } => {
                write!(f, "core {core} runs instance {instance}, which does not exist")
            }
            D::TwoCores { node, first, second } => write!(f, "{node} is on core {first} and on core {second}"),
            D::WrongKind { node, core } => write!(f, "{node} runs on core {core}, a core of the other kind"),
            D::SignalsOutside { node } => write!(f, "{node}'s signals lie outside the table"),
            D::NoCore { node } => write!(f, "{node} is on no core"),
            D::Target { node, counter, rank, target, sent } => write!(
                f,
                "{node} waits for counter {counter} of rank {rank} to reach {target}, but {sent} signals can reach it{}",
                if target < sent { " (the wait can pass early)" } else { " (the wait never passes)" }
            ),
            D::FlagPlanNodes { nodes } => write!(f, "the flag plan is not for {nodes} nodes"),
            D::FlagWrongKind { node } => write!(f, "{node} sets or waits on a flag on the wrong kind of core"),
            D::FlagSetMissing { node, set, sets } => {
                write!(f, "{node} waits for flag set {set}, but its AIC sets {sets}")
            }
            D::FlagNoWait { setter, set, aiv, waits } => write!(
                f,
                "{setter} is flag set {set} of its AIC, but core {aiv} waits only {waits} times in its list, so more than {FLAG_CAPACITY} sets can be pending"
            ),
            D::FlagOverrun { setter, waiter } => write!(
                f,
                "{setter} sets the flag before {waiter} has taken an earlier set, so more than {FLAG_CAPACITY} sets can be pending"
            ),
            D::Cycle { ring } => {
                write!(f, "the entries wait for each other in a ring (deadlock): {}", ring.join(" -> "))
            }
            D::Unenforced { producer: u, consumer: v } => write!(
                f,
                "{} must finish before {} starts, but nothing in the table orders them ({} is entry {} of core {}, {} entry {} of core {})",
                u.name, v.name, u.name, u.entry, u.core, v.name, v.entry, v.core
            ),
            D::Taskflow { taskflow, diagnostics, sources } => {
                write!(f, "taskflow `{taskflow}` does not pass its checks:\n{}", diagnostics.render(sources))
            }
            D::TableBlob(e) => write!(f, "the schedule table blob does not decode: {e}"),
            D::FlagBlob(e) => write!(f, "the flag plan blob does not decode: {e}"),
        }
    }
}

impl fmt::Display for CertError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "schedule table not certified: {}", self.detail)
    }
}

impl std::error::Error for CertError {}
