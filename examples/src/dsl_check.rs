//! Whether a MoE-FFN taskflow written in the `#[taskflow]` DSL is the one hpmoe's builder makes
//! ([`MoeShape::pass_taskflow`]): the same structure, and the builder's taskflow plans to the
//! same schedule table and flag plan, byte for byte. Shared by the DSL examples of the backward
//! and the training step and by their tests, for the tables the macro embeds and for those the
//! shared front-end (`hpmoe_core::syntax`, as `hpmoe_ascendc::Build` runs it) plans.

use crate::ExampleError;
use hpmoe_core::model::Taskflow;
use hpmoe_host::moe::{MoeShape, Pass, under_dsl_names};

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
    let same_structure = dsl.same_structure(&built);
    let compiled = hpmoe_core::plan(&built).map_err(|d| ExampleError::plan(&built, d))?;
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
    if !src.contains("ranks = 8)]") {
        return Err(ExampleError::NoTaskflowAtEp8 { file: file.into() });
    }
    let src = src.replace("ranks = 8)]", &format!("ranks = {ranks})]"));
    let refused =
        |e| ExampleError::Frontend { file: file.into(), errors: hpmoe_core::syntax::error_positions(&e, file) };
    let found = hpmoe_core::syntax::parse_file_in(&src, Some(dir)).map_err(refused)?;
    let options = hpmoe_core::PlanOptions::default();
    found
        .iter()
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
