//! JSON form of a schedule table, for people and tools.
//!
//! ```text
//! {
//!   "format": "hpmoe-schedule-table",
//!   "version": 1,
//!   "name": "moe",
//!   "machine": {"ranks": 2, "aic_per_rank": 1, "aiv_per_aic": 2},
//!   "families": [
//!     {"name": "gmm", "core": "aic", "grid": [2, 3], "first_instance": 0, "instance_count": 6}
//!   ],
//!   "counters_per_rank": [1, 1],
//!   "ranks": [
//!     {
//!       "rank": 0,
//!       "cores": [
//!         {
//!           "core": "r0.aic0",
//!           "entries": [
//!             {"instance": 4, "family": "gmm", "coords": [1, 1], "wait": {"counter": 0, "target": 2}, "signals": [{"rank": 1, "counter": 0}]}
//!           ]
//!         }
//!       ]
//!     }
//!   ]
//! }
//! ```
//!
//! Ranks are listed in order, each with all its cores in order (AIC first), each with its
//! entries in run order, one per line. On import, `family` and `coords` of an entry are
//! optional and checked when present; `wait` and `signals` may be left out when there are
//! none. Family ids, core names and rank numbers must agree with their positions.

use super::ScheduleTable;
use super::assemble::Assembler;
use super::error::TableError;
use super::inconsistency::JsonProblem;
use super::records::{FORMAT_VERSION, SignalRecord};
use crate::model::CoreKind;
use crate::placement::{Signal, Wait};
use serde::{Deserialize, Serialize};
use std::io;
use std::sync::Arc;

/// Value of the document's `format` field.
pub(super) const FORMAT_NAME: &str = "hpmoe-schedule-table";

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Machine {
    ranks: u32,
    aic_per_rank: u32,
    aiv_per_aic: u32,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Family {
    name: String,
    core: CoreKind,
    grid: Vec<u32>,
    first_instance: u32,
    instance_count: u32,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    instance: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    family: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    coords: Option<Vec<u32>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    wait: Option<Wait>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    signals: Vec<Signal>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Core {
    core: String,
    entries: Vec<Entry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Rank {
    rank: u32,
    cores: Vec<Core>,
}

/// The whole document, as read. Written by hand in the same shape (see [`ScheduleTable::to_json`]).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Document {
    format: String,
    version: u32,
    name: String,
    machine: Machine,
    families: Vec<Family>,
    counters_per_rank: Vec<u32>,
    ranks: Vec<Rank>,
}

impl ScheduleTable {
    /// The table as pretty, deterministic JSON (shape in the module docs): small objects on
    /// one line each, one entry per line.
    pub fn to_json(&self) -> String {
        let view = self.view();
        let h = &self.header;
        let mut out = String::new();
        out.push_str("{\n");
        out.push_str(&format!("  \"format\": {},\n", one_line(&FORMAT_NAME)));
        out.push_str(&format!("  \"version\": {},\n", h.version));
        out.push_str(&format!("  \"name\": {},\n", one_line(&view.name())));
        let machine = Machine { ranks: h.ranks, aic_per_rank: h.aic_per_rank, aiv_per_aic: h.aiv_per_aic };
        out.push_str(&format!("  \"machine\": {},\n", one_line(&machine)));
        let families = self.families.iter().zip(view.family_names()).map(|(f, name)| Family {
            name: name.to_owned(),
            core: f.kind().unwrap_or(CoreKind::Aic),
            grid: f.grid().to_vec(),
            first_instance: f.first_instance,
            instance_count: f.instance_count,
        });
        push_list(&mut out, "  ", "families", families.map(|f| one_line(&f)).collect());
        out.push_str(",\n");
        out.push_str(&format!("  \"counters_per_rank\": {},\n", one_line(&self.counters_per_rank)));
        out.push_str("  \"ranks\": [");
        for rank in 0..h.ranks {
            out.push_str(if rank == 0 { "\n" } else { ",\n" });
            out.push_str(&format!("    {{\n      \"rank\": {rank},\n      \"cores\": ["));
            for local in 0..h.cores_per_rank {
                let core = rank * h.cores_per_rank + local;
                out.push_str(if local == 0 { "\n" } else { ",\n" });
                out.push_str(&format!("        {{\n          \"core\": {},\n", one_line(&view.core_name(core))));
                let entries = view.core_entries(core).iter().map(|e| {
                    let (family, coords) = view.coords_of_instance(e.instance).unzip();
                    let entry = Entry {
                        instance: e.instance,
                        family: family.map(|f| view.family_name(f).to_owned()),
                        coords: coords.map(|c| c.to_vec()),
                        wait: e.wait(),
                        signals: view.entry_signals(e).iter().map(SignalRecord::signal).collect(),
                    };
                    one_line(&entry)
                });
                push_list(&mut out, "          ", "entries", entries.collect());
                out.push_str("\n        }");
            }
            out.push_str(if h.cores_per_rank == 0 { "]\n    }" } else { "\n      ]\n    }" });
        }
        out.push_str(if h.ranks == 0 { "]\n}\n" } else { "\n  ]\n}\n" });
        out
    }

    /// Reads a table from JSON in the shape [`ScheduleTable::to_json`] writes, and validates
    /// it like every other table.
    pub fn from_json(text: &str) -> Result<ScheduleTable, TableError> {
        let doc: Document =
            serde_json::from_str(text).map_err(|e| TableError::from(JsonProblem::Syntax(Arc::new(e))))?;
        if doc.format != FORMAT_NAME {
            return Err(JsonProblem::Format { found: doc.format.clone() }.into());
        }
        if doc.version != FORMAT_VERSION {
            return Err(TableError::UnsupportedVersion { found: doc.version, supported: FORMAT_VERSION });
        }
        let m = &doc.machine;
        let mut a = Assembler::new(&doc.name, m.ranks, m.aic_per_rank, m.aiv_per_aic)?;
        for f in &doc.families {
            a.family(&f.name, f.core, &f.grid)?;
        }
        a.counters(&doc.counters_per_rank);
        let cores_per_rank = m.aic_per_rank.saturating_mul(1 + m.aiv_per_aic) as usize;
        if doc.ranks.len() != m.ranks as usize {
            return Err(JsonProblem::Ranks { listed: doc.ranks.len(), machine: m.ranks }.into());
        }
        for (r, rank) in doc.ranks.iter().enumerate() {
            if rank.rank as usize != r || rank.cores.len() != cores_per_rank {
                let (says, cores) = (rank.rank, rank.cores.len());
                return Err(JsonProblem::Rank { index: r, says, cores, expected: cores_per_rank }.into());
            }
            for core in &rank.cores {
                a.start_core();
                for e in &core.entries {
                    a.entry(e.instance, e.wait, &e.signals)?;
                }
            }
        }
        let table = a.finish()?;
        check_labels(&table, &doc)?;
        Ok(table)
    }
}

/// Checks the redundant fields of a document against the table built from it.
fn check_labels(table: &ScheduleTable, doc: &Document) -> Result<(), TableError> {
    let view = table.view();
    for (i, (f, record)) in doc.families.iter().zip(table.families()).enumerate() {
        if (f.first_instance, f.instance_count) != (record.first_instance, record.instance_count) {
            let says = (f.first_instance, f.instance_count);
            let has = (record.first_instance, record.instance_count);
            return Err(JsonProblem::FamilyRange { index: i, name: f.name.clone(), says, has }.into());
        }
    }
    let cores = doc.ranks.iter().flat_map(|r| &r.cores);
    for (core, listed) in (0u32..).zip(cores) {
        let name = view.core_name(core);
        if listed.core != name {
            return Err(JsonProblem::CoreName { core, listed: listed.core.clone(), expected: name }.into());
        }
        for e in &listed.entries {
            let (family, coords) = view.coords_of_instance(e.instance).expect("validated instance");
            let family_ok = e.family.as_ref().is_none_or(|n| n == view.family_name(family));
            let coords_ok = e.coords.as_ref().is_none_or(|c| c[..] == coords[..]);
            if !family_ok || !coords_ok {
                let has = (view.family_name(family).to_string(), coords.to_vec());
                let says = (e.family.clone().unwrap_or_else(|| "?".into()), e.coords.clone().unwrap_or_default());
                return Err(JsonProblem::Instance { core: name, instance: e.instance, has, says }.into());
            }
        }
    }
    Ok(())
}

/// Appends `"key": [` then one item per line at `indent` + 2 spaces, then `]`.
fn push_list(out: &mut String, indent: &str, key: &str, items: Vec<String>) {
    out.push_str(&format!("{indent}\"{key}\": ["));
    for (i, item) in items.iter().enumerate() {
        out.push_str(if i == 0 { "\n" } else { ",\n" });
        out.push_str(&format!("{indent}  {item}"));
    }
    if !items.is_empty() {
        out.push_str(&format!("\n{indent}"));
    }
    out.push(']');
}

/// A value as JSON on one line, with a space after each `:` and `,`.
fn one_line<T: Serialize + ?Sized>(value: &T) -> String {
    let mut bytes = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut bytes, OneLine);
    value.serialize(&mut ser).expect("table values always serialize");
    String::from_utf8(bytes).expect("serde_json writes UTF-8")
}

/// serde_json's compact format with spaces after separators.
struct OneLine;

impl serde_json::ser::Formatter for OneLine {
    fn begin_array_value<W: ?Sized + io::Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if first { Ok(()) } else { w.write_all(b", ") }
    }

    fn begin_object_key<W: ?Sized + io::Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if first { Ok(()) } else { w.write_all(b", ") }
    }

    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }
}
