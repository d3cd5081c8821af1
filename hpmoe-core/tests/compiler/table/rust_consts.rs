//! The Rust const form. `tiny_table.rs` is the rendering of the tiny table, checked in: the
//! test compiles it (so the rendering is valid Rust and a valid `const`) and requires that
//! today's rendering is still exactly that text. After an intended change of the
//! rendering, rewrite the file with `HPMOE_BLESS=1 cargo test -p hpmoe-core --test compiler table::`.

use super::fixture::tiny;
use hpmoe_core::table::TableView;

mod generated {
    include!("tiny_table.rs");
}

/// A second const from the same text, to check a view is usable in const contexts.
const TINY_RANKS: u32 = generated::TINY.header.ranks;

#[test]
fn rendering_is_the_checked_in_source_and_compiles() {
    let table = tiny().build("tiny");
    let text = table.to_rust_source("TINY");
    if std::env::var_os("HPMOE_BLESS").is_some() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/compiler/table/tiny_table.rs");
        std::fs::write(path, &text).expect("write tiny_table.rs");
    }
    assert_eq!(text, include_str!("tiny_table.rs"), "rendering changed; see this module's docs to bless it");
    assert_eq!(generated::TINY, table.view());
    assert_eq!(generated::TINY.to_owned(), table);
    assert_eq!(TINY_RANKS, 2);
    assert_eq!(generated::TINY.validate(), Ok(()));
}

#[test]
fn view_round_trips_to_an_equal_table() {
    let table = tiny().build("tiny");
    let view: TableView<'_> = table.view();
    assert_eq!(view.to_owned(), table);
    assert_eq!(view.to_rust_source("X"), table.to_rust_source("X"));
}

#[test]
fn rendering_has_one_record_per_line() {
    let text = tiny().build("tiny").to_rust_source("TINY");
    for line in [
        "pub const TINY: ::hpmoe_core::table::TableView<'static> = {",
        "        names: \"tiny\\0dispatch\\0gmm\\0combine\\0\",",
        "            magic: *b\"HPMOETBL\",",
        "            // \"gmm\"",
        "            CoreRecord { first_entry: 0, entry_count: 2 }, // r0.aic0",
        "            // r1.aiv0",
        "            EntryRecord { instance: 0, wait_counter: NO_WAIT, wait_target: 0, signal_count: 1, first_signal: 8 },",
        "            SignalRecord { counter: 2, rank: 0, reserved: 0 },",
    ] {
        assert!(text.lines().any(|l| l == line), "missing line {line:?} in\n{text}");
    }
}

#[test]
#[should_panic(expected = "is not a Rust identifier")]
fn const_name_must_be_an_identifier() {
    tiny().build("tiny").to_rust_source("not an identifier");
}
