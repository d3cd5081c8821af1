//! JSON export and import.

use super::fixture::tiny;
use hpmoe_core::table::{Inconsistency, ScheduleTable, TableError};
use serde_json::{Value, json};

fn tiny_json() -> String {
    tiny().build("tiny").to_json()
}

#[test]
fn round_trips() {
    let t = tiny().build("tiny");
    assert_eq!(ScheduleTable::from_json(&t.to_json()), Ok(t));
}

#[test]
fn reads_like_the_documented_shape() {
    let text = tiny_json();
    let expected_start = r#"{
  "format": "hpmoe-schedule-table",
  "version": 1,
  "name": "tiny",
  "machine": {"ranks": 2, "aic_per_rank": 1, "aiv_per_aic": 2},
  "families": [
    {"name": "dispatch", "core": "aiv", "grid": [2, 2], "first_instance": 0, "instance_count": 4},
    {"name": "gmm", "core": "aic", "grid": [2], "first_instance": 4, "instance_count": 2},
    {"name": "combine", "core": "aiv", "grid": [], "first_instance": 6, "instance_count": 1}
  ],
  "counters_per_rank": [3, 3],
  "ranks": [
    {
      "rank": 0,
      "cores": [
        {
          "core": "r0.aic0",
          "entries": [
            {"instance": 4, "family": "gmm", "coords": [0], "wait": {"counter": 0, "target": 2}, "signals": [{"rank": 0, "counter": 2}]},
            {"instance": 5, "family": "gmm", "coords": [1], "wait": {"counter": 1, "target": 2}, "signals": [{"rank": 0, "counter": 2}]}
          ]
        },
        {
          "core": "r0.aiv0",
          "entries": [
            {"instance": 0, "family": "dispatch", "coords": [0, 0], "signals": [{"rank": 0, "counter": 0}]},
            {"instance": 1, "family": "dispatch", "coords": [0, 1], "signals": [{"rank": 0, "counter": 1}]},
            {"instance": 6, "family": "combine", "coords": [], "wait": {"counter": 2, "target": 2}}
          ]
        },
"#;
    assert!(text.starts_with(expected_start), "{text}");
    assert!(text.ends_with("      ]\n    }\n  ]\n}\n"), "{text}");
    let doc: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(doc["ranks"][1]["cores"][2]["core"], "r1.aiv1");
    assert_eq!(doc["ranks"][1]["cores"][2]["entries"][1]["signals"], json!([{"rank": 1, "counter": 1}]));
}

/// The document as a value, edited, back to text, imported.
fn import_edited(edit: impl FnOnce(&mut Value)) -> Result<ScheduleTable, TableError> {
    let mut doc: Value = serde_json::from_str(&tiny_json()).unwrap();
    edit(&mut doc);
    ScheduleTable::from_json(&serde_json::to_string(&doc).unwrap())
}

fn first_entry(doc: &mut Value) -> &mut Value {
    &mut doc["ranks"][0]["cores"][0]["entries"][0]
}

#[test]
fn labels_are_optional_on_import() {
    let stripped = import_edited(|doc| {
        for rank in doc["ranks"].as_array_mut().unwrap() {
            for core in rank["cores"].as_array_mut().unwrap() {
                for entry in core["entries"].as_array_mut().unwrap() {
                    let entry = entry.as_object_mut().unwrap();
                    entry.remove("family");
                    entry.remove("coords");
                }
            }
        }
    });
    assert_eq!(stripped, Ok(tiny().build("tiny")));
}

fn json_error(result: Result<ScheduleTable, TableError>, needle: &str) {
    match result {
        Err(TableError::Json(j)) => assert!(j.to_string().contains(needle), "{j}"),
        other => panic!("expected a JSON error about {needle:?}, got {other:?}"),
    }
}

#[test]
fn labels_that_disagree_are_rejected() {
    json_error(
        import_edited(|d| first_entry(d)["family"] = json!("dispatch")),
        "instance 4 is gmm[0], not dispatch[0]",
    );
    json_error(import_edited(|d| first_entry(d)["coords"] = json!([1])), "not gmm[1]");
    json_error(import_edited(|d| d["families"][1]["first_instance"] = json!(3)), "family 1 (`gmm`) says instances 3+2");
    json_error(import_edited(|d| d["ranks"][0]["cores"][1]["core"] = json!("r0.aiv1")), "expected \"r0.aiv0\"");
    json_error(import_edited(|d| d["ranks"][1]["rank"] = json!(0)), "rank 1 is listed as rank 0");
    json_error(import_edited(|d| d["ranks"].as_array_mut().unwrap().truncate(1)), "1 rank listed, machine has 2");
}

#[test]
fn malformed_documents_are_rejected() {
    json_error(ScheduleTable::from_json("{"), "EOF");
    json_error(ScheduleTable::from_json("[]"), "");
    json_error(import_edited(|d| d["format"] = json!("something-else")), "`format` is \"something-else\"");
    json_error(import_edited(|d| first_entry(d)["colour"] = json!("red")), "unknown field `colour`");
    json_error(import_edited(|d| d["machine"]["ranks"] = json!(-1)), "invalid value");
    assert_eq!(
        import_edited(|d| d["version"] = json!(9)),
        Err(TableError::UnsupportedVersion { found: 9, supported: 1 })
    );
}

#[test]
fn inconsistent_tables_are_rejected() {
    match import_edited(|d| first_entry(d)["wait"]["target"] = json!(5)) {
        Err(TableError::Inconsistent(i)) if matches!(*i, Inconsistency::Unreachable { target: 5, count: 2, .. }) => {
            assert!(i.to_string().contains("only 2 signals"), "{i}")
        }
        other => panic!("expected an inconsistency, got {other:?}"),
    }
    match import_edited(|d| first_entry(d)["signals"][0]["rank"] = json!(70_000)) {
        Err(TableError::Inconsistent(i)) if matches!(*i, Inconsistency::SignalRankTooLarge { rank: 70_000, .. }) => {
            assert!(i.to_string().contains("signals rank 70000"), "{i}")
        }
        other => panic!("expected an inconsistency, got {other:?}"),
    }
    match import_edited(|d| d["families"][0]["grid"] = json!([1, 1, 1, 1, 1])) {
        Err(TableError::TooLarge { value: 5, limit: 4, .. }) => {}
        other => panic!("expected too many dims, got {other:?}"),
    }
}
