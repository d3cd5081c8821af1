//! Emission: the generated source of a small taskflow as reviewable snapshots; every generated
//! kernel (small cases and the DeepSeek-V3 EP8 flagship) through `g++ -fsyntax-only -Wall
//! -Wextra -Werror` against the declaration-only devkit; same input, byte-identical files; and
//! the errors for what the backend cannot emit.

use crate::common;

use common::taskflows::{all_ops, backward_matmuls, backward_vector_ops, guarded, small};
use common::{syntax_check, temp_dir};
use expect_test::expect_file;
use hpmoe_ascendc::{EmitErrorKind, EmitOptions, FlagPolicy, emit, emit_with};
use hpmoe_core::model::{CoreKind, DType, MachineProfile, Taskflow};
use hpmoe_core::schedule::SimpleCost;
use hpmoe_core::table::ScheduleTable;
use hpmoe_host::moe::MoeShape;

/// Compiled with hardware flags (the default of a plan).
fn compile(tf: &Taskflow) -> hpmoe_core::Compiled {
    compile_with_flags(tf, FlagPolicy::default())
}

fn compile_with_flags(tf: &Taskflow, flags: FlagPolicy) -> hpmoe_core::Compiled {
    hpmoe_core::compile_with(tf, &SimpleCost::default(), &hpmoe_core::CompileOptions { flags })
        .unwrap_or_else(|d| panic!("{}", d.render(&tf.sources)))
}

fn no_flags() -> FlagPolicy {
    FlagPolicy { enabled: false, ..FlagPolicy::default() }
}

fn with_user_ops() -> EmitOptions {
    EmitOptions { includes: vec!["user_ops.h".into()], ..EmitOptions::default() }
}

/// The kernel's own part of NAME_schedule.h (the table part is hpmoe-core's, tested there).
fn kernel_section(header: &str) -> &str {
    &header[header.find("/* ---- Kernel `").expect("kernel section")..]
}

#[test]
fn small_kernel_snapshot() {
    let tf = small();
    let k = emit_with(&tf, &compile(&tf), &with_user_ops()).unwrap();
    expect_file!["snapshots/small.cpp"].assert_eq(&k.cpp);
    expect_file!["snapshots/small_kernel_section.h"].assert_eq(kernel_section(&k.header));
    expect_file!["snapshots/small_launch.cpp"].assert_eq(&k.launcher);
}

/// The `case` of one tile family in the kernel's `Run` switch.
fn family_case<'a>(cpp: &'a str, constant: &str) -> &'a str {
    let start = cpp.find(&format!("            case {constant}: {{")).unwrap_or_else(|| panic!("no case {constant}"));
    let rest = &cpp[start..];
    let tail = "                return;\n            }\n";
    &rest[..rest.find(tail).expect("the case ends") + tail.len()]
}

#[test]
fn guarded_kernel_cases_snapshot() {
    let tf = guarded();
    let k = emit(&tf, &compile(&tf)).unwrap();
    let cases: Vec<&str> = ["GMM", "COMBINE", "WEIGHTED_SUM"]
        .iter()
        .map(|f| family_case(&k.cpp, &format!("HPMOE_GUARDED_FAMILY_{f}")))
        .collect();
    expect_file!["snapshots/guarded_cases.cpp"].assert_eq(&cases.concat());
    assert!(k.cpp.contains("//   gmm (aic), grid src < 2, b < 2: matmul (guarded: run_if_above)\n"), "{}", k.cpp);
    // The unguarded family has no condition.
    assert!(!family_case(&k.cpp, "HPMOE_GUARDED_FAMILY_ANNOUNCE").contains("ReadCount"));
}

#[test]
fn guarded_kernels_are_deterministic_and_pass_the_syntax_check() {
    let tf = guarded();
    let c = compile(&tf);
    let first = emit(&tf, &c).unwrap();
    let second = emit(&tf, &compile(&tf)).unwrap();
    for ((name, a), (_, b)) in first.files().iter().zip(second.files().iter()) {
        assert!(a == b, "{name} differs between two runs");
    }
    let dir = temp_dir("emit-guarded");
    syntax_check(&first, &dir.join("guarded"));
    syntax_check(&emit(&tf, &compile_with_flags(&tf, no_flags())).unwrap(), &dir.join("guarded_no_flags"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn small_kernels_pass_the_syntax_check() {
    let dir = temp_dir("emit-small");
    let tf = small();
    let c = compile(&tf);
    syntax_check(&emit_with(&tf, &c, &with_user_ops()).unwrap(), &dir.join("small"));
    let plain = compile_with_flags(&tf, no_flags());
    syntax_check(&emit_with(&tf, &plain, &with_user_ops()).unwrap(), &dir.join("small_no_flags"));
    let tf = all_ops();
    syntax_check(&emit(&tf, &compile(&tf)).unwrap(), &dir.join("all_ops"));
    // The backward's ops: transposed Matmul operands and the four vector ops.
    for tf in [backward_matmuls(2), backward_vector_ops(3, 2, 40, 24, DType::Bf16)] {
        syntax_check(&emit(&tf, &compile(&tf)).unwrap(), &dir.join(&tf.name));
    }
    for ranks in [1, 2, 4] {
        let tf = MoeShape::tiny(ranks).taskflow().unwrap();
        syntax_check(&emit(&tf, &compile(&tf)).unwrap(), &dir.join(format!("tiny{ranks}")));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn deepseek_ep8_flagship_passes_the_syntax_check() {
    let tf = MoeShape::deepseek_v3(8, 4096).taskflow().unwrap();
    let c = compile(&tf);
    let k = emit(&tf, &c).unwrap();
    // The table lives in the .bin; the source stays small.
    assert!(k.cpp.len() < 16 * 1024, "moe_ffn.cpp is {} bytes", k.cpp.len());
    assert_eq!(k.table_bin.len(), k.table.total_bytes());
    assert!(!k.flags.edges.is_empty());
    assert_eq!(k.matmul_groups.len(), 1);
    assert_eq!((k.matmul_groups[0].m, k.matmul_groups[0].n, k.matmul_groups[0].k), (128, 896, 7168));
    // At EP 8 a (dst, e) pair's rows are one block: the dispatch's `b` has one value, so it is
    // declared 0 (the offsets' `b` terms fold away) rather than read from the instance's grid.
    let dispatch = family_case(&k.cpp, "HPMOE_MOE_FFN_FAMILY_DISPATCH");
    assert!(dispatch.contains("const int64_t b = 0;  // extent 1 at this shape\n"), "{dispatch}");
    assert!(dispatch.contains("const int64_t e = g[1];\n"), "{dispatch}");
    let dir = temp_dir("emit-ep8");
    syntax_check(&k, &dir);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn deepseek_ep8_natural_flagship_passes_the_syntax_check() {
    let tf = MoeShape::deepseek_v3_natural(8, 4096).taskflow().unwrap();
    let c = compile(&tf);
    let k = emit(&tf, &c).unwrap();
    assert!(k.cpp.len() < 24 * 1024, "moe_ffn.cpp is {} bytes", k.cpp.len());
    // Every guarded family reads its count; the weighted sum gathers.
    assert_eq!(k.cpp.matches("if (hpmoe::ReadCount(").count(), 5);
    assert!(k.cpp.contains("if (hpmoe::ReadCount(args.recv_counts, 32 * src + e) > 192 * b) {"), "{}", k.cpp);
    assert_eq!(k.cpp.matches("hpmoe::GatherWeightedAccumulate(vec,").count(), 1);
    assert_eq!((k.matmul_groups[0].m, k.matmul_groups[0].n, k.matmul_groups[0].k), (192, 896, 7168));
    let dir = temp_dir("emit-ep8-natural");
    syntax_check(&k, &dir);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn same_input_gives_byte_identical_files() {
    let tf = MoeShape::tiny(4).taskflow().unwrap();
    let first = emit(&tf, &compile(&tf)).unwrap();
    let second = emit(&tf, &compile(&tf)).unwrap();
    for ((name, a), (_, b)) in first.files().iter().zip(second.files().iter()) {
        assert!(a == b, "{name} differs between two runs");
    }
    let dir = temp_dir("emit-det");
    let written = first.write_to(&dir).unwrap();
    assert!(written.iter().all(|w| w.was_written()));
    assert!(second.write_to(&dir).unwrap().iter().all(|w| !w.was_written()), "identical files are not touched");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_kernel_table_is_the_compiled_one_minus_flagged_dependencies() {
    let tf = MoeShape::tiny(2).taskflow().unwrap();
    let plain_compiled = compile_with_flags(&tf, no_flags());
    let plain = emit(&tf, &plain_compiled).unwrap();
    assert_eq!(plain.table_bin, plain_compiled.table.to_bytes(), "the kernel table is the compiled table");
    assert!(plain.flags.edges.is_empty());
    assert!(plain.cpp.contains("constexpr uint16_t kFlag = hpmoe::kNoFlag;"));
    let c = compile(&tf);
    let flagged = emit(&tf, &c).unwrap();
    let table = ScheduleTable::from_bytes(&flagged.table_bin).unwrap();
    assert_eq!(table, flagged.table);
    assert_eq!(table, c.table, "one table: the compiled one");
    assert_eq!(flagged.flags_bin, c.flags_bin, "one flag plan: the compiled one");
    assert_eq!(
        table.signals().len() + flagged.flags.edges.len(),
        plain_compiled.table.signals().len(),
        "each flagged dependency leaves the counters"
    );
    assert_eq!(&flagged.flags_bin[..8], b"HPMOEFLG");
    assert_eq!(flagged.flags_bin.len() % 4, 0);
    let crc = common::crc32_independent(&flagged.flags_bin[16..]);
    assert_eq!(u32::from_le_bytes(flagged.flags_bin[12..16].try_into().unwrap()), crc);
    assert_eq!(hpmoe_ascendc::flags::plan_checksum(&flagged.flags_bin), Some(crc));
    assert!(flagged.header.contains(&format!("#define HPMOE_MOE_FFN_FLAGGED_EDGES {}u", flagged.flags.edges.len())));
    assert!(flagged.header.contains(&format!("#define HPMOE_MOE_FFN_CHECKSUM 0x{:08X}u", c.table.checksum())));
    // The flag plan decodes back against its table (the edges themselves are not in the blob).
    let decoded = hpmoe_ascendc::flags::decode_plan(&flagged.flags_bin, &c.table).unwrap();
    assert_eq!(
        (decoded.set_after, decoded.waits_before, decoded.totals),
        (c.flags.set_after.clone(), c.flags.waits_before.clone(), c.flags.totals.clone())
    );
    assert!(hpmoe_ascendc::flags::decode_plan(&flagged.flags_bin, &plain_compiled.table).is_err());
}

#[test]
fn what_the_backend_cannot_emit_is_an_error_at_the_op() {
    // A region whose rows are not one stride apart.
    let mut tf = Taskflow::new("bad_region", MachineProfile::small(1, 1));
    let x = tf.input("x", DType::F32, &[4, 8, 16]);
    let y = tf.output("y", DType::F32, &[4, 8, 16]);
    tf.tile("copy", CoreKind::Aiv, |t| {
        let b = t.grid("b", 2);
        t.op("copy", [x.slice(b.clone() * 2, 2).slice(0, 4), y.slice(b * 2, 2).slice(0, 4)]);
    });
    let errors = emit(&tf, &compile(&tf)).unwrap_err();
    assert_eq!(errors.kinds(), [EmitErrorKind::UnstridedRegion, EmitErrorKind::UnstridedRegion], "{errors}");
    let e = &errors.errors[0];
    assert_eq!(e.family.as_deref(), Some("copy"));
    assert!(e.message.contains("not a strided matrix"), "{e}");
    assert_eq!(e.loc, tf.families[0].body[0].args[0].loc, "the error points at the region");
    assert_eq!(errors.errors[1].loc, tf.families[0].body[0].args[1].loc, "both regions are reported");

    // An op the registry knows but the backend has no emission for.
    let mut tf = Taskflow::new("no_emit", MachineProfile::small(1, 1));
    tf.ops
        .register(hpmoe_core::model::OpSpec::new(
            "mystery",
            CoreKind::Aiv,
            vec![hpmoe_core::model::Param::write("dst")],
            hpmoe_core::model::WorkModel::Copy,
            "?",
        ))
        .unwrap();
    let y = tf.output("y", DType::F32, &[4, 16]);
    tf.tile("t", CoreKind::Aiv, |t| t.op("mystery", [y.whole()]));
    let e = emit(&tf, &compile(&tf)).unwrap_err();
    assert_eq!(e.kinds(), [EmitErrorKind::NoEmission]);
    assert!(e.to_string().starts_with("taskflow `no_emit`, tile `t`: op `mystery` has no AscendC emission"), "{e}");

    // A gather whose table rows are not the output's rows.
    let mut tf = Taskflow::new("bad_gather", MachineProfile::small(1, 1));
    let table = tf.input("table", DType::Bf16, &[16, 32]);
    let index = tf.input("index", DType::I32, &[8, 2]);
    let weight = tf.input("weight", DType::F32, &[8, 2]);
    let out = tf.output("out", DType::F32, &[8, 16]);
    tf.tile("sum", CoreKind::Aiv, |t| {
        t.op("zero", [out.whole()]);
        t.op("gather_weighted_accumulate", [table.whole(), index.whole(), weight.whole(), out.whole()]);
    });
    let e = emit(&tf, &compile(&tf)).unwrap_err();
    assert_eq!(e.kinds(), [EmitErrorKind::ShapeMismatch]);
    assert_eq!(
        e.to_string(),
        "taskflow `bad_gather`, tile `sum`: gather_weighted_accumulate: the table `table[:, :]` (32 columns) and \
         `out[:, :]` (16) differ"
    );

    // A reserved flag id: refused when compiling.
    let tf = small();
    let options = hpmoe_core::CompileOptions { flags: FlagPolicy { enabled: true, flag_id: 11 } };
    let err = hpmoe_core::compile_with(&tf, &SimpleCost::default(), &options).unwrap_err();
    assert!(err.render(&tf.sources).contains("reserved by SyncAll"), "{}", err.render(&tf.sources));
}
