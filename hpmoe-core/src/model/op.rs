//! The op registry: what a tile body may call.
//!
//! An op has a core kind, a signature of region parameters with their access modes, and a
//! work model the cost function reads. The host executor and the AscendC backend attach a
//! reference implementation and an emission to the same name; users register their own ops
//! to write custom fused variants without touching hpmoe.

use super::CoreKind;
use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

/// How an op uses one region argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Access {
    Read,
    Write,
    /// Read, then write in place (accumulation).
    ReadWrite,
}

impl Access {
    pub fn reads(self) -> bool {
        matches!(self, Access::Read | Access::ReadWrite)
    }

    pub fn writes(self) -> bool {
        matches!(self, Access::Write | Access::ReadWrite)
    }
}

/// One region parameter of an op.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Param {
    pub name: String,
    pub access: Access,
    /// Whether the region may live on another rank (only a put's destination).
    pub remote: bool,
}

impl Param {
    pub fn read(name: &str) -> Self {
        Param { name: name.into(), access: Access::Read, remote: false }
    }
    pub fn write(name: &str) -> Self {
        Param { name: name.into(), access: Access::Write, remote: false }
    }
    pub fn read_write(name: &str) -> Self {
        Param { name: name.into(), access: Access::ReadWrite, remote: false }
    }
    pub fn remote_write(name: &str) -> Self {
        Param { name: name.into(), access: Access::Write, remote: true }
    }
}

/// How the cost model derives work from an op's argument shapes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkModel {
    /// `c[M,N] = a[M,K] · b[K,N]` over arguments (a, b, c): 2·M·N·K flops, where K is the
    /// last extent of `a`, N the last extent of `c` and M the rest of `c`.
    Matmul,
    /// Elementwise: `flops_per_element` × the elements of the largest argument.
    Vector { flops_per_element: u32 },
    /// Pure data movement of the first argument's bytes (a put moves them over the link).
    Copy,
    /// A row gather: the op reads one row (all but the first dimension) of its first
    /// argument per element of its second argument, an index chosen at run time, and does
    /// `flops_per_element` per element of each row it reads. The first argument's region
    /// is the whole table the indices may pick from, so only the rows picked count as
    /// traffic; the other arguments count whole.
    Gather { flops_per_element: u32 },
}

/// An op's signature.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpSpec {
    pub name: String,
    pub core: CoreKind,
    pub params: Vec<Param>,
    pub work: WorkModel,
    /// One sentence for error messages and generated comments.
    pub doc: String,
    /// How the AscendC backend calls a user-defined op: a template of the device call with
    /// `{param}` placeholders for the parameters' regions (e.g. `"ScaledSilu({dst}, {src})"`).
    /// `None` for built-in ops, whose emission the backend owns.
    #[serde(default)]
    pub emit: Option<String>,
}

impl OpSpec {
    /// An op without an AscendC emission template (the built-ins).
    pub fn new(
        name: impl Into<String>,
        core: CoreKind,
        params: Vec<Param>,
        work: WorkModel,
        doc: impl Into<String>,
    ) -> Self {
        OpSpec { name: name.into(), core, params, work, doc: doc.into(), emit: None }
    }

    /// Sets the AscendC emission template (see [`OpSpec::emit`]).
    pub fn with_emit(mut self, template: impl Into<String>) -> Self {
        self.emit = Some(template.into());
        self
    }
}

/// The ops a taskflow may call, by name, in registration order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpRegistry {
    ops: IndexMap<String, OpSpec>,
}

/// Registering an op whose name is taken.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DuplicateOp(pub String);

impl std::fmt::Display for DuplicateOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "an op named `{}` is already registered", self.0)
    }
}

impl std::error::Error for DuplicateOp {}

impl Default for OpRegistry {
    fn default() -> Self {
        Self::builtin()
    }
}

impl OpRegistry {
    /// No ops at all.
    pub fn empty() -> Self {
        OpRegistry { ops: IndexMap::new() }
    }

    /// The built-in MoE ops.
    pub fn builtin() -> Self {
        use CoreKind::{Aic, Aiv};
        use Param as P;
        let v = |f| WorkModel::Vector { flops_per_element: f };
        let mut r = Self::empty();
        let mut add = |name: &str, core, params, work, doc: &str| {
            r.register(OpSpec::new(name, core, params, work, doc)).expect("built-in op names are distinct");
        };
        add(
            "matmul",
            Aic,
            vec![P::read("a"), P::read("b"), P::write("c")],
            WorkModel::Matmul,
            "c = a · b (FP32 accumulation)",
        );
        add(
            "put",
            Aiv,
            vec![P::read("src"), P::remote_write("dst")],
            WorkModel::Copy,
            "one-sided write of src into dst on another rank, with a signal",
        );
        add("copy", Aiv, vec![P::read("src"), P::write("dst")], WorkModel::Copy, "dst = src");
        add(
            "swiglu",
            Aiv,
            vec![P::read("gate_up"), P::write("out")],
            v(6),
            "out = silu(gate) * up, gate and up the two halves of the last dimension",
        );
        add(
            "scale_rows",
            Aiv,
            vec![P::read("src"), P::read("scale"), P::write("dst")],
            v(1),
            "dst[i, :] = src[i, :] * scale[i]",
        );
        add("accumulate", Aiv, vec![P::read("src"), P::read_write("dst")], v(1), "dst += src");
        add(
            "weighted_accumulate",
            Aiv,
            vec![P::read("src"), P::read("weight"), P::read_write("dst")],
            v(2),
            "top-k weighted sum: dst[i, :] += sum over j < k of src[i*k + j, :] * weight[i*k + j], k = rows(src) / rows(dst), in FP32",
        );
        add(
            "gather_weighted_accumulate",
            Aiv,
            vec![P::read("table"), P::read("index"), P::read("weight"), P::read_write("dst")],
            WorkModel::Gather { flops_per_element: 2 },
            "top-k weighted sum of gathered rows: dst[i, :] += sum over j < k of table[index[i, j], :] * weight[i, j] for index[i, j] >= 0, k = last extent of index, in FP32 in j order",
        );
        add(
            "quantize",
            Aiv,
            vec![P::read("src"), P::write("dst"), P::write("scale")],
            v(4),
            "per-row symmetric INT8 quantisation",
        );
        add(
            "dequantize",
            Aiv,
            vec![P::read("src"), P::read("scale"), P::write("dst")],
            v(1),
            "dst = src * scale per row",
        );
        add("cast", Aiv, vec![P::read("src"), P::write("dst")], v(1), "dst = src converted to dst's element type");
        add("zero", Aiv, vec![P::write("dst")], v(0), "dst = 0");
        r
    }

    /// Adds a user op.
    pub fn register(&mut self, spec: OpSpec) -> Result<(), DuplicateOp> {
        if self.ops.contains_key(&spec.name) {
            return Err(DuplicateOp(spec.name));
        }
        self.ops.insert(spec.name.clone(), spec);
        Ok(())
    }

    pub fn get(&self, name: &str) -> Option<&OpSpec> {
        self.ops.get(name)
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.ops.keys().map(String::as_str)
    }

    pub fn iter(&self) -> impl Iterator<Item = &OpSpec> {
        self.ops.values()
    }
}
