//! The declaration-only devkit header accepts the documented calls and rejects wrong ones, each
//! with the rule's message: a header that accepted everything would make every other syntax
//! check in this crate worthless.

use crate::common;

use common::decl_cases::{ACCEPTED, REJECTED, body};
use common::{assert_rejected, gxx, temp_dir};

#[test]
fn documented_calls_are_accepted() {
    let Some(check) = gxx() else { return };
    let dir = temp_dir("decl-ok");
    let file = dir.join("ok.cpp");
    std::fs::write(&file, body(ACCEPTED)).unwrap();
    check.run(&file).unwrap_or_else(|e| panic!("{e}"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn wrong_calls_are_rejected_with_the_rule() {
    let Some(check) = gxx() else { return };
    let dir = temp_dir("decl-bad");
    for (name, code, expected) in REJECTED {
        let file = dir.join(format!("{name}.cpp"));
        std::fs::write(&file, body(code)).unwrap();
        assert_rejected(&check, &file, expected);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
