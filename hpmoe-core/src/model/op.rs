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
    /// Read only.
    Read,
    /// Written only: the op overwrites the whole region without reading it.
    Write,
    /// Read, then write in place (accumulation).
    ReadWrite,
}

impl Access {
    /// Whether the op reads the region (`Read` or `ReadWrite`).
    pub fn reads(self) -> bool {
        matches!(self, Access::Read | Access::ReadWrite)
    }

    /// Whether the op writes the region (`Write` or `ReadWrite`).
    pub fn writes(self) -> bool {
        matches!(self, Access::Write | Access::ReadWrite)
    }
}

/// One region parameter of an op.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Param {
    /// The parameter's name: what emission templates (`{name}`) and messages call it.
    pub name: String,
    /// How the op uses the region passed for it.
    pub access: Access,
    /// Whether the region may live on another rank (only a put's destination).
    pub remote: bool,
}

impl Param {
    /// A local region the op reads.
    pub fn read(name: &str) -> Self {
        Param { name: name.into(), access: Access::Read, remote: false }
    }
    /// A local region the op writes.
    pub fn write(name: &str) -> Self {
        Param { name: name.into(), access: Access::Write, remote: false }
    }
    /// A local region the op reads and writes in place (accumulation).
    pub fn read_write(name: &str) -> Self {
        Param { name: name.into(), access: Access::ReadWrite, remote: false }
    }
    /// A region the op writes, which may be on another rank (a put's destination).
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
    /// `c[M,N] = a[M,K] · b[N,K]ᵀ` over arguments (a, b, c) (`b` read as stored, row by row):
    /// 2·M·N·K flops, with K, N and M as for [`WorkModel::Matmul`].
    MatmulNt,
    /// `c[M,N] = a[K,M]ᵀ · b[K,N]` over arguments (a, b, c): 2·M·N·K flops, where M is the
    /// last extent of `a`, K the rest of `a`, and N the last extent of `c`.
    MatmulTn,
    /// Elementwise: `flops_per_element` × the elements of the largest argument.
    Vector {
        /// Flops per element of the largest argument.
        flops_per_element: u32,
    },
    /// Pure data movement of the first argument's bytes (a put moves them over the link).
    Copy,
    /// A row gather: the op reads one row (all but the first dimension) of its first
    /// argument per element of its second argument, an index chosen at run time, and does
    /// `flops_per_element` per element of each row it reads. The first argument's region
    /// is the whole table the indices may pick from, so only the rows picked count as
    /// traffic; the other arguments count whole.
    Gather {
        /// Flops per element of each row read.
        flops_per_element: u32,
    },
    /// No flops and no bytes: the op only orders. Its regions (read and written in place) make
    /// it wait for every earlier write of them, and a later family reading inside them waits
    /// for it instead of for those writes (see [`BuiltinOp::Fence`]).
    Order,
}

/// The extents of one matmul: `c` is `m × n`, summed over `k`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MatmulDims {
    /// Rows of `c`.
    pub m: u64,
    /// Columns of `c`.
    pub n: u64,
    /// The summed (inner) extent.
    pub k: u64,
}

impl WorkModel {
    /// Whether this is one of the matmul models (an AIC product of `a` and `b` into `c`).
    pub const fn is_matmul(self) -> bool {
        matches!(self, WorkModel::Matmul | WorkModel::MatmulNt | WorkModel::MatmulTn)
    }

    /// The extents of a matmul-model op from the extents of its arguments `a` and `c` (every
    /// dimension but the last counts as rows); `None` for the other models. `n` and `m` come
    /// from `c`, `k` from `a` (its last extent, or for [`WorkModel::MatmulTn`] its rows).
    pub fn matmul_dims(self, a: &[u64], c: &[u64]) -> Option<MatmulDims> {
        let last = |s: &[u64]| s.last().copied().unwrap_or(1);
        let rest = |s: &[u64]| s.iter().rev().skip(1).fold(1u64, |acc, &e| acc.saturating_mul(e));
        let (n, m) = (last(c), rest(c));
        match self {
            WorkModel::Matmul | WorkModel::MatmulNt => Some(MatmulDims { m, n, k: last(a) }),
            WorkModel::MatmulTn => Some(MatmulDims { m, n, k: rest(a) }),
            WorkModel::Vector { .. } | WorkModel::Copy | WorkModel::Gather { .. } | WorkModel::Order => None,
        }
    }
}

/// Declares [`BuiltinOp`], [`BuiltinOp::ALL`] and [`BuiltinOp::name`] from one list of
/// `Variant => "name"` lines, so a built-in cannot be left out of `ALL` (and so of the registry
/// and [`BuiltinOp::from_name`]): adding a line adds the variant, its place in `ALL` and its
/// name at once, and every exhaustive `match` elsewhere then fails to compile until it handles it.
macro_rules! builtin_ops {
    ($(#[$enum_meta:meta])* pub enum BuiltinOp { $($(#[$meta:meta])* $variant:ident => $name:literal,)* }) => {
        $(#[$enum_meta])*
        pub enum BuiltinOp {
            $($(#[$meta])* $variant,)*
        }

        impl BuiltinOp {
            /// Every built-in, in registry order (declaration order).
            pub const ALL: [BuiltinOp; [$(BuiltinOp::$variant),*].len()] = [$(BuiltinOp::$variant),*];

            /// The name tile bodies call the op by (and the DSL function's name).
            pub const fn name(self) -> &'static str {
                match self {
                    $(BuiltinOp::$variant => $name,)*
                }
            }
        }
    };
}

builtin_ops! {
    /// The built-in ops. Every backend matches this enum exhaustively — the registry
    /// ([`BuiltinOp::spec`]), the DSL vocabulary (`dsl::builtin_function`), the host executor's
    /// reference bodies and the AscendC emitter — so a new built-in fails to compile wherever it is
    /// not yet handled. Its name ([`BuiltinOp::name`]) is what tile bodies call it by.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum BuiltinOp {
        /// AIC: `c = a · b` with FP32 accumulation.
        Matmul => "matmul",
        /// AIC: `c += a · b`: the product summed in FP32 over K ascending from `+0.0`, added to
        /// `c` (read as FP32) in FP32 and rounded once into `c`'s type. Several tiles adding into
        /// one region must be totally ordered (ordered accumulation).
        MatmulAccumulate => "matmul_accumulate",
        /// AIC: `c = a · bᵀ`, `a` `[M, K]`, `b` `[N, K]` (read row by row, as stored), `c`
        /// `[M, N]`: each element summed in FP32 over K ascending from `+0.0`, rounded once into
        /// `c`'s type (the activation gradients `dY · W2ᵀ`, `dH · W13ᵀ`).
        MatmulNt => "matmul_nt",
        /// AIC: `c = aᵀ · b`, `a` `[K, M]`, `b` `[K, N]`, `c` `[M, N]`: each element summed in FP32
        /// over K ascending from `+0.0`, rounded once into `c`'s type (the first block of a
        /// weight-gradient chain).
        MatmulTn => "matmul_tn",
        /// AIC: `c += aᵀ · b`, `a` `[K, M]`, `b` `[K, N]`, `c` `[M, N]`: the product as
        /// [`BuiltinOp::MatmulTn`], added to `c` (read as FP32) in FP32 and rounded once into
        /// `c`'s type, like [`BuiltinOp::MatmulAccumulate`] (weight gradients chained over an
        /// expert's row blocks).
        MatmulTnAccumulate => "matmul_tn_accumulate",
        /// AIC: the on-chip sum over a slot layout: `x` `[S·C, M]`, `g` `[S·C, N]` (slot `s`
        /// the rows `s·C ..`), `grad` `[M, N]`, `counts` `S` i32 elements (`C` = rows of `x` /
        /// `S`): `grad += Σ_s x_sᵀ · g_s` over the first `min(counts[s], C)` rows of each slot
        /// (none for a count ≤ 0) — one FP32 accumulation from `+0.0`, slots ascending and rows
        /// ascending in each, added to `grad` (read as FP32) once and rounded once into its type.
        /// Rows past a count are never read, so they may hold anything (the weight gradients of
        /// an expert under natural routing, whose slots are filled to a run-time count).
        MatmulTnSlotsAccumulate => "matmul_tn_slots_accumulate",
        /// AIC: the writing form of [`BuiltinOp::MatmulTnSlotsAccumulate`]: `grad = Σ_s x_sᵀ ·
        /// g_s` over the same slots and rows, one FP32 accumulation from `+0.0` rounded once into
        /// `grad`'s type, `grad` not read (`+0.0` where no slot has a row). The first link of a
        /// chain of slot sums: no zeroing pass, and one read and write of `grad` fewer. (A sum
        /// from `+0.0` is never `-0.0`, so writing it gives the bits adding it to `+0.0` would.)
        MatmulTnSlots => "matmul_tn_slots",
        /// AIV: one-sided write of `src` into `dst` on another rank, with a signal.
        Put => "put",
        /// AIV: `dst = src`.
        Copy => "copy",
        /// AIV: `out = silu(gate) * up`.
        Swiglu => "swiglu",
        /// AIV: `dst[i, :] = src[i, :] * scale[i]`.
        ScaleRows => "scale_rows",
        /// AIV: `dst += src`.
        Accumulate => "accumulate",
        /// AIV: the top-k weighted sum.
        WeightedAccumulate => "weighted_accumulate",
        /// AIV: the top-k weighted sum of gathered rows.
        GatherWeightedAccumulate => "gather_weighted_accumulate",
        /// AIV: per-row symmetric INT8 quantisation.
        Quantize => "quantize",
        /// AIV: `dst = src * scale` per row.
        Dequantize => "dequantize",
        /// AIV: `dst = src` converted to `dst`'s element type.
        Cast => "cast",
        /// AIV: `dst = 0`.
        Zero => "zero",
        /// AIV: the SwiGLU gradient: from `gate_up` `[R, 2w]` = `[g | u]` and `d_act` `[R, w]`,
        /// `d_gate_up` `[R, 2w]` = `[dg | du]` with `s = σ(g)`, `du = d_act · g · s`,
        /// `dg = d_act · u · s · (1 + g · (1 − s))`.
        SwigluBackward => "swiglu_backward",
        /// AIV: `dst[t·k + c, :] = weights[t, c] · src[t, :]`: each of a token's `k` copies of its
        /// row, scaled by its routing weight (the combine's backward).
        ScaleRowsRepeat => "scale_rows_repeat",
        /// AIV: `d_weights[t, c] = Σ_h a[t, h] · b[t·k + c, h]`, FP32, h ascending (the routing
        /// weights' gradient).
        RowDotTopk => "row_dot_topk",
        /// AIV: `dst[t, :] = Σ_c src[t·k + c, :]`, c ascending, FP32 (the dispatch's backward).
        SumTopk => "sum_topk",
        /// AIV: the gathering form of [`BuiltinOp::ScaleRowsRepeat`]: `dst[j, :] = weights[i / k,
        /// i % k] · table[i / k, :]` for the choice `i = index[j]`, a zero row where `index[j] < 0`
        /// (the combine's backward under natural routing: each send slot's row from its token).
        GatherScaleRowsRepeat => "gather_scale_rows_repeat",
        /// AIV: the gathering form of [`BuiltinOp::RowDotTopk`]: `d_weights[t, c] = Σ_h a[t, h] ·
        /// table[index[t, c], h]`, FP32, h ascending, `+0.0` where `index[t, c] < 0`.
        GatherRowDotTopk => "gather_row_dot_topk",
        /// AIV: the gathering form of [`BuiltinOp::SumTopk`]: `dst[t, :] = Σ_c table[index[t, c], :]`
        /// over the `c` with `index[t, c] ≥ 0`, c ascending, FP32 from `+0.0`.
        GatherSumTopk => "gather_sum_topk",
        /// AIV: no work; the tile waits until every earlier write of `region` has landed (puts
        /// from other ranks included), and a tile of a later family that reads inside `region`
        /// waits for this one instead of for each of those writes. One fence on a rank can so
        /// stand between many puts and many readers (a *relay*): each put signals the fence
        /// once, instead of once per reading core.
        Fence => "fence",
    }
}

impl BuiltinOp {
    /// The built-in called `name`, if there is one.
    pub fn from_name(name: &str) -> Option<BuiltinOp> {
        BuiltinOp::ALL.into_iter().find(|op| op.name() == name)
    }

    /// The op's signature: core kind, parameters, work model and one-line doc.
    pub fn spec(self) -> OpSpec {
        use CoreKind::{Aic, Aiv};
        use Param as P;
        let v = |f| WorkModel::Vector { flops_per_element: f };
        let (core, params, work, doc) = match self {
            BuiltinOp::Matmul => (
                Aic,
                vec![P::read("a"), P::read("b"), P::write("c")],
                WorkModel::Matmul,
                "c = a · b (FP32 accumulation)",
            ),
            BuiltinOp::MatmulAccumulate => (
                Aic,
                vec![P::read("a"), P::read("b"), P::read_write("c")],
                WorkModel::Matmul,
                "c += a · b (a · b in FP32 over K ascending, added to c in FP32, rounded once into c's type)",
            ),
            BuiltinOp::MatmulNt => (
                Aic,
                vec![P::read("a"), P::read("b"), P::write("c")],
                WorkModel::MatmulNt,
                "c = a · bᵀ, a [M, K], b [N, K], c [M, N] (FP32 over K ascending, rounded once into c's type)",
            ),
            BuiltinOp::MatmulTn => (
                Aic,
                vec![P::read("a"), P::read("b"), P::write("c")],
                WorkModel::MatmulTn,
                "c = aᵀ · b, a [K, M], b [K, N], c [M, N] (FP32 over K ascending, rounded once into c's type)",
            ),
            BuiltinOp::MatmulTnAccumulate => (
                Aic,
                vec![P::read("a"), P::read("b"), P::read_write("c")],
                WorkModel::MatmulTn,
                "c += aᵀ · b, a [K, M], b [K, N], c [M, N] (aᵀ · b in FP32 over K ascending, added to c in FP32, rounded once into c's type)",
            ),
            // Priced as `matmul_tn` over every row of `x` (`counts` last, so `a` and `c` are the
            // arguments the matmul models read): statically every slot full, the most it sums.
            // A priced run scales the op by the rows its counts let it sum
            // (`cost::Activity`), as it skips a guarded tile past its count.
            BuiltinOp::MatmulTnSlotsAccumulate => (
                Aic,
                vec![P::read("x"), P::read("g"), P::read_write("grad"), P::read("counts")],
                WorkModel::MatmulTn,
                "grad += sum over slots s ascending of x_sᵀ · g_s over the first min(counts[s], C) rows of slot s (rows s*C ..), x [S*C, M], g [S*C, N], grad [M, N], counts S i32 (C = rows(x) / S); one FP32 accumulation from +0.0, rows ascending, added to grad once, rounded once into grad's type",
            ),
            // Priced as the accumulating form, `grad` written only.
            BuiltinOp::MatmulTnSlots => (
                Aic,
                vec![P::read("x"), P::read("g"), P::write("grad"), P::read("counts")],
                WorkModel::MatmulTn,
                "grad = sum over slots s ascending of x_sᵀ · g_s over the first min(counts[s], C) rows of slot s (rows s*C ..), x [S*C, M], g [S*C, N], grad [M, N], counts S i32 (C = rows(x) / S); one FP32 accumulation from +0.0, rows ascending, rounded once into grad's type (+0.0 where no slot has a row)",
            ),
            BuiltinOp::Put => (
                Aiv,
                vec![P::read("src"), P::remote_write("dst")],
                WorkModel::Copy,
                "one-sided write of src into dst on another rank, with a signal",
            ),
            BuiltinOp::Copy => (Aiv, vec![P::read("src"), P::write("dst")], WorkModel::Copy, "dst = src"),
            BuiltinOp::Swiglu => (
                Aiv,
                vec![P::read("gate_up"), P::write("out")],
                v(6),
                "out = silu(gate) * up, gate and up the two halves of the last dimension",
            ),
            BuiltinOp::ScaleRows => {
                (Aiv, vec![P::read("src"), P::read("scale"), P::write("dst")], v(1), "dst[i, :] = src[i, :] * scale[i]")
            }
            BuiltinOp::Accumulate => (Aiv, vec![P::read("src"), P::read_write("dst")], v(1), "dst += src"),
            BuiltinOp::WeightedAccumulate => (
                Aiv,
                vec![P::read("src"), P::read("weight"), P::read_write("dst")],
                v(2),
                "top-k weighted sum: dst[i, :] += sum over j < k of src[i*k + j, :] * weight[i*k + j], k = rows(src) / rows(dst), in FP32",
            ),
            BuiltinOp::GatherWeightedAccumulate => (
                Aiv,
                vec![P::read("table"), P::read("index"), P::read("weight"), P::read_write("dst")],
                WorkModel::Gather { flops_per_element: 2 },
                "top-k weighted sum of gathered rows: dst[i, :] += sum over j < k of table[index[i, j], :] * weight[i, j] for index[i, j] >= 0, k = last extent of index, in FP32 in j order",
            ),
            BuiltinOp::Quantize => (
                Aiv,
                vec![P::read("src"), P::write("dst"), P::write("scale")],
                v(4),
                "per-row symmetric INT8 quantisation",
            ),
            BuiltinOp::Dequantize => {
                (Aiv, vec![P::read("src"), P::read("scale"), P::write("dst")], v(1), "dst = src * scale per row")
            }
            BuiltinOp::Cast => {
                (Aiv, vec![P::read("src"), P::write("dst")], v(1), "dst = src converted to dst's element type")
            }
            BuiltinOp::Zero => (Aiv, vec![P::write("dst")], v(0), "dst = 0"),
            // Per (g, u) pair: σ (3: exp, add, divide), du (2), dg (6); 6 per element of the
            // largest argument (gate_up or d_gate_up, two elements per pair). A count, not a
            // measurement: the exponential's cost on the vector unit is folded into it.
            BuiltinOp::SwigluBackward => (
                Aiv,
                vec![P::read("gate_up"), P::read("d_act"), P::write("d_gate_up")],
                v(6),
                "SwiGLU gradient: gate_up [R, 2w] = [g | u], d_act [R, w], d_gate_up [R, 2w] = [dg | du] with s = 1 / (1 + exp(-g)), du = d_act * g * s, dg = d_act * u * s * (1 + g * (1 - s)), in FP32",
            ),
            BuiltinOp::ScaleRowsRepeat => (
                Aiv,
                vec![P::read("src"), P::read("weights"), P::write("dst")],
                v(1),
                "dst[t*k + c, :] = weights[t, c] * src[t, :], src [T, H], weights [T, k], dst [T*k, H], in FP32",
            ),
            BuiltinOp::RowDotTopk => (
                Aiv,
                vec![P::read("a"), P::read("b"), P::write("d_weights")],
                v(2),
                "d_weights[t, c] = sum over h of a[t, h] * b[t*k + c, h], a [T, H], b [T*k, H], d_weights [T, k], in FP32, h ascending from +0.0",
            ),
            BuiltinOp::SumTopk => (
                Aiv,
                vec![P::read("src"), P::write("dst")],
                v(1),
                "dst[t, :] = sum over c < k of src[t*k + c, :], src [T*k, H], dst [T, H], in FP32, c ascending from +0.0",
            ),
            BuiltinOp::GatherScaleRowsRepeat => (
                Aiv,
                vec![P::read("table"), P::read("index"), P::read("weights"), P::write("dst")],
                WorkModel::Gather { flops_per_element: 1 },
                "dst[j, :] = weights[i / k, i % k] * table[i / k, :] for the choice i = index[j] (i32), a zero row where index[j] < 0, table [T, H], weights [T, k], dst [N, H], N = elements of index, in FP32",
            ),
            BuiltinOp::GatherRowDotTopk => (
                Aiv,
                vec![P::read("table"), P::read("index"), P::read("a"), P::write("d_weights")],
                WorkModel::Gather { flops_per_element: 2 },
                "d_weights[t, c] = sum over h of a[t, h] * table[index[t, c], h] (index i32), +0.0 where index[t, c] < 0, a [T, H], index and d_weights [T, k], in FP32, h ascending from +0.0",
            ),
            BuiltinOp::GatherSumTopk => (
                Aiv,
                vec![P::read("table"), P::read("index"), P::write("dst")],
                WorkModel::Gather { flops_per_element: 1 },
                "dst[t, :] = sum over c < k of table[index[t, c], :] for index[t, c] >= 0 (i32), index [T, k], dst [T, H], in FP32, c ascending from +0.0",
            ),
            BuiltinOp::Fence => (
                Aiv,
                vec![P::read_write("region")],
                WorkModel::Order,
                "no work: waits for every earlier write of region (puts included); later readers inside region wait for it instead of for those writes",
            ),
        };
        OpSpec { name: self.name().into(), core, params, work, doc: doc.into(), kind: OpKind::Builtin(self) }
    }
}

/// Whose op it is, and so how a backend implements it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OpKind {
    /// A built-in: every backend implements it itself.
    Builtin(BuiltinOp),
    /// A user op. `emit` is how the AscendC backend calls it: a template of the device call
    /// with `{param}` placeholders for the parameters' regions (e.g.
    /// `"ScaledSilu({dst}, {src})"`); `None` if it has no device form (host only).
    User {
        /// The device call's template, `None` for a host-only op.
        emit: Option<String>,
    },
}

/// An op's signature.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpSpec {
    /// The op's name, as tile bodies call it; unique in a registry.
    pub name: String,
    /// The core kind that runs it (a tile calling it must be of this kind).
    pub core: CoreKind,
    /// Its region parameters, in call order.
    pub params: Vec<Param>,
    /// How the cost model derives its work from its arguments' shapes.
    pub work: WorkModel,
    /// One sentence for error messages and generated comments.
    pub doc: String,
    /// A built-in, or a user op with its AscendC emission.
    pub kind: OpKind,
}

impl OpSpec {
    /// A user op, without an AscendC emission template (add one with [`OpSpec::with_emit`]).
    pub fn new(
        name: impl Into<String>,
        core: CoreKind,
        params: Vec<Param>,
        work: WorkModel,
        doc: impl Into<String>,
    ) -> Self {
        OpSpec { name: name.into(), core, params, work, doc: doc.into(), kind: OpKind::User { emit: None } }
    }

    /// Makes this a user op with AscendC emission template `template` (see [`OpKind::User`]).
    pub fn with_emit(mut self, template: impl Into<String>) -> Self {
        self.kind = OpKind::User { emit: Some(template.into()) };
        self
    }

    /// The built-in this is, if it is one.
    pub fn builtin(&self) -> Option<BuiltinOp> {
        match self.kind {
            OpKind::Builtin(op) => Some(op),
            OpKind::User { .. } => None,
        }
    }

    /// A user op's AscendC emission template, if it has one.
    pub fn emit(&self) -> Option<&str> {
        match &self.kind {
            OpKind::User { emit } => emit.as_deref(),
            OpKind::Builtin(_) => None,
        }
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

    /// The built-in MoE ops ([`BuiltinOp::ALL`]).
    pub fn builtin() -> Self {
        let mut r = Self::empty();
        for op in BuiltinOp::ALL {
            r.register(op.spec()).expect("built-in op names are distinct");
        }
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

    /// The op called `name`, if registered.
    pub fn get(&self, name: &str) -> Option<&OpSpec> {
        self.ops.get(name)
    }

    /// The registered ops' names, in registration order (built-ins first).
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.ops.keys().map(String::as_str)
    }

    /// The registered ops, in registration order.
    pub fn iter(&self) -> impl Iterator<Item = &OpSpec> {
        self.ops.values()
    }
}

#[cfg(test)]
mod tests {
    use super::BuiltinOp;

    /// `ALL` and the names come from one list (`builtin_ops!`); this ties the lookup back to
    /// them: each name is distinct and finds its op, and `ALL` has no repeats.
    #[test]
    fn every_builtin_is_found_by_its_name() {
        for (i, op) in BuiltinOp::ALL.into_iter().enumerate() {
            assert_eq!(BuiltinOp::from_name(op.name()), Some(op), "{op:?}");
            assert!(!BuiltinOp::ALL[..i].contains(&op), "{op:?} twice in ALL");
            assert!(BuiltinOp::ALL[..i].iter().all(|o| o.name() != op.name()), "{op:?}'s name twice");
        }
        assert_eq!(BuiltinOp::from_name("no_such_op"), None);
    }
}
