//! Whether a MoE-FFN taskflow written in the `#[taskflow]` DSL is the one hpmoe's builder makes
//! ([`MoeShape::pass_taskflow`]): the same structure, and the builder's taskflow plans to the
//! same schedule table and flag plan, byte for byte. Shared by the DSL examples of the backward
//! and the training step and by their tests, for the tables the macro embeds and for those the
//! shared front-end (`hpmoe_core::syntax`, as `hpmoe_ascendc::Build` runs it) plans.

use crate::ExampleError;
use crate::cli::Options;
use hpmoe_core::model::Taskflow;
use hpmoe_host::moe::{DispatchPrecision, MoeShape, Pass, under_dsl_names};

/// What [`compare_with_builder`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BuilderComparison {
    /// The IRs are equal up to names and source locations ([`Taskflow::same_structure`]).
    pub same_structure: bool,
    /// The builder's schedule table is the DSL's, byte for byte.
    pub same_table: bool,
    /// The builder's flag plan is the DSL's, byte for byte.
    pub same_flags: bool,
}

impl BuilderComparison {
    /// Whether all three hold.
    pub fn passed(&self) -> bool {
        self.same_structure && self.same_table && self.same_flags
    }
}

/// Compares the DSL's taskflow `dsl`, its schedule table `table` and flag plan `flags` (as
/// planned with the default [`hpmoe_core::PlanOptions`], as the macro and `Build` plan) with the
/// builder's `pass` of `shape`, planned the same way.
///
/// # Errors
/// When the builder refuses the shape or its taskflow does not plan.
pub fn compare_with_builder(
    dsl: &Taskflow,
    table: &[u8],
    flags: &[u8],
    shape: &MoeShape,
    pass: Pass,
) -> Result<BuilderComparison, ExampleError> {
    let built = under_dsl_names(shape.pass_taskflow(pass).map_err(ExampleError::Shape)?);
    compare_with(dsl, table, flags, &built)
}

/// [`compare_with_builder`] against the builder's taskflow `built` (under the DSL's names).
fn compare_with(
    dsl: &Taskflow,
    table: &[u8],
    flags: &[u8],
    built: &Taskflow,
) -> Result<BuilderComparison, ExampleError> {
    let same_structure = dsl.same_structure(built);
    let compiled = hpmoe_core::plan(built).map_err(|d| ExampleError::plan(built, d))?;
    Ok(BuilderComparison {
        same_structure,
        same_table: compiled.table.to_bytes() == table,
        same_flags: compiled.flags_bin == flags,
    })
}

/// Prints the size of a `#[taskflow]` program's schedule table: ranks, cores, instances,
/// entries, signals.
///
/// # Panics
/// If the table the macro emitted does not decode (the macro only emits tables that do).
pub fn describe_table(program: &hpmoe_core::dsl::Program) {
    let table = program.table().expect("the table the macro emitted decodes");
    let view = table.view();
    println!(
        "taskflow `{}`: {} ranks x {} cores, {} tile instances per rank, {} table entries, {} signals, {} KiB",
        view.name(),
        view.header.ranks,
        view.header.cores_per_rank,
        view.header.instances_per_rank,
        view.entries.len(),
        view.signals.len(),
        view.total_bytes() / 1024
    );
}

/// Prints the DSL program's compiled schedule table and whether it is the builder's `pass` of
/// `shape` (named `name` in the output, e.g. `MoeShape::deepseek_v3(8, 4096)`); returns whether
/// it is.
pub fn report(program: &hpmoe_core::dsl::Program, shape: &MoeShape, name: &str, pass: Pass) -> bool {
    describe_table(program);
    let dsl = program.taskflow().expect("the IR the macro emitted decodes");
    let bytes = program.table_bytes().expect("the embedded table unpacks");
    match compare_with_builder(&dsl, &bytes, program.flags_bytes, shape, pass) {
        Ok(c) => {
            println!("same structure as {name}'s {}: {}", pass.name(), c.same_structure);
            println!("same schedule table: {}, same flag plan: {}", c.same_table, c.same_flags);
            c.passed()
        }
        Err(e) => {
            println!("{name}'s {}: {e}", pass.name());
            false
        }
    }
}

/// A taskflow of a DSL source file as the front-end planned it ([`plan_at_ranks`]).
#[derive(Clone, Debug)]
pub struct PlannedTaskflow {
    /// The IR the front-end lowered.
    pub taskflow: Taskflow,
    /// Its schedule table.
    pub table: Vec<u8>,
    /// Its flag plan.
    pub flags: Vec<u8>,
}

/// The INT8-dispatch counterpart of each layout file of `examples/dsl/` a DSL example includes
/// (as it is written in an `include!`, closing quote and all): the same layer with INT8
/// dispatch, whose tiles after GMM1 and backward are the BF16 layer's files, unchanged.
pub const INT8_LAYOUTS: [(&str, &str); 4] = [
    ("dsl/moe_ffn.rs\"", "dsl/moe_ffn_int8.rs\""),
    ("dsl/moe_ffn_backward_inputs.rs\"", "dsl/moe_ffn_int8_backward_inputs.rs\""),
    ("dsl/moe_ffn_natural.rs\"", "dsl/moe_ffn_natural_int8.rs\""),
    ("dsl/moe_ffn_natural_backward_inputs.rs\"", "dsl/moe_ffn_natural_int8_backward_inputs.rs\""),
];

/// A DSL source file's taskflows compiled as written but at another EP or with another dispatch
/// precision: what [`plan_variant`] changes.
#[derive(Clone, Copy, Debug)]
pub struct Variant<'a> {
    /// Every `ranks = 8)]` of the source replaced by this.
    pub ranks: u32,
    /// With [`DispatchPrecision::Int8`], every BF16 layout file the source includes replaced by
    /// its INT8 counterpart ([`INT8_LAYOUTS`]).
    pub dispatch: DispatchPrecision,
    /// The taskflows to plan, by name; all of them when empty.
    pub only: &'a [&'a str],
}

/// The `#[taskflow]` functions of the DSL source `src` (file `file` of folder `dir`, its
/// `include!`s resolved there) at `ranks` ranks: every `ranks = 8)]` of the source replaced, then
/// lowered and planned by the shared front-end (`hpmoe_core::syntax`, what the macro and
/// `hpmoe_ascendc::Build` run, with the default plan options as they use) — the same file
/// compiled at another EP without a macro expansion per EP.
///
/// # Errors
/// When the source has no taskflow at EP 8, or the front-end or the checks refuse it.
pub fn plan_at_ranks(
    src: &str,
    file: &str,
    dir: &std::path::Path,
    ranks: u32,
) -> Result<Vec<PlannedTaskflow>, ExampleError> {
    plan_variant(src, file, dir, Variant { ranks, dispatch: DispatchPrecision::Bf16, only: &[] })
}

/// The source `src` of [`plan_at_ranks`] as `variant` changes it ([`Variant`]), before the
/// front-end reads it.
///
/// # Errors
/// When the source has no taskflow at EP 8, or (INT8) includes none of the BF16 layout files.
pub fn variant_source(src: &str, file: &str, variant: Variant<'_>) -> Result<String, ExampleError> {
    if !src.contains("ranks = 8)]") {
        return Err(ExampleError::NoTaskflowAtEp8 { file: file.into() });
    }
    let mut src = src.replace("ranks = 8)]", &format!("ranks = {})]", variant.ranks));
    if variant.dispatch == DispatchPrecision::Int8 {
        if !INT8_LAYOUTS.iter().any(|(bf16, _)| src.contains(bf16)) {
            return Err(ExampleError::NoInt8Layout { file: file.into() });
        }
        for (bf16, int8) in INT8_LAYOUTS {
            src = src.replace(bf16, int8);
        }
    }
    Ok(src)
}

/// The taskflows of the DSL source `src` as `variant` changes it ([`variant_source`]), lowered
/// and planned by the shared front-end as [`plan_at_ranks`] plans them.
///
/// # Errors
/// As [`variant_source`], or when the front-end or the checks refuse the source, or a taskflow
/// of `variant.only` is not in it.
pub fn plan_variant(
    src: &str,
    file: &str,
    dir: &std::path::Path,
    variant: Variant<'_>,
) -> Result<Vec<PlannedTaskflow>, ExampleError> {
    let src = variant_source(src, file, variant)?;
    let refused =
        |e| ExampleError::Frontend { file: file.into(), errors: hpmoe_core::syntax::error_positions(&e, file) };
    let found = hpmoe_core::syntax::parse_file_in(&src, Some(dir)).map_err(refused)?;
    if let Some(missing) = variant.only.iter().find(|name| !found.iter().any(|fe| fe.taskflow.name == **name)) {
        return Err(ExampleError::NoTaskflowNamed { file: file.into(), name: (*missing).into() });
    }
    let options = hpmoe_core::PlanOptions::default();
    found
        .iter()
        .filter(|fe| variant.only.is_empty() || variant.only.contains(&fe.taskflow.name.as_str()))
        .map(|fe| {
            let compiled = fe.plan(&options).map_err(refused)?;
            Ok(PlannedTaskflow {
                taskflow: fe.taskflow.clone(),
                table: compiled.table.to_bytes(),
                flags: compiled.flags_bin,
            })
        })
        .collect()
}

/// The pass a DSL taskflow of `examples/` holds, by its name: `moe_ffn_backward`,
/// `moe_ffn_training_step`, else the forward.
pub fn pass_of(name: &str) -> Pass {
    match name {
        "moe_ffn_backward" => Pass::Backward,
        "moe_ffn_training_step" => Pass::TrainingStep,
        _ => Pass::Forward,
    }
}

/// Plans the taskflows `only` (all when empty) of the DSL source `src` (file `file` of folder
/// `dir`) by the shared front-end at each EP of `ranks`, with `dispatch` ([`plan_variant`]), and
/// compares each with the builder's pass of `shape(ranks)` with that dispatch ([`pass_of`]; the
/// builder's taskflow named as the DSL's, since an INT8 variant keeps its BF16 function's name).
/// Prints the time the front-end took per EP and one line per taskflow; returns whether every
/// one has the builder's structure, schedule table and flag plan.
///
/// # Errors
/// As [`plan_variant`], or when the builder refuses a shape or its taskflow does not plan.
pub fn check_variants(
    src: &str,
    file: &str,
    dir: &std::path::Path,
    ranks: &[u32],
    dispatch: DispatchPrecision,
    only: &[&str],
    shape: impl Fn(u32) -> MoeShape,
) -> Result<bool, ExampleError> {
    let mut ok = true;
    for &r in ranks {
        let shape = shape(r).with_dispatch(dispatch);
        let start = std::time::Instant::now();
        let planned = plan_variant(src, file, dir, Variant { ranks: r, dispatch, only })?;
        // What the macro would spend on these taskflows, before rustc compiles its output.
        println!(
            "EP {r}, {dispatch:?} dispatch: the front-end lowered, checked and planned {} taskflow(s) of {file} in {:.1?}",
            planned.len(),
            start.elapsed()
        );
        for PlannedTaskflow { taskflow: tf, table, flags } in planned {
            let pass = pass_of(&tf.name);
            let mut built = under_dsl_names(shape.pass_taskflow(pass).map_err(ExampleError::Shape)?);
            built.name = tf.name.clone();
            let c = compare_with(&tf, &table, &flags, &built)?;
            println!(
                "EP {r}, front-end: taskflow `{}`, {} KiB table; same structure as the builder's {}: {}, same \
                 schedule table: {}, same flag plan: {}",
                tf.name,
                table.len() / 1024,
                pass.name(),
                c.same_structure,
                c.same_table,
                c.same_flags
            );
            ok &= c.passed();
        }
    }
    Ok(ok)
}

/// The variants an example's `--ranks N[,N..]` and `--int8` ask for, each set compiled and
/// compared by `check` (the example's own [`check_variants`] calls): BF16 dispatch at each of
/// `--ranks`, and with `--int8` INT8 dispatch at EP 8 and each of `--ranks`. True when every
/// variant equals the builder's.
pub fn check_requested_variants(
    opts: &Options,
    check: impl Fn(&[u32], DispatchPrecision) -> Result<bool, ExampleError>,
) -> Result<bool, ExampleError> {
    let ranks = opts.list_u32("--ranks")?;
    let mut equal = check(&ranks, DispatchPrecision::Bf16)?;
    if opts.flag("--int8") {
        let int8_ranks: Vec<u32> = std::iter::once(8).chain(ranks.iter().copied().filter(|&r| r != 8)).collect();
        equal &= check(&int8_ranks, DispatchPrecision::Int8)?;
    }
    Ok(equal)
}
