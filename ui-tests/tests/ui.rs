//! The macros' pass and compile-fail cases (trybuild). A fail case's expected compiler
//! output is pinned in the `.stderr` beside it; after a deliberate change to a message,
//! regenerate with `TRYBUILD=overwrite cargo test -p hpmoe-ui-tests` and read every diff.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.pass("ui/pass/*.rs");
    t.compile_fail("ui/fail/*.rs");
}
