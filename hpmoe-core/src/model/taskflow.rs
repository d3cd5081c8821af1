//! The taskflow: a machine profile, tensors, tile families and the ops they may call.

use super::{CoreKind, DType, GridDim, Loc, MachineProfile, OpRegistry, SourceMap, TensorDecl, TensorKind, TileFamily};
use serde::{Deserialize, Serialize};

/// Why [`Taskflow::from_json`] refused its input: the JSON parser's error, with where in the
/// text it stopped. Shared (`Arc`) so
/// the errors that carry it stay `Clone`; equal when the position and message are.
#[derive(Clone, Debug)]
pub struct TaskflowJsonError(std::sync::Arc<serde_json::Error>);

impl TaskflowJsonError {
    /// The 1-based line of the text where decoding stopped.
    pub fn line(&self) -> usize {
        self.0.line()
    }

    /// The 1-based column of the text where decoding stopped.
    pub fn column(&self) -> usize {
        self.0.column()
    }
}

impl PartialEq for TaskflowJsonError {
    fn eq(&self, other: &Self) -> bool {
        (self.line(), self.column(), self.0.to_string()) == (other.line(), other.column(), other.0.to_string())
    }
}

impl Eq for TaskflowJsonError {}

impl std::fmt::Display for TaskflowJsonError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// Its message is the parser's, so [`source`](std::error::Error::source) is `None` (the Rust API
/// guidelines' rule: one or the other, never both).
impl std::error::Error for TaskflowJsonError {}

/// A whole taskflow, as the front-end (or the builder API) produced it. Names are not yet
/// resolved: the checks report unknown ones.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Taskflow {
    /// The taskflow's name: the kernel's and the table's name (a C identifier once emitted).
    pub name: String,
    /// The machine it is scheduled for: cores per rank and ranks.
    pub profile: MachineProfile,
    /// Its tensors, in declaration order; every rank holds its own copy of each.
    pub tensors: Vec<TensorDecl>,
    /// In declaration order: data dependencies follow this order (a tile depends on the
    /// writers declared before it of what it reads).
    pub families: Vec<TileFamily>,
    /// The ops its tile bodies may call: the built-ins and the user's own.
    pub ops: OpRegistry,
    /// Where each [`Loc`] of its nodes was written, where known.
    pub sources: SourceMap,
    /// Where the taskflow itself was declared.
    pub loc: Loc,
}

impl Taskflow {
    /// An empty taskflow on `profile`, with the built-in ops registered.
    pub fn new(name: impl Into<String>, profile: MachineProfile) -> Self {
        Taskflow {
            name: name.into(),
            profile,
            tensors: Vec::new(),
            families: Vec::new(),
            ops: OpRegistry::builtin(),
            sources: SourceMap::default(),
            loc: Loc::NONE,
        }
    }

    /// The taskflow as JSON (what `#[taskflow]` embeds for `dsl::Program::taskflow`).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|e| unreachable!("a taskflow serialises to JSON: {e}"))
    }

    /// Reads [`Taskflow::to_json`]'s output.
    ///
    /// # Errors
    /// [`TaskflowJsonError`] (with the line and column) if `json` is not a taskflow document.
    pub fn from_json(json: &str) -> Result<Taskflow, TaskflowJsonError> {
        serde_json::from_str(json).map_err(|e| TaskflowJsonError(std::sync::Arc::new(e)))
    }

    /// Whether two taskflows describe the same computation: the same profile (but its name),
    /// tensors (kind, element type, shape), tile families (core kind, grid extents, op calls
    /// with the same regions of the same tensors, `after` entries) and ops, position by
    /// position, whatever the names of the taskflow, tensors, tiles and grid indices and
    /// whatever their source locations. For comparing a DSL taskflow with a built one.
    pub fn same_structure(&self, other: &Taskflow) -> bool {
        self.anonymous() == other.anonymous()
    }

    /// A copy with positional names and no locations.
    fn anonymous(&self) -> Taskflow {
        use std::collections::HashMap;
        let tensors: HashMap<&str, String> =
            self.tensors.iter().enumerate().map(|(i, t)| (t.name.as_str(), format!("t{i}"))).collect();
        let families: HashMap<&str, String> =
            self.families.iter().enumerate().map(|(i, f)| (f.name.as_str(), format!("f{i}"))).collect();
        let rename =
            |map: &HashMap<&str, String>, name: &str| map.get(name).cloned().unwrap_or_else(|| name.to_string());
        let mut tf = self.clone();
        tf.name = String::new();
        tf.profile.name = String::new();
        tf.sources = SourceMap::default();
        tf.loc = Loc::NONE;
        for t in &mut tf.tensors {
            t.name = rename(&tensors, &t.name);
            t.loc = Loc::NONE;
        }
        for f in &mut tf.families {
            f.name = rename(&families, &f.name);
            f.loc = Loc::NONE;
            for (k, g) in f.grid.iter_mut().enumerate() {
                g.name = format!("g{k}");
                g.loc = Loc::NONE;
            }
            for call in &mut f.body {
                call.loc = Loc::NONE;
                for r in &mut call.args {
                    r.tensor = rename(&tensors, &r.tensor);
                    r.loc = Loc::NONE;
                }
            }
            for a in &mut f.after {
                a.family = rename(&families, &a.family);
                a.loc = Loc::NONE;
            }
            if let Some(g) = &mut f.guard {
                g.loc = Loc::NONE;
                g.count.tensor = rename(&tensors, &g.count.tensor);
                g.count.loc = Loc::NONE;
            }
        }
        tf
    }

    /// The tensor declared as `name`, if any.
    pub fn tensor(&self, name: &str) -> Option<&TensorDecl> {
        self.tensors.iter().find(|t| t.name == name)
    }

    /// The tile family declared as `name`, if any.
    pub fn family(&self, name: &str) -> Option<&TileFamily> {
        self.families.iter().find(|f| f.name == name)
    }

    #[track_caller]
    fn declare(&mut self, name: &str, kind: TensorKind, dtype: DType, shape: &[u64]) -> TensorRef {
        let loc = self.sources.here();
        self.tensors.push(TensorDecl { name: name.into(), kind, dtype, shape: shape.iter().copied().collect(), loc });
        TensorRef { name: name.into() }
    }

    /// Declares a read-only kernel input.
    #[track_caller]
    pub fn input(&mut self, name: &str, dtype: DType, shape: &[u64]) -> TensorRef {
        self.declare(name, TensorKind::Input, dtype, shape)
    }

    /// Declares a kernel output.
    #[track_caller]
    pub fn output(&mut self, name: &str, dtype: DType, shape: &[u64]) -> TensorRef {
        self.declare(name, TensorKind::Output, dtype, shape)
    }

    /// Declares scratch global memory.
    #[track_caller]
    pub fn scratch(&mut self, name: &str, dtype: DType, shape: &[u64]) -> TensorRef {
        self.declare(name, TensorKind::Scratch, dtype, shape)
    }

    /// Declares a symmetric tensor that puts from other ranks may target.
    #[track_caller]
    pub fn symmetric(&mut self, name: &str, dtype: DType, shape: &[u64]) -> TensorRef {
        self.declare(name, TensorKind::Symmetric, dtype, shape)
    }

    /// Declares a tile family; `body` adds its grid, ops and explicit dependencies.
    ///
    /// Locations of every call inside `body` are recorded, so errors point at them.
    #[track_caller]
    pub fn tile(&mut self, name: &str, core: CoreKind, body: impl FnOnce(&mut TileBuilder<'_>)) {
        let loc = self.sources.here();
        let family = TileFamily {
            name: name.into(),
            core,
            grid: Default::default(),
            body: Vec::new(),
            after: Vec::new(),
            guard: None,
            loc,
        };
        let mut b = TileBuilder { family, sources: &mut self.sources };
        body(&mut b);
        let family = b.family;
        self.families.push(family);
    }
}

/// A handle to a declared tensor; regions start here.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorRef {
    /// The tensor's name.
    pub name: String,
}

impl TensorRef {
    /// The whole tensor.
    pub fn whole(&self) -> super::Region {
        super::Region::whole(self.name.clone())
    }

    /// `tensor[i]` along the first dimension.
    pub fn at(&self, i: impl Into<super::Affine>) -> super::Region {
        self.whole().at(i)
    }

    /// `tensor[start .. start + len]` along the first dimension.
    pub fn slice(&self, start: impl Into<super::Affine>, len: u64) -> super::Region {
        self.whole().slice(start, len)
    }

    /// The copy of the tensor on rank `dst`.
    pub fn on(&self, dst: impl Into<super::Affine>) -> super::Region {
        self.whole().on(dst)
    }
}

/// Builds one tile family (see [`Taskflow::tile`]).
#[derive(Debug)]
pub struct TileBuilder<'a> {
    family: TileFamily,
    sources: &'a mut SourceMap,
}

impl TileBuilder<'_> {
    /// Adds a grid dimension `name in 0..extent` and returns its index expression.
    #[track_caller]
    pub fn grid(&mut self, name: &str, extent: u64) -> super::Affine {
        let loc = self.sources.here();
        let i = u8::try_from(self.family.grid.len()).unwrap_or(u8::MAX);
        self.family.grid.push(GridDim { name: name.into(), extent, loc });
        super::Affine::index(i)
    }

    /// Calls a registered op on region arguments.
    #[track_caller]
    pub fn op(&mut self, op: &str, args: impl IntoIterator<Item = super::Region>) {
        let loc = self.sources.here();
        let args = args.into_iter().map(|r| if r.loc.is_none() { r.with_loc(loc) } else { r }).collect();
        self.family.body.push(super::OpCall { op: op.into(), args, loc });
    }

    /// `put(src, dst)`: one-sided write of `src` into `dst` (a region `.on(rank)`).
    #[track_caller]
    pub fn put(&mut self, src: super::Region, dst: super::Region) {
        self.op(crate::model::BuiltinOp::Put.name(), [src, dst]);
    }

    /// Runs the body only when the `i32` element `count` exceeds `above` at run time; the
    /// instance still waits and signals either way (see [`super::Guard`]). Capacity padding:
    /// a tile on rows `b·B ..` of a buffer holding `count` valid rows uses `above = b·B`.
    #[track_caller]
    pub fn run_if_above(&mut self, count: super::Region, above: impl Into<super::Affine>) {
        let loc = self.sources.here();
        let count = if count.loc.is_none() { count.with_loc(loc) } else { count };
        self.family.guard = Some(super::Guard { count, above: above.into(), loc });
    }

    /// Runs after the selected instances of `family` (one selector per grid dim of it).
    #[track_caller]
    pub fn after(&mut self, family: &str, indices: impl IntoIterator<Item = super::IndexSel>) {
        let loc = self.sources.here();
        self.family.after.push(super::After { family: family.into(), indices: indices.into_iter().collect(), loc });
    }
}
