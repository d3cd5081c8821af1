//! The corruption campaign: a hostile user's every single-entry change to a small schedule
//! table (and to its flag plan), each resealed with a valid checksum, is either rejected with a
//! clear error or runs to the correct output. None runs silently wrong.
//!
//! The mutations, on the planned tables of `MoeShape::tiny(2)` (with its hardware-flag plan and
//! without flags) and `MoeShape::tiny_natural(2)` (guards; with flags):
//! - a deleted wait, a wait target one higher and one lower, for every entry that waits;
//! - every two neighbouring entries of a core swapped;
//! - every entry moved to the next core of its kind on its rank (same position, or last);
//! - every flag set removed, every flag wait removed or doubled, an extra wait on each AIV entry
//!   that has none;
//! - every bit of the table blob's records flipped (header, families, cores, counters, entries,
//!   signals) and one bit in every byte of the names, each time with the checksum resealed;
//! - every bit of the flag plan blob, its checksum resealed.
//!
//! A mutated table goes the way a table a user hands to hpmoe goes: decoded (checksum, layout,
//! every invariant), its flag plan decoded against it, then the host executor, which certifies it
//! ([`hpmoe_core::certify`]) before it runs it; the run's output (every tensor of every rank) must
//! equal the sequential run's bitwise.
//!
//! The test also runs every mutant the certificate refused on the executor anyway (with a short
//! wait bound), to show what the certificate is there for: how many of them would have run to a
//! wrong answer with no error. It prints the tally that the README quotes.

use hpmoe_core::Compiled;
use hpmoe_core::graph::Csr;
use hpmoe_core::ids::{CoreId, NodeId};
use hpmoe_core::model::{CoreKind, MachineProfile, Taskflow};
use hpmoe_core::schedule::FlagPlan;
use hpmoe_core::schedule::flags::{decode_plan, plan_bytes};
use hpmoe_core::table::{CoreRecord, EntryRecord, NO_WAIT, ScheduleTable};
use hpmoe_host::exec::moe_reference::moe_inputs;
use hpmoe_host::exec::{ExecError, Executor, Inputs, OpImpls, RunOptions, SequentialRunner, Snapshot};
use hpmoe_host::moe::MoeShape;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Duration;

/// A table's entries as per-core lists, and back: the form in which a hostile edit is easy to
/// write (moving an entry shifts every later core's `first_entry`).
fn core_lists(table: &ScheduleTable) -> Vec<Vec<EntryRecord>> {
    (0..table.cores().len() as u32).map(|c| table.core_entries(c).to_vec()).collect()
}

/// `table` with its entries replaced by `lists`: core records recomputed, and each entry's
/// signals moved along with it, so that the signal list stays in entry order (as a consistent
/// hostile edit would keep it, rather than one the decoder's layout check catches).
fn with_core_lists(table: &ScheduleTable, lists: &[Vec<EntryRecord>]) -> ScheduleTable {
    let view = table.view();
    let mut cores = Vec::with_capacity(lists.len());
    let mut entries = Vec::new();
    let mut signals = Vec::new();
    for list in lists {
        cores.push(CoreRecord { first_entry: entries.len() as u32, entry_count: list.len() as u32 });
        for e in list {
            let sent = table.entry_signals(e);
            entries.push(EntryRecord { first_signal: signals.len() as u32, ..*e });
            signals.extend_from_slice(sent);
        }
    }
    hpmoe_core::table::TableView { cores: &cores, entries: &entries, signals: &signals, ..view }.to_owned()
}

/// The flag plan blob for `table` (possibly edited), keeping each node's sets and waits of
/// `plan`, written by hpmoe's own writer ([`plan_bytes`]) with the per-core totals made to agree
/// and `table`'s checksum: what a user who edits a table and fixes up its flag plan hands over.
/// `None` when `table` is not of `plan`'s machine and instance space (then no flag plan fits it).
fn reseal_flags(plan: &FlagPlan, table: &ScheduleTable, profile: &MachineProfile) -> Option<Vec<u8>> {
    let view = table.view();
    let h = table.header();
    let cores = view.cores.len() as u32;
    let nodes = plan.set_after.len() as u32;
    if cores != profile.total_cores() || h.ranks * h.instances_per_rank != nodes {
        return None;
    }
    let node = |core: u32, e: &EntryRecord| NodeId::new(view.rank_of_core(core) * h.instances_per_rank + e.instance);
    let queues: Csr<CoreId, NodeId> =
        Csr::from_rows((0..cores).map(|c| table.core_entries(c).iter().map(move |e| node(c, e))));
    // An AIC's total is its sets; an AIV's, its AIC's (it drains what its list did not wait for).
    let mut plan = plan.clone();
    for core in 0..cores {
        let (rank, local) = profile.split_core(core);
        let aic = if profile.kind_of_local(local) == CoreKind::Aic {
            core
        } else {
            rank * h.cores_per_rank + (local - h.aic_per_rank) / h.aiv_per_aic
        };
        plan.totals[CoreId::new(core)] =
            queues.row(CoreId::new(aic)).iter().filter(|&&n| plan.set_after[n]).count() as u32;
    }
    Some(plan_bytes(&plan, &queues, profile, table.checksum()))
}

/// Where a mutant ended.
#[derive(Clone, Debug)]
enum Outcome {
    /// The table blob does not decode (checksum, layout, an invariant).
    Decode(String),
    /// The flag plan blob does not decode against the table.
    FlagPlan(String),
    /// The certificate refused it.
    Certificate(String),
    /// The executor refused it before running (e.g. a table for another taskflow).
    Setup(String),
    /// It ran and stopped with an error (a timeout, naming the wait).
    RunError(String),
    /// It ran to the correct output.
    Correct,
    /// It ran to a wrong output with no error: the failure this campaign exists to rule out.
    Wrong(String),
}

/// One small planned table, the data to run it on, and what every run must produce.
struct Subject {
    name: &'static str,
    tf: Taskflow,
    compiled: Compiled,
    flagged: bool,
    inputs: Inputs,
    expected: Snapshot,
}

impl Subject {
    fn new(name: &'static str, shape: MoeShape, flagged: bool) -> Subject {
        let tf = shape.taskflow().unwrap();
        let compile =
            if flagged { hpmoe_core::CompileOptions::default() } else { hpmoe_core::CompileOptions::without_flags() };
        let compiled = hpmoe_core::plan_with(&tf, &hpmoe_core::PlanOptions { compile, ..Default::default() }).unwrap();
        assert_eq!(flagged, !compiled.flags.edges.is_empty(), "{name}: flags as asked");
        let inputs = moe_inputs(&shape, 3);
        let expected = SequentialRunner::new(&tf, &OpImpls::builtin()).unwrap().run(&inputs).unwrap().snapshot;
        Subject { name, tf, compiled, flagged, inputs, expected }
    }

    /// The flag plan blob of the unmutated table (`None` when the table uses no flags).
    fn flags_bin(&self) -> Option<&[u8]> {
        self.flagged.then_some(self.compiled.flags_bin.as_slice())
    }

    /// A mutant's blobs through the user's path: decode, flag plan, certificate, executor.
    /// With `certify` off, the certificate is skipped (to see what it prevents).
    fn judge(&self, table_bin: &[u8], flags_bin: Option<&[u8]>, certify: bool) -> Outcome {
        let table = match ScheduleTable::from_bytes(table_bin) {
            Ok(t) => t,
            Err(e) => return Outcome::Decode(e.to_string()),
        };
        let plan = match flags_bin.map(|b| decode_plan(b, &table)).transpose() {
            Ok(p) => p,
            Err(e) => return Outcome::FlagPlan(e.to_string()),
        };
        // The executor certifies the table before it runs it (unless told not to, for fault
        // injection: what the table would do without the certificate).
        let impls = OpImpls::builtin();
        let exec = match (certify, &plan) {
            (true, Some(p)) => Executor::with_flags(&self.tf, &table, p, &impls),
            (true, None) => Executor::new(&self.tf, &table, &impls),
            (false, p) => Executor::uncertified_for_fault_injection(&self.tf, &table, p.as_ref(), &impls),
        };
        let exec = match exec {
            Ok(e) => e,
            Err(ExecError::Certificate(e)) => return Outcome::Certificate(e.to_string()),
            Err(e) => return Outcome::Setup(e.to_string()),
        };
        let timeout = if certify { Duration::from_secs(10) } else { Duration::from_millis(100) };
        match exec.run(&self.inputs, &RunOptions::default().with_timeout(timeout)) {
            Err(e) => Outcome::RunError(e.to_string()),
            Ok(out) => match out.snapshot.first_difference(&self.expected) {
                None => Outcome::Correct,
                Some(d) => Outcome::Wrong(d),
            },
        }
    }
}

/// One mutation: what it did, and the resealed blobs.
struct Mutant {
    what: String,
    table: Vec<u8>,
    flags: Option<Vec<u8>>,
}

/// Every single-entry mutation of `s`'s table and flag plan (see the module docs).
fn mutants(s: &Subject) -> Vec<Mutant> {
    let table = &s.compiled.table;
    let plan = &s.compiled.flags;
    let lists = core_lists(table);
    let mut out = Vec::new();
    let mut push = |what: String, t: &ScheduleTable, p: &FlagPlan| {
        let flags = s.flagged.then(|| reseal_flags(p, t, &s.tf.profile).expect("an edit keeps the table's shape"));
        out.push(Mutant { what, table: t.to_bytes(), flags });
    };
    for (core, list) in lists.iter().enumerate() {
        for (i, e) in list.iter().enumerate() {
            let edited = |f: &dyn Fn(&mut Vec<Vec<EntryRecord>>)| {
                let mut l = lists.clone();
                f(&mut l);
                with_core_lists(table, &l)
            };
            if e.wait().is_some() {
                let t = edited(&|l| {
                    l[core][i].wait_counter = NO_WAIT;
                    l[core][i].wait_target = 0;
                });
                push(format!("core {core} entry {i}: wait deleted"), &t, plan);
                let t = edited(&|l| l[core][i].wait_target += 1);
                push(format!("core {core} entry {i}: target +1"), &t, plan);
                let t = edited(&|l| l[core][i].wait_target -= 1);
                push(format!("core {core} entry {i}: target -1"), &t, plan);
            }
            if i + 1 < list.len() {
                let t = edited(&|l| l[core].swap(i, i + 1));
                push(format!("core {core}: entries {i} and {} swapped", i + 1), &t, plan);
            }
            // The next core of the same kind on the same rank.
            let view = table.view();
            let per_rank = view.header.cores_per_rank as usize;
            let rank_base = core - core % per_rank;
            let same_kind: Vec<usize> = (rank_base..rank_base + per_rank)
                .filter(|&c| view.core_kind(c as u32) == view.core_kind(core as u32))
                .collect();
            if same_kind.len() > 1 {
                let at = same_kind.iter().position(|&c| c == core).unwrap();
                let to = same_kind[(at + 1) % same_kind.len()];
                let t = edited(&|l| {
                    let moved = l[core].remove(i);
                    let pos = i.min(l[to].len());
                    l[to].insert(pos, moved);
                });
                push(format!("core {core} entry {i}: moved to core {to}"), &t, plan);
            }
        }
    }
    if s.flagged {
        for node in plan.set_after.keys() {
            let mut p = plan.clone();
            if p.set_after[node] {
                p.set_after[node] = false;
                push(format!("node {node}: flag set removed"), table, &p);
            }
            let mut p = plan.clone();
            let aiv = s.compiled.expanded.core_kind(node) == CoreKind::Aiv;
            if p.waits_before[node] > 0 {
                p.waits_before[node] -= 1;
                push(format!("node {node}: a flag wait removed"), table, &p);
                let mut p = plan.clone();
                p.waits_before[node] *= 2;
                push(format!("node {node}: flag waits doubled"), table, &p);
            } else if aiv {
                p.waits_before[node] = 1;
                push(format!("node {node}: a flag wait added"), table, &p);
            }
        }
    }
    // Bit flips, resealed. The names section (last) gets one bit per byte; every other byte
    // every bit.
    let blob = table.to_bytes();
    let names_from = blob.len() - table.view().names.len().next_multiple_of(4).min(blob.len());
    for byte in 0..blob.len() {
        if (8..16).contains(&byte) {
            continue; // the version and the checksum itself: resealing would undo the flip
        }
        let bits: Vec<u8> = if byte >= names_from { vec![(byte % 8) as u8] } else { (0..8).collect() };
        for bit in bits {
            let mut b = blob.clone();
            b[byte] ^= 1 << bit;
            let crc = crc32fast::hash(&b[16..]);
            b[12..16].copy_from_slice(&crc.to_le_bytes());
            // A user who flips a bit reseals the flag plan against the flipped table too, when
            // it still decodes (otherwise the flip is refused either way).
            let flags = match (s.flags_bin(), ScheduleTable::from_bytes(&b)) {
                (Some(orig), Ok(t)) => Some(reseal_flags(plan, &t, &s.tf.profile).unwrap_or_else(|| orig.to_vec())),
                (Some(orig), Err(_)) => Some(orig.to_vec()),
                (None, _) => None,
            };
            out.push(Mutant { what: format!("byte {byte} bit {bit} flipped"), table: b, flags });
        }
    }
    // Every bit of the flag plan blob but its version and CRC, the CRC resealed.
    if let Some(orig) = s.flags_bin() {
        let table_bin = table.to_bytes();
        for byte in (0..orig.len()).filter(|b| !(8..16).contains(b)) {
            for bit in 0..8 {
                let mut f = orig.to_vec();
                f[byte] ^= 1 << bit;
                let crc = crc32fast::hash(&f[16..]);
                f[12..16].copy_from_slice(&crc.to_le_bytes());
                let what = format!("flag plan byte {byte} bit {bit} flipped");
                out.push(Mutant { what, table: table_bin.clone(), flags: Some(f) });
            }
        }
    }
    out
}

/// Outcome counts of one subject, by mutation kind.
#[derive(Default)]
struct Tally {
    /// kind → outcome label → count
    by_kind: BTreeMap<String, BTreeMap<&'static str, u32>>,
    /// Mutants the certificate refused, run without it: outcome label → count.
    uncertified: BTreeMap<&'static str, u32>,
    total: u32,
}

fn label(o: &Outcome) -> &'static str {
    match o {
        Outcome::Decode(_) => "refused: decode",
        Outcome::FlagPlan(_) => "refused: flag plan",
        Outcome::Certificate(..) => "refused: certificate",
        Outcome::Setup(_) => "refused: executor setup",
        Outcome::RunError(_) => "run stopped with an error",
        Outcome::Correct => "ran correct",
        Outcome::Wrong(_) => "RAN WRONG",
    }
}

/// The mutation's kind: its description without the place.
fn kind(what: &str) -> String {
    let tail = what.rsplit_once(": ").map_or(what, |(_, t)| t);
    let tail = if what.starts_with("byte ") {
        "table bit flipped"
    } else if what.starts_with("flag plan byte ") {
        "flag plan bit flipped"
    } else {
        tail
    };
    let tail = tail.split(" to core").next().unwrap_or(tail);
    let mut out = String::new();
    for c in tail.chars() {
        if !c.is_ascii_digit() {
            out.push(c);
        } else if !out.ends_with('N') {
            out.push('N');
        }
    }
    out
}

/// Runs the campaign on one subject: fails if any mutant runs wrong, or is certified and then
/// fails to run; prints the tally.
fn campaign(s: &Subject) {
    // The unmutated table passes and runs correct: the campaign measures the mutations.
    let own = s.judge(&s.compiled.table.to_bytes(), s.flags_bin(), true);
    assert!(matches!(own, Outcome::Correct), "{}: the planned table itself: {own:?}", s.name);
    let mut tally = Tally::default();
    let mut failures = Vec::new();
    for m in mutants(s) {
        let outcome = s.judge(&m.table, m.flags.as_deref(), true);
        match &outcome {
            Outcome::Wrong(d) => failures.push(format!("{}: ran wrong: {d}", m.what)),
            Outcome::RunError(e) => failures.push(format!("{}: certified, then the run failed: {e}", m.what)),
            Outcome::Decode(e) | Outcome::FlagPlan(e) | Outcome::Setup(e) | Outcome::Certificate(e) => {
                assert!(!e.is_empty(), "{}: {}: refused without a message", s.name, m.what);
            }
            Outcome::Correct => {}
        }
        if matches!(outcome, Outcome::Certificate(..)) && !m.what.contains("byte ") {
            let without = s.judge(&m.table, m.flags.as_deref(), false);
            *tally.uncertified.entry(label(&without)).or_default() += 1;
        }
        *tally.by_kind.entry(kind(&m.what)).or_default().entry(label(&outcome)).or_default() += 1;
        tally.total += 1;
    }
    let mut report = format!("{} — {} mutants\n", s.name, tally.total);
    for (k, outcomes) in &tally.by_kind {
        let parts: Vec<String> = outcomes.iter().map(|(o, n)| format!("{n} {o}")).collect();
        writeln!(report, "  {k}: {}", parts.join(", ")).unwrap();
    }
    let mut totals: BTreeMap<&str, u32> = BTreeMap::new();
    for (o, n) in tally.by_kind.values().flatten() {
        *totals.entry(o).or_default() += n;
    }
    let parts: Vec<String> = totals.iter().map(|(o, n)| format!("{n} {o}")).collect();
    writeln!(report, "  all: {}", parts.join(", ")).unwrap();
    let parts: Vec<String> = tally.uncertified.iter().map(|(o, n)| format!("{n} {o}")).collect();
    writeln!(report, "  structural mutants the certificate refused, run without it: {}", parts.join(", ")).unwrap();
    eprintln!("{report}");
    assert!(failures.is_empty(), "{}: {} mutants got through:\n{}", s.name, failures.len(), failures.join("\n"));
}

#[test]
fn no_mutation_of_the_tiny_flagged_table_runs_silently_wrong() {
    campaign(&Subject::new("tiny(2), flags", MoeShape::tiny(2), true));
}

#[test]
fn no_mutation_of_the_tiny_table_without_flags_runs_silently_wrong() {
    campaign(&Subject::new("tiny(2), no flags", MoeShape::tiny(2), false));
}

#[test]
fn no_mutation_of_the_guarded_natural_routing_table_runs_silently_wrong() {
    campaign(&Subject::new("tiny_natural(2), flags", MoeShape::tiny_natural(2), true));
}

/// Each rule the flag plan decoder adds beyond its checksum refuses a resealed blob that breaks
/// it, with a message saying which rule.
#[test]
fn the_flag_plan_decoder_refuses_what_the_device_cannot_run() {
    let s = Subject::new("tiny(2), flags", MoeShape::tiny(2), true);
    let table = &s.compiled.table;
    let orig = s.flags_bin().unwrap();
    let reseal = |f: &mut Vec<u8>| {
        let crc = crc32fast::hash(&f[16..]);
        f[12..16].copy_from_slice(&crc.to_le_bytes());
    };
    let refused = |edit: &dyn Fn(&mut Vec<u8>), says: &str| {
        let mut f = orig.to_vec();
        edit(&mut f);
        reseal(&mut f);
        let err = decode_plan(&f, table).unwrap_err().to_string();
        assert!(err.contains(says), "{err}");
    };
    decode_plan(orig, table).unwrap();
    // Flag 3 belongs to the Matmul high-level API.
    refused(&|f| f[28..32].copy_from_slice(&3u32.to_le_bytes()), "reserved by the Matmul");
    // No flag id, but flag ops.
    refused(&|f| f[28..32].copy_from_slice(&u32::MAX.to_le_bytes()), "names no flag id");
    let cores = table.cores().len();
    let ops_at = 40 + 4 * cores;
    // An AIC (core 0 comes first) setting twice after one entry.
    let first_set = (0..table.core_entries(0).len()).find(|&i| orig[ops_at + i] == 1).unwrap();
    refused(&|f| f[ops_at + first_set] = 2, "an AIC sets at most once");
    // An AIC's total one higher than its sets (its AIVs' totals raised with it).
    refused(&|f| f[40] += 1, "core 0's flag total");
    // An AIV whose total is not its AIC's.
    let aiv = (0..cores as u32).find(|&c| table.view().core_kind(c) == CoreKind::Aiv).unwrap() as usize;
    refused(&|f| f[40 + 4 * aiv] += 1, "its AIC (core 0) sets the flag");
    // Padding.
    if orig.len() > ops_at + table.entries().len() {
        refused(&|f| *f.last_mut().unwrap() = 1, "padding");
    }
}
