//! The front-end (feature `syntax`): the tokens of a `#[taskflow]` function → the taskflow
//! IR, with a side table of spans so that every error lands on the exact tokens.
//!
//! Shared by the `#[taskflow]` macro (`hpmoe-macros`) and by build scripts, which find the
//! taskflows of a source file with [`parse_file`] — the way cxx shares its `syntax` module
//! between its macro and cxx-build.
//!
//! ```
//! use hpmoe_core::syntax;
//! let src = r#"
//!     #[taskflow(profile = small(1), ranks = 2)]
//!     fn scale() {
//!         const N: u64 = 64;
//!         const X: Tensor<F32> = input([N, 32]);
//!         const Y: Tensor<F32> = output([N, 32]);
//!         #[tile(aiv, grid(b in 0..4))]
//!         fn copy_rows(b: Idx) {
//!             copy(X.slice(b * 16, 16), Y.slice(b * 16, 16));
//!         }
//!     }
//! "#;
//! let found = syntax::parse_file(src).unwrap();
//! let compiled = found[0].compile(&hpmoe_core::schedule::SimpleCost::default()).unwrap();
//! assert_eq!(compiled.table.entries().len(), 4 * 2);
//! ```
//!
//! Stages: [`include`](mod@include) reads the files a body includes; `ast` sorts the body's items; `alias` resolves tensor aliases (`const A: Tensor<Bf16> = X;`); `attr` reads the attributes (darling);
//! `consts` evaluates compile-time integers; the lowering (`lower`, `index` with the checked
//! arithmetic of `affine`, `region`, `op`, `repeat` for the `for` loops it unrolls) builds the IR; [`Frontend::compile`] runs the checks and the pipeline and maps
//! every [`crate::Diagnostic`] back to its tokens through [`spans::Spans`].

// Not API: hpmoe-macros uses `ast::helper` alone, to strip the helper attributes (`#[tile]`,
// `#[op]`) the front-end reads from the function it re-emits.
mod affine;
mod alias;
#[doc(hidden)]
pub mod ast;
mod attr;
mod consts;
mod file;
pub mod include;
mod index;
pub mod input_bounds;
mod lower;
mod op;
mod region;
mod repeat;
pub mod spans;
mod when;

pub use file::{error_positions, parse_file, parse_file_in, position, render_error};
pub use lower::Poison;
pub use op::{TemplateError, placeholders};

use crate::model::Taskflow;
use crate::schedule::CostModel;
use crate::{Compiled, resolve};
use proc_macro2::TokenStream;
use spans::Spans;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use syn::{Ident, ItemFn};

/// A `#[tile]` function of the body that lowered to a tile family.
#[derive(Clone, Debug)]
pub struct TileDecl {
    /// Index of the item among the body's statements.
    pub stmt: usize,
    /// The function's name: the tile family's name.
    pub ident: Ident,
    /// Index of its family in `Taskflow::families`.
    pub family: usize,
}

/// A user-defined `#[op]` function that lowered to an op of the registry.
#[derive(Clone, Debug)]
pub struct OpDecl {
    /// Index of the item among the body's statements.
    pub stmt: usize,
    /// The function's name: the op's name.
    pub ident: Ident,
    /// Parameter names, in order.
    pub params: Vec<Ident>,
}

/// A taskflow function read by the front-end: the IR (of whatever lowered), its spans,
/// what the expansion needs to know about the body, and every error found so far.
#[derive(Debug)]
pub struct Frontend {
    /// The function as written.
    pub item: ItemFn,
    /// The IR of everything that lowered (complete when `errors` is empty).
    pub taskflow: Taskflow,
    /// The span of each [`Loc`](crate::model::Loc) of `taskflow`, so diagnostics land on tokens.
    pub spans: Spans,
    /// The tile functions that lowered, in body order.
    pub tiles: Vec<TileDecl>,
    /// The op functions that lowered, in body order.
    pub ops: Vec<OpDecl>,
    /// Errors of the front-end itself (attributes, declarations, expressions).
    pub errors: Vec<syn::Error>,
    /// Declarations that failed: their uses are left out of the IR.
    pub poison: Poison,
    /// The files the body includes ([`include`](mod@include)), in order.
    pub includes: Vec<PathBuf>,
    /// The tile functions whose `#[tile(.., when(..))]` condition is false, each with its
    /// condition as written: not in the taskflow, as if they were not written (like items
    /// under a false `#[cfg]`).
    pub absent: HashMap<String, String>,
}

/// Reads a `#[taskflow(args)]` function whose file's folder is not known (an `include!` in
/// its body is an error). Fails only when `item` is not a function, or is beyond the input
/// bounds of [`input_bounds`].
pub fn parse(args: TokenStream, item: TokenStream) -> syn::Result<Frontend> {
    parse_in(None, args, item)
}

/// [`parse`] for a function of a file in folder `dir`, against which the body's `include!`s
/// are resolved.
pub fn parse_in(dir: Option<&Path>, args: TokenStream, item: TokenStream) -> syn::Result<Frontend> {
    input_bounds::check_tokens(&args)?;
    input_bounds::check_tokens(&item)?;
    let item: ItemFn = syn::parse2(item)
        .map_err(|e| syn::Error::new(e.span(), "`#[taskflow]` applies to a function: `fn name() { .. }`"))?;
    Ok(lower_in(dir, args, item))
}

/// Lowers a parsed function given its attribute's arguments (its file's folder unknown).
pub fn lower(args: TokenStream, item: ItemFn) -> Frontend {
    lower_in(None, args, item)
}

/// [`lower`], resolving the body's `include!`s against `dir`.
pub fn lower_in(dir: Option<&Path>, args: TokenStream, mut item: ItemFn) -> Frontend {
    let (includes, include_errors) = include::splice(&mut item, dir);
    let l = lower::Lower::run(args, &item);
    let mut errors = include_errors;
    errors.extend(l.errors);
    Frontend {
        item,
        taskflow: l.tf,
        spans: l.spans,
        tiles: l.tiles,
        ops: l.ops,
        errors,
        poison: l.poison,
        includes,
        absent: l.absent,
    }
}

impl Frontend {
    /// Checks, schedules and builds the schedule table (see [`crate::compile`]), returning
    /// every error at its tokens, ordered by position.
    ///
    /// With front-end errors, the IR is incomplete: then only the structural checks run
    /// (names, arities, core kinds, shapes, grid sizes) on what lowered, leaving out uses of
    /// failed declarations; the checks on the expanded instances (bounds, unwritten reads,
    /// ordering, cycles, footprint, table limits) run once the front-end errors are fixed.
    pub fn compile(&self, cost: &dyn CostModel) -> Result<Compiled, syn::Error> {
        self.compile_by(|tf| crate::compile(tf, cost))
    }

    /// [`Frontend::compile`] as [`crate::plan_with`] plans: the one plan of the taskflow, as the
    /// `#[taskflow]` macro and the build-script API make it.
    pub fn plan(&self, options: &crate::PlanOptions) -> Result<Compiled, syn::Error> {
        self.compile_by(|tf| crate::plan_with(tf, options))
    }

    fn compile_by(
        &self,
        run: impl FnOnce(&Taskflow) -> Result<Compiled, crate::Diagnostics>,
    ) -> Result<Compiled, syn::Error> {
        let mut errors = self.errors.clone();
        let diagnostics = if errors.is_empty() {
            match run(&self.taskflow) {
                Ok(compiled) => return Ok(compiled),
                Err(d) => d,
            }
        } else {
            resolve::check_structure(&self.without_poisoned()).err().unwrap_or_default()
        };
        errors.extend(diagnostics.errors.iter().map(|d| self.spans.error(d)));
        // `compile` never fails without a diagnostic; the fallback only keeps this total.
        Err(sorted(errors).unwrap_or_else(|| self.spans.get(self.taskflow.loc).error("the taskflow was refused")))
    }

    /// The IR without op calls, `after` entries and guards that use a failed declaration.
    fn without_poisoned(&self) -> Taskflow {
        let mut tf = self.taskflow.clone();
        let p = &self.poison;
        for f in &mut tf.families {
            f.body.retain(|c| !p.ops.contains(&c.op) && c.args.iter().all(|r| !p.tensors.contains(&r.tensor)));
            f.after.retain(|a| !p.tiles.contains(&a.family));
            if f.guard.as_ref().is_some_and(|g| p.tensors.contains(&g.count.tensor)) {
                f.guard = None;
            }
        }
        tf
    }
}

/// Every single error of `errors`, ordered by where it starts, combined into one; an error
/// repeated at the same tokens (an op call a `for` unrolls, checked once per copy) is kept once.
pub fn sorted(errors: Vec<syn::Error>) -> Option<syn::Error> {
    let mut seen = std::collections::HashSet::new();
    let mut all: Vec<syn::Error> = errors
        .into_iter()
        .flat_map(|e| e.into_iter())
        .filter(|e| {
            let (start, end) = (e.span().start(), e.span().end());
            seen.insert((start.line, start.column, end.line, end.column, e.to_string()))
        })
        .collect();
    all.sort_by_key(|e| {
        let start = e.span().start();
        (start.line, start.column)
    });
    spans::combine(all)
}
