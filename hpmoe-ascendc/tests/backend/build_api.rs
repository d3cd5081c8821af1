//! The build-script API: taskflows from a Rust source file (the shared front-end) and from the
//! builder API become kernel files under the output folder, rewritten only when they change;
//! taskflow errors come back as `file:line:column` build errors; a toolkit compiler, when there
//! is one, compiles each kernel and its failure fails the build.

use crate::common;

use common::taskflows::small;
use common::{gxx, temp_dir};
use hpmoe_ascendc::error::ToolkitError;
use hpmoe_ascendc::{Build, BuildErrorKind, BuildFailure, EmitErrorKind};
use std::path::{Path, PathBuf};

fn dsl(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/dsl").join(name)
}

fn user_ops_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cpp")
}

fn build(out: &Path) -> Build {
    let mut b = Build::new();
    b.out_dir(out).cargo_metadata(false).no_toolkit().include("user_ops.h").include_dir(user_ops_dir());
    b
}

#[test]
fn a_source_file_and_a_builder_taskflow_become_kernels() {
    let out = temp_dir("build-ok");
    let result = build(&out).file(dsl("moe.rs")).taskflow(small()).try_compile("moe").unwrap();
    assert_eq!(result.dir, out);
    assert!(result.toolkit.is_none());
    let names: Vec<&str> = result.kernels.iter().map(|k| k.name.as_str()).collect();
    assert_eq!(names, ["mini_moe", "small"]);
    for k in &result.kernels {
        assert!(k.files.iter().all(|f| f.was_written()));
        assert!(k.object.is_none(), "no toolkit: sources only");
        for f in ["cpp", "_schedule.h", "_schedule.bin", "_flags.bin"] {
            let file = if f == "cpp" { format!("{}.cpp", k.name) } else { format!("{}{f}", k.name) };
            assert!(out.join(&file).is_file(), "{file}");
        }
    }
    assert!(out.join("include/hpmoe/runtime.h").is_file());
    if let Some(check) = gxx() {
        let check = check.include(&out).include(user_ops_dir());
        for k in &result.kernels {
            check.run(&out.join(format!("{}.cpp", k.name))).unwrap_or_else(|e| panic!("{e}"));
        }
    }
    // Building again changes nothing on disk.
    let again = build(&out).file(dsl("moe.rs")).taskflow(small()).try_compile("moe").unwrap();
    assert!(again.kernels.iter().flat_map(|k| &k.files).all(|f| !f.was_written()));
    assert!(again.runtime.iter().all(|f| !f.was_written()));
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn taskflow_errors_are_build_errors_at_file_line_column() {
    let out = temp_dir("build-err");
    let err = build(&out).file(dsl("errors.rs")).try_compile("bad").unwrap_err();
    let path = dsl("errors.rs").display().to_string();
    // Both regions of the unstrided copy are reported, each at its own column.
    assert_eq!(err.kinds(), [BuildErrorKind::Source, BuildErrorKind::Emit, BuildErrorKind::Emit], "{err}");
    let rendered: Vec<String> = err.failures.iter().map(ToString::to_string).collect();
    assert!(
        rendered[0].starts_with(&format!("{path}:7:9: error: `copy` runs on aiv cores, but tile `a` is an aic tile")),
        "{err}"
    );
    assert!(rendered[1].starts_with(&format!("{path}:17:14: error: taskflow `unstrided`, tile `c`:")), "{err}");
    let at: Vec<(u32, u32, EmitErrorKind)> = err.failures[1..]
        .iter()
        .map(|f| match f {
            BuildFailure::Emit { at: Some(at), error } => (at.line, at.column, error.kind),
            other => panic!("{other}"),
        })
        .collect();
    assert_eq!(at, [(17, 14, EmitErrorKind::UnstridedRegion), (17, 45, EmitErrorKind::UnstridedRegion)], "{err}");
    assert!(!out.join("broken.cpp").exists(), "nothing is written when a taskflow fails");
    // A file that is not Rust, and one that does not exist.
    let bad = out.join("garbage.rs");
    std::fs::write(&bad, "fn (").unwrap();
    let err = build(&out).file(&bad).file(out.join("missing.rs")).try_compile("bad").unwrap_err();
    assert_eq!(err.kinds(), [BuildErrorKind::Source, BuildErrorKind::UnreadableSource], "{err}");
    assert!(
        matches!(&err.failures[0], BuildFailure::Source { at, .. } if at.file == bad.display().to_string() && at.line == 1),
        "{err}"
    );
    assert!(err.failures[1].to_string().contains("cannot read the file"), "{err}");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn without_a_toolkit_sources_only() {
    if std::env::var_os("ASCEND_HOME_PATH").is_some_and(|v| !v.is_empty()) {
        eprintln!("note: ASCEND_HOME_PATH is set; skipping the no-toolkit check");
        return;
    }
    let out = temp_dir("build-env");
    let mut b = Build::new();
    // The default: whatever ASCEND_HOME_PATH says, which here is nothing.
    let result =
        b.out_dir(&out).cargo_metadata(false).taskflow(small()).include("user_ops.h").try_compile("k").unwrap();
    assert!(result.toolkit.is_none());
    assert!(result.kernels.iter().all(|k| k.object.is_none()));
    assert!(!out.join("small.o").exists());
    let _ = std::fs::remove_dir_all(&out);
}

/// A stand-in for the toolkit's compiler: records its arguments, then writes the object or fails.
fn fake_toolkit(root: &Path, fail: bool) {
    let bin = root.join("compiler/ccec_compiler/bin");
    std::fs::create_dir_all(&bin).unwrap();
    let script = if fail {
        "#!/bin/sh\necho \"$@\" > \"$(dirname \"$0\")/args\"\necho 'small.cpp:1:1: error: boom' >&2\nexit 1\n"
            .to_string()
    } else {
        "#!/bin/sh\necho \"$@\" > \"$(dirname \"$0\")/args\"\nwhile [ $# -gt 0 ]; do if [ \"$1\" = -o ]; then echo obj > \"$2\"; fi; shift; done\n".to_string()
    };
    let path = bin.join("bisheng");
    std::fs::write(&path, script).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

#[test]
#[cfg(unix)]
fn a_toolkit_compiles_each_kernel_and_its_errors_fail_the_build() {
    let root = temp_dir("toolkit");
    let out = root.join("out");
    fake_toolkit(&root.join("ok"), false);
    let result = build(&out).toolkit(root.join("ok")).taskflow(small()).try_compile("k").unwrap();
    let obj = out.join("small.o");
    assert_eq!(result.kernels[0].object.as_deref(), Some(obj.as_path()));
    assert_eq!(std::fs::read_to_string(&obj).unwrap(), "obj\n");
    let args = std::fs::read_to_string(root.join("ok/compiler/ccec_compiler/bin/args")).unwrap();
    assert!(args.starts_with("-x asc --npu-arch=dav-2201 -std=c++17 -O2 -c "), "{args}");
    assert!(args.contains(&format!("{} -o {}", out.join("small.cpp").display(), obj.display())), "{args}");
    assert!(args.contains(&format!("-I {}", user_ops_dir().display())), "{args}");

    fake_toolkit(&root.join("bad"), true);
    std::fs::remove_file(&obj).unwrap();
    let err = build(&out).toolkit(root.join("bad")).taskflow(small()).try_compile("k").unwrap_err();
    let [BuildFailure::Toolkit(ToolkitError::CompileFailed { output, .. })] = err.failures.as_slice() else {
        panic!("{err}")
    };
    assert!(output.contains("small.cpp:1:1: error: boom"), "{err}");
    let err = build(&out).toolkit(root.join("none")).taskflow(small()).try_compile("k").unwrap_err();
    assert!(matches!(err.failures.as_slice(), [BuildFailure::Toolkit(ToolkitError::NoCompiler { .. })]), "{err}");
    assert!(err.to_string().contains("holds no Ascend C compiler"), "{err}");
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn without_out_dir_outside_a_build_script_it_says_so() {
    if std::env::var_os("OUT_DIR").is_some() {
        return;
    }
    let err = Build::new().cargo_metadata(false).no_toolkit().taskflow(small()).try_compile("k").unwrap_err();
    assert_eq!(err.failures, [BuildFailure::NoOutDir]);
    assert!(err.to_string().contains("OUT_DIR is not set"), "{err}");
}
