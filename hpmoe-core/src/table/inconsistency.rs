//! How a table's records contradict each other ([`TableError::Inconsistent`]) or a JSON
//! document's redundant fields contradict its table ([`TableError::Json`]), as data: the record,
//! the values found and the values expected.

use super::TableError;
use crate::model::CoreKind;
use std::fmt;
use std::sync::Arc;

/// Records that contradict each other.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Inconsistency {
    /// Building: an input the table is built from has another size than the others imply.
    InputSize {
        /// What (`ranks of the instance space`, `waits of the sync plan`, ...).
        what: &'static str,
        /// Its size.
        found: usize,
        /// The size the others imply.
        expected: usize,
    },
    /// Building: the sync plan's signal offsets are not a valid range list.
    SignalOffsets,
    /// Building: a node is queued on a core of another rank.
    NodeOffRank {
        /// The node (global id).
        node: u32,
        /// The core's name.
        core: String,
    },
    /// A name contains a NUL character.
    NulInName {
        /// The name.
        name: String,
    },
    /// An entry before any core.
    EntryBeforeCore,
    /// An instance waits on the counter id that means "no wait".
    WaitOnNoWait {
        /// The instance.
        instance: u32,
    },
    /// An instance signals a rank past any rank id.
    SignalRankTooLarge {
        /// The instance.
        instance: u32,
        /// The rank.
        rank: u32,
    },
    /// The names section holds fewer names than the families need.
    TooFewNames {
        /// Names needed (the table's and one per family).
        expected: u64,
    },
    /// The names section has bytes after the last name besides its padding.
    NamesTrailing,
    /// The names are not UTF-8.
    NamesNotUtf8 {
        /// Bytes up to the first invalid one.
        valid_up_to: usize,
    },
    /// The header's cores per rank is not its AIC and AIV counts'.
    CoresPerRank {
        /// The header's cores per rank.
        header: u32,
        /// AIC per rank.
        aic: u32,
        /// AIV per AIC.
        aiv: u32,
        /// The cores they make.
        cores: u64,
    },
    /// A section has another number of records than the header implies.
    SectionLength {
        /// The records (`families`, `cores`, ...).
        what: &'static str,
        /// Records the header implies.
        expected: u64,
        /// Records the table has.
        len: usize,
    },
    /// The names are not one NUL-terminated string per family plus the table's.
    NameCount {
        /// Names needed.
        expected: usize,
        /// NUL characters found.
        found: usize,
    },
    /// The header's largest counter count is not the ranks'.
    CounterMax {
        /// The header's.
        header: u32,
        /// The ranks' largest.
        max: u32,
    },
    /// A family record is wrong.
    Family {
        /// Its index.
        index: usize,
        /// Its name.
        name: String,
        /// What is wrong.
        problem: FamilyProblem,
    },
    /// The families cover another number of instances than the header's per rank.
    FamilyInstances {
        /// Instances the families cover.
        covered: u64,
        /// The header's instances per rank.
        header: u32,
    },
    /// A core's entries do not start where the previous core's end.
    CoreStart {
        /// The core.
        core: usize,
        /// Where they start.
        first: u32,
        /// Where they should.
        expected: u64,
    },
    /// The cores hold another number of entries than the table has.
    CoreEntries {
        /// Entries the cores hold.
        held: u64,
        /// Entries of the table.
        entries: usize,
    },
    /// The table has another number of entries than ranks × instances per rank.
    EntryCount {
        /// Entries of the table.
        entries: usize,
        /// Ranks.
        ranks: u32,
        /// Instances per rank.
        per_rank: u64,
    },
    /// An entry is wrong.
    Entry {
        /// Its core.
        core: u32,
        /// Its position in the core's list.
        pos: usize,
        /// What is wrong.
        problem: EntryProblem,
    },
    /// The entries send another number of signals than the table has.
    SignalTotal {
        /// Signals the entries send.
        sent: u64,
        /// Signals of the table.
        signals: usize,
    },
    /// A signal goes to a rank past the ranks.
    SignalRank {
        /// The signal.
        signal: usize,
        /// Its rank.
        rank: u16,
        /// The ranks.
        ranks: u32,
    },
    /// A signal goes to a counter past its rank's counters, or its reserved bits are set.
    SignalCounter {
        /// The signal.
        signal: usize,
        /// Its counter.
        counter: u32,
        /// Its rank.
        rank: u16,
        /// The rank's counters.
        counters: u32,
        /// Its reserved bits.
        reserved: u16,
    },
    /// A wait's target exceeds the signals that ever go to its counter.
    Unreachable {
        /// The waiting instance.
        instance: u32,
        /// Its core.
        core: u32,
        /// The counter.
        counter: u32,
        /// Its rank.
        rank: u32,
        /// The wait's target.
        target: u32,
        /// Signals that go to the counter.
        count: usize,
    },
}

/// What is wrong with a family record ([`Inconsistency::Family`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FamilyProblem {
    /// It does not start where the previous family ends.
    Start {
        /// Its first instance.
        first: u32,
        /// Where it should start.
        expected: u64,
    },
    /// Its core-kind code is unknown.
    CoreKind(u8),
    /// It has more grid dimensions than a family may.
    Dims {
        /// Its dimensions.
        dims: u8,
        /// The most allowed.
        max: usize,
    },
    /// Unused extents or reserved bytes are not 0.
    Padding,
    /// Its grid has another number of points than its instance count.
    GridPoints {
        /// The grid.
        grid: Vec<u32>,
        /// Its points.
        points: u64,
        /// The instance count.
        instances: u32,
    },
}

/// What is wrong with an entry ([`Inconsistency::Entry`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EntryProblem {
    /// Its instance is past the instances of a rank.
    NoSuchInstance {
        /// The instance.
        instance: u32,
        /// Instances per rank.
        per_rank: u64,
    },
    /// Its family needs another kind of core.
    WrongKind {
        /// The instance.
        instance: u32,
        /// Its family.
        family: usize,
        /// The kind the family needs (`None`: an unknown code).
        needs: Option<CoreKind>,
        /// The core's kind.
        core: CoreKind,
    },
    /// Its instance is listed twice on its rank.
    Twice {
        /// The instance.
        instance: u32,
        /// The rank.
        rank: u32,
    },
    /// It has no wait but a wait target.
    TargetWithoutWait,
    /// It waits on a counter past its rank's counters.
    Counter {
        /// The counter.
        counter: u32,
        /// The rank.
        rank: u32,
        /// The rank's counters.
        counters: u32,
    },
    /// Its signals do not start where the previous entry's end.
    SignalStart {
        /// Where they start.
        first: u32,
        /// Where they should.
        expected: u64,
    },
}

/// A JSON document that is not a schedule table ([`TableError::Json`]).
#[derive(Clone, Debug)]
pub enum JsonProblem {
    /// The text does not parse as a table document.
    Syntax(Arc<serde_json::Error>),
    /// `format` is not the table format's name.
    Format {
        /// The document's.
        found: String,
    },
    /// Another number of ranks is listed than the machine has.
    Ranks {
        /// Ranks listed.
        listed: usize,
        /// The machine's.
        machine: u32,
    },
    /// A rank is listed out of order or with another number of cores.
    Rank {
        /// Its position.
        index: usize,
        /// The rank it says it is.
        says: u32,
        /// Its cores.
        cores: usize,
        /// Cores per rank.
        expected: usize,
    },
    /// A family's instance range is not the one its position and grid give.
    FamilyRange {
        /// Its index.
        index: usize,
        /// Its name.
        name: String,
        /// The range it says (first, count).
        says: (u32, u32),
        /// The range it has.
        has: (u32, u32),
    },
    /// A core is listed under another name.
    CoreName {
        /// The core.
        core: u32,
        /// The name listed.
        listed: String,
        /// Its name.
        expected: String,
    },
    /// An entry's family or coordinates are not its instance's.
    Instance {
        /// The core's name.
        core: String,
        /// The instance.
        instance: u32,
        /// Its family's name and coordinates.
        has: (String, Vec<u32>),
        /// The document's (`?` and `[]` where absent).
        says: (String, Vec<u32>),
    },
}

/// Equal when the kind and data are; a syntax error by its message.
impl PartialEq for JsonProblem {
    fn eq(&self, other: &Self) -> bool {
        use JsonProblem as J;
        match (self, other) {
            (J::Syntax(a), J::Syntax(b)) => a.to_string() == b.to_string(),
            (J::Format { found: a }, J::Format { found: b }) => a == b,
            (J::Ranks { listed: a, machine: b }, J::Ranks { listed: c, machine: d }) => (a, b) == (c, d),
            (
                J::Rank { index: a, says: b, cores: c, expected: d },
                J::Rank { index: e, says: f, cores: g, expected: h },
            ) => (a, b, c, d) == (e, f, g, h),
            (
                J::FamilyRange { index: a, name: b, says: c, has: d },
                J::FamilyRange { index: e, name: f, says: g, has: h },
            ) => (a, b, c, d) == (e, f, g, h),
            (J::CoreName { core: a, listed: b, expected: c }, J::CoreName { core: d, listed: e, expected: f }) => {
                (a, b, c) == (d, e, f)
            }
            (
                J::Instance { core: a, instance: b, has: c, says: d },
                J::Instance { core: e, instance: f, has: g, says: h },
            ) => (a, b, c, d) == (e, f, g, h),
            _ => false,
        }
    }
}

impl Eq for JsonProblem {}

impl From<Inconsistency> for TableError {
    fn from(i: Inconsistency) -> Self {
        TableError::Inconsistent(Box::new(i))
    }
}

impl From<JsonProblem> for TableError {
    fn from(j: JsonProblem) -> Self {
        TableError::Json(Box::new(j))
    }
}

impl fmt::Display for FamilyProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FamilyProblem::Start { first, expected } => write!(f, "starts at instance {first}, expected {expected}"),
            FamilyProblem::CoreKind(code) => write!(f, "unknown core kind code {code}"),
            FamilyProblem::Dims { dims, max } => write!(f, "{dims} grid dimensions, at most {max} allowed"),
            FamilyProblem::Padding => f.write_str("unused extents and reserved bytes must be 0"),
            FamilyProblem::GridPoints { grid, points, instances } => {
                write!(f, "grid {grid:?} has {points} points but {instances} instances")
            }
        }
    }
}

impl fmt::Display for EntryProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EntryProblem::NoSuchInstance { instance, per_rank } => {
                write!(f, "instance {instance} is not below {per_rank}")
            }
            EntryProblem::WrongKind { instance, family, needs, core } => write!(
                f,
                "instance {instance} of family {family} needs core kind {}, the core is {core}",
                needs.map_or("?", |k| k.name())
            ),
            EntryProblem::Twice { instance, rank } => write!(f, "instance {instance} of rank {rank} is listed twice"),
            EntryProblem::TargetWithoutWait => f.write_str("no wait, but a wait target"),
            EntryProblem::Counter { counter, rank, counters } => {
                write!(f, "waits on counter {counter} but rank {rank} has {counters}")
            }
            EntryProblem::SignalStart { first, expected } => {
                write!(f, "signals start at {first}, expected {expected}")
            }
        }
    }
}

impl fmt::Display for Inconsistency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use Inconsistency as I;
        match self {
            I::InputSize { what, found, expected } => write!(f, "{what}: {found}, expected {expected}"),
            I::SignalOffsets => f.write_str("signal offsets of the sync plan are not a valid range list"),
            I::NodeOffRank { node, core } => {
                write!(f, "node {node} is queued on {core}, which is not on the node's rank")
            }
            I::NulInName { name } => write!(f, "name {name:?} contains a NUL character"),
            I::EntryBeforeCore => f.write_str("an entry before any core"),
            I::WaitOnNoWait { instance } => {
                write!(f, "instance {instance} waits on counter {}", super::NO_WAIT)
            }
            I::SignalRankTooLarge { instance, rank } => {
                write!(f, "instance {instance} signals rank {rank}, beyond any rank")
            }
            I::TooFewNames { expected } => write!(f, "names section holds fewer than {expected} names"),
            I::NamesTrailing => f.write_str("names section has bytes after the last name besides its padding"),
            I::NamesNotUtf8 { valid_up_to } => {
                write!(f, "names: invalid utf-8 sequence from index {valid_up_to}")
            }
            I::CoresPerRank { header, aic, aiv, cores } => {
                write!(f, "header says {header} cores per rank, but {aic} AIC with {aiv} AIV each make {cores}")
            }
            I::SectionLength { what, expected, len } => {
                write!(f, "header implies {expected} {what}, table has {len}")
            }
            I::NameCount { expected, found } => write!(
                f,
                "names must be {expected} NUL-terminated strings (the table's and one per family), found {found}"
            ),
            I::CounterMax { header, max } => {
                write!(f, "header says at most {header} counters per rank, the ranks use at most {max}")
            }
            I::Family { index, name, problem } => write!(f, "family {index} (`{name}`): {problem}"),
            I::FamilyInstances { covered, header } => {
                write!(f, "families cover {covered} instances, header says {header} per rank")
            }
            I::CoreStart { core, first, expected } => {
                write!(f, "core {core} entries start at {first}, expected {expected}")
            }
            I::CoreEntries { held, entries } => write!(f, "cores hold {held} entries, table has {entries}"),
            I::EntryCount { entries, ranks, per_rank } => write!(
                f,
                "{entries} entries, but {ranks} ranks of {per_rank} instances need exactly {}",
                u64::from(*ranks) * per_rank
            ),
            I::Entry { core, pos, problem } => write!(f, "core {core} entry {pos}: {problem}"),
            I::SignalTotal { sent, signals } => write!(f, "entries send {sent} signals, table has {signals}"),
            I::SignalRank { signal, rank, ranks } => write!(f, "signal {signal} goes to rank {rank} of {ranks}"),
            I::SignalCounter { signal, counter, rank, counters, reserved } => write!(
                f,
                "signal {signal} goes to counter {counter} of rank {rank}, which has {counters} (reserved {reserved})"
            ),
            I::Unreachable { instance, core, counter, rank, target, count } => write!(
                f,
                "instance {instance} on core {core} waits for counter {counter} of rank {rank} to reach {target}, \
                 but only {count} signals ever go to it"
            ),
        }
    }
}

impl fmt::Display for JsonProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JsonProblem::Syntax(e) => write!(f, "{e}"),
            JsonProblem::Format { found } => {
                write!(f, "`format` is {found:?}, expected {:?}", super::json::FORMAT_NAME)
            }
            JsonProblem::Ranks { listed, machine } => {
                write!(f, "{listed} rank{} listed, machine has {machine}", if *listed == 1 { "" } else { "s" })
            }
            JsonProblem::Rank { index, says, cores, expected } => {
                write!(f, "rank {index} is listed as rank {says} with {cores} cores, expected {expected}")
            }
            JsonProblem::FamilyRange { index, name, says, has } => write!(
                f,
                "family {index} (`{name}`) says instances {}+{}, its position and grid give {}+{}",
                says.0, says.1, has.0, has.1
            ),
            JsonProblem::CoreName { core, listed, expected } => {
                write!(f, "core {core} is listed as {listed:?}, expected {expected:?}")
            }
            JsonProblem::Instance { core, instance, has, says } => write!(
                f,
                "{core}: instance {instance} is {}{:?}, not {}{:?}",
                has.0,
                has.1.as_slice(),
                says.0,
                says.1.as_slice()
            ),
        }
    }
}
