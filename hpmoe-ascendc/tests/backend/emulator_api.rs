//! The CPU emulator of the AscendC + SHMEM device API (`emulator/`): hand-written kernels under
//! `emulator/tests/` are compiled with g++ against the emulator and run. Correct kernels must
//! produce the exact expected bytes with status 0; each kernel that breaks a rule must be stopped
//! with that rule's finding as the first report line (`error <kind> ...`). An emulator that
//! passed everything would fail the second half. Skipped, with a note, where g++ is missing.

use crate::common;

use common::decl_cases::{ACCEPTED, REJECTED, body};
use common::temp_dir;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

const FLAGS: [&str; 5] = ["-std=c++17", "-O1", "-pthread", "-ffp-contract=off", "-Wall"];

/// What a test kernel's run must print.
enum Expect {
    /// Status 0, no finding, and every `check` line of the kernel `ok` (at least `checks` of them).
    Pass { checks: usize },
    /// A non-zero status whose first report line starts `error <kind>`, with `detail` in the
    /// report (the finding, or a core's state line of a deadlock).
    Error { kind: &'static str, detail: &'static str },
}

struct Case {
    kernel: &'static str,
    args: &'static [&'static str],
    env: &'static [(&'static str, &'static str)],
    expect: Expect,
}

const fn pass(kernel: &'static str, checks: usize) -> Case {
    Case { kernel, args: &[], env: &[], expect: Expect::Pass { checks } }
}
const fn error(kernel: &'static str, kind: &'static str, detail: &'static str) -> Case {
    Case { kernel, args: &[], env: &[], expect: Expect::Error { kind, detail } }
}

fn cases() -> Vec<Case> {
    vec![
        pass("vadd_ok", 1),
        pass("cast_ok", 9),
        pass("matmul_ok", 1),
        pass("matmul_transposed_ok", 2),
        pass("matmul_partial_sum_ok", 2),
        // The runtime's on-chip sum (`cube_ops.h`: `MatmulTnSumStep`, `MatmulSumAddInto`,
        // `tests/cpp/on_chip_sum.cpp`): a weight-gradient block summed in L0C over three slots'
        // row blocks (one slot empty, one partly filled) and added once, bit for bit the fixed
        // order; `SetFixSplit` refuses what its page forbids; a block twice the base block stops.
        pass("on_chip_sum", 2),
        Case {
            args: &["wide"],
            ..error("on_chip_sum", "matmul_shape", "needs singleCoreM == baseM and singleCoreN == baseN")
        },
        pass("flags_ok", 1),
        pass("copy_pad_ok", 2),
        pass("vector_ops_ok", 17),
        pass("two_launches", 2),
        pass("put_signal_ok", 2),
        Case { args: &["fresh"], ..pass("stale_cache", 1) },
        pass("own_deadline", 2),
        pass("pipe_v_dependency", 0),
        Case {
            env: &[("HPMOE_EMU_STRICT_PIPE_V", "1")],
            ..error(
                "pipe_v_dependency",
                "unsynchronised_read",
                "Mul#4 reads UB offset 512 last written by V instruction Add#3",
            )
        },
        error("missing_enque", "unsynchronised_read", "last written by MTE2 instruction DataCopy#1"),
        error("datacopy_30_bytes", "datacopy_unaligned_length", "30 bytes"),
        error("ub_over_capacity", "local_over_capacity", "188416 available"),
        error("gm_one_past", "gm_out_of_bounds", "runs 4 bytes past the end"),
        error("flag_16_sets", "flag_overflow", "already counts 15"),
        error("flag_without_sync_base", "sync_base_not_set", "before AscendC::SetSyncBaseAddr"),
        error("put_read_before_quiet", "read_before_quiet", "has not landed"),
        error("signal_before_quiet", "signal_before_quiet", "aclshmem_putmem_nbi"),
        error("atomic_never_quieted", "deadlock", "aclshmem_signal_wait_until"),
        error("syncall_skip", "deadlock", "waits SyncAll"),
        error("stale_cache", "deadlock", "polls"),
        error("write_not_complete", "gm_write_not_complete", "MTE3 instruction DataCopy#1"),
        error("nbi_source_modified", "nbi_source_modified", "before its aclshmem_quiet"),
        error("double_free", "double_free", "already free"),
        error("event_double_set", "event_double_set", "SetFlag<MTE2_V>(0)"),
        error("event_ids_exhausted", "event_ids_exhausted", "every id of V_S has a SetFlag pending"),
        error("guard_fault", "gm_guard_fault", "guard page"),
        error("flag_before_write_done", "gm_write_not_complete", "not known complete to pipe V"),
        error("syncall_reserved_id", "flag_id_reserved", "11..14"),
        error("vector_unaligned", "vector_unaligned", "UB offset 4"),
        error("local_past_end", "local_out_of_bounds", "element 64 of a LocalTensor of 64 elements"),
        error("matmul_shape_too_big", "matmul_shape", "exceeds the tiling's singleCore sizes (16, 32, 32)"),
        error("matmul_trans_untyped", "matmul_mode", "SetTensorB with isTranspose = true"),
        Case {
            args: &["no_start"],
            ..error("matmul_partial_misuse", "matmul_misuse", "with no block in CO1 to add to")
        },
        Case {
            args: &["fetch_twice"],
            ..error("matmul_partial_misuse", "matmul_misuse", "GetTensorC with no block in CO1")
        },
        Case { args: &["unfetched"], ..error("matmul_partial_misuse", "matmul_misuse", "that no GetTensorC fetched") },
        Case {
            args: &["over_base"],
            ..error("matmul_partial_misuse", "matmul_shape", "needs singleCoreM == baseM and singleCoreN == baseN")
        },
        Case {
            args: &["unaligned"],
            ..error("matmul_partial_misuse", "matmul_unaligned", "4 bytes past a 32-byte boundary")
        },
        error("atomic_left_on", "atomic_left_on", "SetAtomicAdd<float>"),
        error("queue_depth", "queue_depth_exceeded", "depth 1"),
        error("flag_outstanding", "flag_outstanding", "id=9 count=1"),
        error("filler_overwrite", "gm_filler_overwritten", "byte 4 before its start"),
        error("gm_read_own_pending", "unsynchronised_read", "MTE2 reads global memory"),
        error("kernel_type", "kernel_type", "type=0"),
        error("undefined_store", "undefined_store", "byte 26 of the local source was never written"),
        error("undefined_read", "undefined_read", "element 32 was never written"),
        Case {
            env: &[("HPMOE_EMU_TIMEOUT_MS", "300")],
            ..error("spin_timeout", "timeout", "HPMOE_EMU_TIMEOUT_MS=300")
        },
    ]
}

fn emulator_dir() -> PathBuf {
    hpmoe_ascendc::runtime::emulator_dir().to_path_buf()
}

fn gxx_available() -> bool {
    Command::new("g++").arg("--version").output().is_ok_and(|o| o.status.success())
}

fn compile(args: &[String]) -> Result<(), String> {
    let out = Command::new("g++").args(args).output().map_err(|e| e.to_string())?;
    if out.status.success() { Ok(()) } else { Err(String::from_utf8_lossy(&out.stderr).into_owned()) }
}

/// Runs `jobs` on two threads (the machine has two cores), collecting the first error.
fn parallel<T: Send>(jobs: Vec<T>, run: impl Fn(T) -> Result<(), String> + Sync) -> Result<(), String> {
    let queue = Mutex::new(jobs);
    let failure = Mutex::new(None);
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                loop {
                    let Some(job) = queue.lock().unwrap().pop() else { break };
                    if let Err(e) = run(job) {
                        failure.lock().unwrap().get_or_insert(e);
                    }
                }
            });
        }
    });
    failure.into_inner().unwrap().map_or(Ok(()), Err)
}

/// The emulator's objects, compiled once for the whole test.
fn build_emulator(dir: &Path) -> Vec<PathBuf> {
    let emu = emulator_dir();
    let mut sources: Vec<PathBuf> = std::fs::read_dir(emu.join("src"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "cpp"))
        .collect();
    sources.sort();
    let objects: Vec<PathBuf> = sources.iter().map(|s| dir.join(s.file_stem().unwrap()).with_extension("o")).collect();
    let jobs: Vec<(PathBuf, PathBuf)> = sources.into_iter().zip(objects.iter().cloned()).collect();
    parallel(jobs, |(src, obj)| {
        let mut args: Vec<String> = FLAGS.iter().map(|s| s.to_string()).collect();
        args.extend(["-Wextra".into(), "-Werror".into(), "-I".into(), emu.join("include").display().to_string()]);
        args.extend(["-c".into(), src.display().to_string(), "-o".into(), obj.display().to_string()]);
        compile(&args).map_err(|e| format!("{}:\n{e}", src.display()))
    })
    .unwrap_or_else(|e| panic!("the emulator does not compile: {e}"));
    objects
}

/// A test kernel's source: the emulator's own (`emulator/tests/`), or one that runs the hpmoe
/// runtime's headers on the emulator (`tests/cpp/`).
fn kernel_source(name: &str) -> PathBuf {
    let own = emulator_dir().join("tests").join(format!("{name}.cpp"));
    if own.exists() { own } else { Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cpp").join(format!("{name}.cpp")) }
}

fn build_kernels(dir: &Path, objects: &[PathBuf], names: Vec<&'static str>) {
    let emu = emulator_dir();
    let runtime = hpmoe_ascendc::runtime::source_include_dir().to_path_buf();
    parallel(names, |name| {
        let mut args: Vec<String> = FLAGS.iter().map(|s| s.to_string()).collect();
        for inc in [emu.join("include"), emu.join("tests"), runtime.clone()] {
            args.extend(["-I".into(), inc.display().to_string()]);
        }
        args.push(kernel_source(name).display().to_string());
        args.extend(objects.iter().map(|o| o.display().to_string()));
        args.extend(["-o".into(), dir.join(name).display().to_string()]);
        compile(&args).map_err(|e| format!("{name}.cpp:\n{e}"))
    })
    .unwrap_or_else(|e| panic!("a test kernel does not compile: {e}"));
}

fn judge(case: &Case, stdout: &str) -> Result<(), String> {
    let status = stdout.lines().find_map(|l| l.strip_prefix("status=")).ok_or("no status line")?;
    let findings: Vec<&str> = stdout.lines().filter(|l| l.starts_with("error ") || l.starts_with("state ")).collect();
    match case.expect {
        Expect::Pass { checks } => {
            let lines: Vec<&str> = stdout.lines().filter(|l| l.starts_with("check ")).collect();
            if status != "0" || !findings.is_empty() {
                return Err(format!("expected a clean run, got status {status}"));
            }
            if lines.len() < checks || lines.iter().any(|l| !l.ends_with(" ok")) {
                return Err(format!("expected {checks} passing checks"));
            }
            Ok(())
        }
        Expect::Error { kind, detail } => {
            let first = findings.first().ok_or("no finding reported")?;
            if status == "0" {
                return Err("status 0 despite the finding".into());
            }
            if !first.starts_with(&format!("error {kind} ")) {
                return Err(format!("expected `error {kind} ...` first"));
            }
            if !findings.iter().any(|l| l.contains(detail)) {
                return Err(format!("expected {detail:?} in the report"));
            }
            Ok(())
        }
    }
}

#[test]
fn emulator_runs_correct_kernels_exactly_and_stops_each_violation() {
    if !gxx_available() {
        eprintln!("note: g++ not found; skipping the emulator tests");
        return;
    }
    let dir = temp_dir("emulator-api");
    let objects = build_emulator(&dir);
    let mut names: Vec<&'static str> = cases().iter().map(|c| c.kernel).collect();
    names.sort();
    names.dedup();
    build_kernels(&dir, &objects, names);
    let mut failures = Vec::new();
    for case in cases() {
        let out = Command::new(dir.join(case.kernel))
            .args(case.args)
            .envs(case.env.iter().copied())
            .output()
            .unwrap_or_else(|e| panic!("{}: {e}", case.kernel));
        let stdout = String::from_utf8_lossy(&out.stdout);
        if let Err(why) = judge(&case, &stdout) {
            failures.push(format!("{} {:?}: {why}\n{stdout}", case.kernel, case.args));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// g++ -fsyntax-only with the emulator's headers (instead of devkit-decl's).
fn emulator_syntax(file: &Path) -> Result<(), String> {
    let include = emulator_dir().join("include");
    let args: Vec<String> = ["-std=c++17", "-fsyntax-only", "-Wall", "-Wextra", "-Werror", "-I"]
        .iter()
        .map(|s| s.to_string())
        .chain([include.display().to_string(), file.display().to_string()])
        .collect();
    compile(&args)
}

#[test]
fn emulator_headers_keep_the_declaration_rules() {
    if !gxx_available() {
        eprintln!("note: g++ not found; skipping the emulator tests");
        return;
    }
    let dir = temp_dir("emulator-decl");
    let ok = dir.join("ok.cpp");
    std::fs::write(&ok, body(ACCEPTED)).unwrap();
    emulator_syntax(&ok).unwrap_or_else(|e| panic!("documented calls rejected by the emulator:\n{e}"));
    for (name, code, expected) in REJECTED {
        let file = dir.join(format!("{name}.cpp"));
        std::fs::write(&file, body(code)).unwrap();
        match emulator_syntax(&file) {
            Ok(()) => panic!("{name}: the emulator accepted `{code}`"),
            Err(out) => assert!(out.contains(expected), "{name}: expected {expected:?} in:\n{out}"),
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
