//! The runtime's on-chip sum (`cube_ops.h`: `MatmulTnSumStep`, `MatmulSumAddInto`) on the strict
//! emulator: `tests/cpp/on_chip_sum.cpp` sums a weight-gradient block over the row blocks of
//! three slots that hold a valid row (one slot empty, one partly filled), in L0C, and adds it
//! once; it must match the fixed-order reference bit for bit, and the same kernel with a block
//! wider than the tiling's base block must be stopped by the emulator's L0C rule; the tiling helper's
//! `SetFixSplit` (the base block an on-chip sum needs) refuses what its page forbids. Skipped, with
//! a note, where g++ is missing.

mod common;

use common::temp_dir;
use hpmoe_ascendc::runtime::{emulator_dir, source_include_dir};
use std::process::Command;

fn gxx(args: &[String]) -> Result<(), String> {
    let out = Command::new("g++").args(args).output().map_err(|e| e.to_string())?;
    if out.status.success() { Ok(()) } else { Err(String::from_utf8_lossy(&out.stderr).into_owned()) }
}

#[test]
fn on_chip_sum_matches_the_fixed_order_and_stays_within_a_base_block() {
    if !Command::new("g++").arg("--version").output().is_ok_and(|o| o.status.success()) {
        eprintln!("note: g++ not found; skipping the on-chip sum test");
        return;
    }
    let dir = temp_dir("on-chip-sum");
    let emu = emulator_dir();
    let flags = ["-std=c++17", "-O1", "-pthread", "-ffp-contract=off", "-Wall", "-Wextra", "-Werror"];
    let mut sources: Vec<_> = std::fs::read_dir(emu.join("src"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "cpp"))
        .collect();
    sources.push(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cpp/on_chip_sum.cpp"));
    let mut args: Vec<String> = flags.iter().map(|s| s.to_string()).collect();
    for inc in [emu.join("include"), emu.join("tests"), source_include_dir().to_path_buf()] {
        args.extend(["-I".into(), inc.display().to_string()]);
    }
    args.extend(sources.iter().map(|s| s.display().to_string()));
    let bin = dir.join("on_chip_sum");
    args.extend(["-o".into(), bin.display().to_string()]);
    gxx(&args).unwrap_or_else(|e| panic!("on_chip_sum.cpp does not build:\n{e}"));

    let run = |arg: Option<&str>| {
        let out = Command::new(&bin).args(arg).output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let ok = run(None);
    assert!(
        ok.contains("check grad ok")
            && ok.contains("check fixsplit ok")
            && ok.contains("status=0")
            && !ok.contains("error "),
        "{ok}"
    );
    let wide = run(Some("wide"));
    let first = wide.lines().find(|l| l.starts_with("error ")).unwrap_or_default();
    assert!(
        first.starts_with("error matmul_shape ")
            && first.contains("needs singleCoreM == baseM and singleCoreN == baseN"),
        "{wide}"
    );
}
