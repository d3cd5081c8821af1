//! One op call of a tile body as a statement of generated C++.
//!
//! Built-in ops call the runtime's wrappers (`hpmoe/vector_ops.h`, `hpmoe/comm.h`,
//! `hpmoe/cube_ops.h`) after checking, at generation time, the shapes those wrappers need. A
//! user op (or a built-in the registry gives an `emit` template) expands its template: each
//! `{param}` becomes the argument's `hpmoe::View<T>`, `{{` and `}}` are braces, and the names
//! `vec` (`hpmoe::Vec&`, the AIV's UB buffers; AIV tiles only), `ctx` (`hpmoe::TileContext&`)
//! and `rank` (`int64_t`, only where the tile's regions mention RANK) are in scope.

use super::region::ViewSpec;
use crate::error::{EmitErrorKind as Kind, EmitFault};
use hpmoe_core::model::{BuiltinOp, DType, OpKind, OpSpec};

/// One Matmul object of the AIC: a combination of element types, and the largest tile of the
/// families that use it (the host computes its tiling for that shape).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatmulGroup {
    /// Element type of the left operand `a[M, K]`.
    pub a: DType,
    /// Element type of the right operand `b[K, N]`.
    pub b: DType,
    /// Element type of the result `c[M, N]`.
    pub c: DType,
    /// A is stored transposed (`[K, M]`): the group's MatmulType for A has `isTrans` set.
    pub trans_a: bool,
    /// B is stored transposed (`[N, K]`).
    pub trans_b: bool,
    /// Rows of the largest tile (M), the tiling's `M` bound.
    pub m: u64,
    /// Columns of the largest tile (N).
    pub n: u64,
    /// Reduction depth of the largest tile (K).
    pub k: u64,
    /// An on-chip sum's group (`matmul_tn_slots_accumulate`): the tiling's base block is fixed
    /// at `m x n` (`SetFixSplit`), the block each `Iterate` accumulates in L0C.
    pub fixed_split: bool,
    /// The families with a matmul in this group, in declaration order.
    pub families: Vec<String>,
}

impl MatmulGroup {
    /// `bf16 x bf16 -> f32`, with `ᵀ` after a transposed operand (`bf16ᵀ x bf16 -> f32`).
    pub fn types(&self) -> String {
        let t = |trans: bool| if trans { "ᵀ" } else { "" };
        let sum = if self.fixed_split { ", summed in L0C by base blocks of M x N" } else { "" };
        format!("{}{} x {}{} -> {}{sum}", self.a.name(), t(self.trans_a), self.b.name(), t(self.trans_b), self.c.name())
    }
}

/// What an op call needs besides its views.
#[derive(Debug)]
pub struct CallSite<'a> {
    pub spec: &'a OpSpec,
    pub family: &'a str,
    /// This is the last `put` of the tile: it may carry a signal.
    pub last_put: bool,
    /// C++ expressions of the views, in argument order.
    pub args: Vec<String>,
    /// The rendered destination rank of a put.
    pub pe: Option<String>,
}

/// The statement for `site` with `views`, registering matmul groups. Errors explain the shape
/// or type the backend cannot handle.
pub fn statement(
    site: &CallSite<'_>,
    views: &[ViewSpec],
    names: &[String],
    groups: &mut Vec<MatmulGroup>,
) -> Result<String, EmitFault> {
    let fault = EmitFault::new;
    let op = match &site.spec.kind {
        OpKind::Builtin(op) => *op,
        OpKind::User { emit: Some(template) } => {
            let args: Vec<(&str, &str)> =
                site.spec.params.iter().map(|p| p.name.as_str()).zip(site.args.iter().map(String::as_str)).collect();
            let mut text = expand_template(template, &args)?;
            if !text.trim_end().ends_with(';') {
                text.push(';');
            }
            return Ok(text);
        }
        OpKind::User { emit: None } => {
            return Err(fault(
                Kind::NoEmission,
                format!(
                    "op `{}` has no AscendC emission: give it an `emit` template (e.g. `emit = \"MyOp(vec, {{dst}}, {{src}})\"`)",
                    site.spec.name
                ),
            ));
        }
    };
    let v = views;
    let a = |i: usize| v[i].cpp(names);
    let same_dtype = |i: usize, j: usize| {
        if v[i].dtype == v[j].dtype {
            Ok(())
        } else {
            Err(fault(
                Kind::DTypeMismatch,
                format!("`{}` is {} but `{}` is {}", v[i].text, v[i].dtype.name(), v[j].text, v[j].dtype.name()),
            ))
        }
    };
    let name = op.name();
    match op {
        BuiltinOp::SwigluBackward => {
            let (gu, d, dgu) = (&v[0], &v[1], &v[2]);
            if gu.rows != d.rows || gu.cols != 2 * d.cols || (dgu.rows, dgu.cols) != (gu.rows, gu.cols) {
                return Err(fault(
                    Kind::ShapeMismatch,
                    format!(
                        "swiglu_backward: `{}` ({}x{}) and `{}` ({}x{}) must have the rows of `{}` ({}x{}) and twice its \
                         columns",
                        gu.text, gu.rows, gu.cols, dgu.text, dgu.rows, dgu.cols, d.text, d.rows, d.cols
                    ),
                ));
            }
            for x in v {
                float_type(x)?;
            }
            Ok(format!("hpmoe::SwigluBackward(vec,\n    {},\n    {},\n    {});", a(0), a(1), a(2)))
        }
        BuiltinOp::ScaleRowsRepeat | BuiltinOp::RowDotTopk => {
            // (the T-row operand, the T·k-row operand, the T·k per-row elements)
            let (few, many, per) = if op == BuiltinOp::ScaleRowsRepeat { (0, 2, 1) } else { (0, 1, 2) };
            let k = top_k(&v[many], &v[few], name)?;
            if k > u64::from(crate::emit::ROW_SCALARS) {
                return Err(fault(
                    Kind::TooManyRows,
                    format!(
                        "{name}: k = {k} rows per row of `{}`; the backend handles at most {}",
                        v[few].text,
                        crate::emit::ROW_SCALARS
                    ),
                ));
            }
            per_row(&v[per], v[many].rows, name)?;
            for x in v {
                float_type(x)?;
            }
            let f = if op == BuiltinOp::ScaleRowsRepeat { "ScaleRowsRepeat" } else { "RowDotTopk" };
            Ok(format!("hpmoe::{f}(vec,\n    {},\n    {},\n    {});", a(0), a(1), a(2)))
        }
        BuiltinOp::SumTopk => {
            top_k(&v[0], &v[1], name)?;
            float_type(&v[0])?;
            float_type(&v[1])?;
            Ok(format!("hpmoe::SumTopk(vec,\n    {},\n    {});", a(0), a(1)))
        }
        BuiltinOp::GatherScaleRowsRepeat | BuiltinOp::GatherRowDotTopk | BuiltinOp::GatherSumTopk => {
            gather_topk(op, v, names)
        }
        BuiltinOp::Matmul
        | BuiltinOp::MatmulAccumulate
        | BuiltinOp::MatmulNt
        | BuiltinOp::MatmulTn
        | BuiltinOp::MatmulTnAccumulate => matmul(op, site, v, names, groups),
        BuiltinOp::MatmulTnSlotsAccumulate | BuiltinOp::MatmulTnSlots => {
            super::slots::matmul_tn_slots(site, v, names, groups)
        }
        BuiltinOp::Put => {
            same_dtype(0, 1)?;
            let (src, dst) = pair_shapes(&v[0], &v[1], names)?;
            let pe = site.pe.clone().ok_or_else(|| {
                fault(Kind::PutWithoutRank, "a put's destination must be a region `.on(rank)`".into())
            })?;
            let signal = if site.last_put { "hpmoe::kCarriesSignal" } else { "hpmoe::kDataOnly" };
            Ok(format!("hpmoe::Put(ctx,\n    {src},\n    {dst},\n    {pe},\n    {signal});"))
        }
        BuiltinOp::Copy => {
            same_dtype(0, 1)?;
            let (src, dst) = pair_shapes(&v[0], &v[1], names)?;
            Ok(format!("hpmoe::Copy(vec,\n    {src},\n    {dst});"))
        }
        BuiltinOp::Cast | BuiltinOp::Accumulate => {
            let (src, dst) = pair_shapes(&v[0], &v[1], names)?;
            let f = if op == BuiltinOp::Cast { "Cast" } else { "Accumulate" };
            Ok(format!("hpmoe::{f}(vec,\n    {src},\n    {dst});"))
        }
        BuiltinOp::Zero => Ok(format!("hpmoe::Zero(vec,\n    {});", a(0))),
        // The tile's waits are the fence: every write of the region has landed before they pass.
        BuiltinOp::Fence => {
            Ok(format!("// fence: every earlier write of `{}` has landed (the waits above)", v[0].text))
        }
        BuiltinOp::Swiglu => {
            if v[0].rows != v[1].rows || v[0].cols != 2 * v[1].cols {
                return Err(fault(
                    Kind::ShapeMismatch,
                    format!(
                        "swiglu: `{}` ({}x{}) must have the rows of `{}` ({}x{}) and twice its columns",
                        v[0].text, v[0].rows, v[0].cols, v[1].text, v[1].rows, v[1].cols
                    ),
                ));
            }
            float_type(&v[0])?;
            float_type(&v[1])?;
            Ok(format!("hpmoe::SwiGlu(vec,\n    {},\n    {});", a(0), a(1)))
        }
        BuiltinOp::ScaleRows | BuiltinOp::Dequantize => {
            if (v[0].rows, v[0].cols) != (v[2].rows, v[2].cols) {
                let (a, c) = (&v[0].text, &v[2].text);
                return Err(fault(
                    Kind::ShapeMismatch,
                    format!("{name}: `{a}` and `{c}` must have the same rows and columns"),
                ));
            }
            per_row(&v[1], v[0].rows, name)?;
            float_type(&v[2])?;
            Ok(format!("hpmoe::ScaleRows(vec,\n    {},\n    {},\n    {});", a(0), a(1), a(2)))
        }
        BuiltinOp::WeightedAccumulate => {
            let (src, w, dst) = (&v[0], &v[1], &v[2]);
            if src.cols != dst.cols || dst.rows == 0 || src.rows % dst.rows != 0 {
                return Err(fault(
                    Kind::ShapeMismatch,
                    format!(
                        "weighted_accumulate: `{}` ({}x{}) must have k times the rows of `{}` ({}x{}) and its columns",
                        src.text, src.rows, src.cols, dst.text, dst.rows, dst.cols
                    ),
                ));
            }
            let k = src.rows / dst.rows;
            if k > u64::from(crate::emit::TILE_ELEMS) {
                return Err(fault(
                    Kind::TooManyRows,
                    format!("weighted_accumulate: k = {k} rows per output row; the backend handles at most 4096"),
                ));
            }
            per_row(w, src.rows, name)?;
            Ok(format!("hpmoe::WeightedAccumulate(vec,\n    {},\n    {},\n    {});", a(0), a(1), a(2)))
        }
        BuiltinOp::GatherWeightedAccumulate => {
            let (table, index, w, dst) = (&v[0], &v[1], &v[2], &v[3]);
            if index.dtype != DType::I32 {
                return Err(fault(
                    Kind::UnsupportedDType,
                    format!("{name}: the row indices `{}` must be i32, not {}", index.text, index.dtype.name()),
                ));
            }
            if table.cols != dst.cols {
                let (t, d) = (&table.text, &dst.text);
                return Err(fault(
                    Kind::ShapeMismatch,
                    format!("{name}: the table `{t}` ({} columns) and `{d}` ({}) differ", table.cols, dst.cols),
                ));
            }
            if index.rows != dst.rows {
                let (i, d) = (&index.text, &dst.text);
                let message = format!("{name}: `{i}` needs one row of indices per row of `{d}` ({})", dst.rows);
                return Err(fault(Kind::ShapeMismatch, message));
            }
            let k = index.cols;
            if k > u64::from(crate::emit::TILE_ELEMS) {
                let message = format!("{name}: k = {k} choices per output row; the backend handles at most 4096");
                return Err(fault(Kind::TooManyRows, message));
            }
            per_row(w, index.elements(), name)?;
            Ok(format!(
                "hpmoe::GatherWeightedAccumulate(vec,\n    {},\n    {},\n    {},\n    {});",
                a(0),
                a(1),
                a(2),
                a(3)
            ))
        }
        BuiltinOp::Quantize => {
            if v[1].dtype != DType::I8 {
                return Err(fault(Kind::UnsupportedDType, format!("quantize: `{}` must be i8", v[1].text)));
            }
            if (v[0].rows, v[0].cols) != (v[1].rows, v[1].cols) {
                let (a, b) = (&v[0].text, &v[1].text);
                return Err(fault(
                    Kind::ShapeMismatch,
                    format!("quantize: `{a}` and `{b}` must have the same rows and columns"),
                ));
            }
            float_type(&v[0])?;
            float_type(&v[2])?;
            per_row(&v[2], v[0].rows, name)?;
            Ok(format!("hpmoe::Quantize(vec,\n    {},\n    {},\n    {});", a(0), a(1), a(2)))
        }
    }
}

/// A matmul-family call: checks the shapes for its layout and the types the Matmul API computes,
/// registers its group (element types and transposes) and calls the runtime's wrapper.
fn matmul(
    op: BuiltinOp,
    site: &CallSite<'_>,
    v: &[ViewSpec],
    names: &[String],
    groups: &mut Vec<MatmulGroup>,
) -> Result<String, EmitFault> {
    let fault = EmitFault::new;
    let (trans_a, trans_b) = match op {
        BuiltinOp::MatmulNt => (false, true),
        BuiltinOp::MatmulTn | BuiltinOp::MatmulTnAccumulate => (true, false),
        _ => (false, false),
    };
    // (rows, cols) of A and B as the product reads them: A m x k, B k x n.
    let (m, n) = (v[2].rows, v[2].cols);
    let k = if trans_a { v[0].rows } else { v[0].cols };
    let a_mk = if trans_a { (v[0].cols, v[0].rows) } else { (v[0].rows, v[0].cols) };
    let b_kn = if trans_b { (v[1].cols, v[1].rows) } else { (v[1].rows, v[1].cols) };
    if a_mk != (m, k) || b_kn != (k, n) {
        let form = match (trans_a, trans_b) {
            (false, false) => "a [M, K] · b [K, N]",
            (false, true) => "a [M, K] · (b [N, K])ᵀ",
            _ => "(a [K, M])ᵀ · b [K, N]",
        };
        return Err(fault(
            Kind::ShapeMismatch,
            format!(
                "{} shapes do not multiply as {form} = c [M, N]: a `{}` is {}x{}, b `{}` is {}x{}, c `{}` is {}x{}",
                op.name(),
                v[0].text,
                v[0].rows,
                v[0].cols,
                v[1].text,
                v[1].rows,
                v[1].cols,
                v[2].text,
                m,
                n
            ),
        ));
    }
    if v[0].dtype != v[1].dtype {
        return Err(fault(
            Kind::DTypeMismatch,
            format!("`{}` is {} but `{}` is {}", v[0].text, v[0].dtype.name(), v[1].text, v[1].dtype.name()),
        ));
    }
    let (ta, tc) = (v[0].dtype, v[2].dtype);
    let ok = matches!(ta, DType::Bf16 | DType::F16 | DType::F32) && (tc == DType::F32 || tc == ta)
        || ta == DType::I8 && matches!(tc, DType::I32 | DType::F16 | DType::I8);
    if !ok {
        let types = format!("{} x {} -> {}", ta.name(), ta.name(), tc.name());
        return Err(fault(Kind::UnsupportedDType, format!("the Matmul API does not compute {types}")));
    }
    let accumulate = matches!(op, BuiltinOp::MatmulAccumulate | BuiltinOp::MatmulTnAccumulate);
    if accumulate && tc != DType::F32 {
        return Err(fault(
            Kind::UnsupportedDType,
            format!(
                "{} adds into `{}`, which is {}: the Matmul API's atomic add would round \
                 the product into {} before adding it; accumulate into an f32 region",
                op.name(),
                v[2].text,
                tc.name(),
                tc.name()
            ),
        ));
    }
    let tile = MatmulGroup {
        a: ta,
        b: v[1].dtype,
        c: tc,
        trans_a,
        trans_b,
        m,
        n,
        k,
        fixed_split: false,
        families: Vec::new(),
    };
    let index = join_group(groups, tile, site.family);
    let f = match op {
        BuiltinOp::Matmul => "MatmulTile",
        BuiltinOp::MatmulAccumulate => "MatmulAccumulateTile",
        BuiltinOp::MatmulNt => "MatmulNtTile",
        BuiltinOp::MatmulTn => "MatmulTnTile",
        _ => "MatmulTnAccumulateTile",
    };
    let a = |i: usize| v[i].cpp(names);
    Ok(format!("hpmoe::{f}(mm{index},\n    {},\n    {},\n    {});", a(0), a(1), a(2)))
}

/// The index of the Matmul group `tile` (one call's types, transposes and shape) joins — one of
/// the same types and transposes and, for a fixed split, the same base block — added if none;
/// the group's shape grows to cover the call's and `family` is listed once.
pub(super) fn join_group(groups: &mut Vec<MatmulGroup>, tile: MatmulGroup, family: &str) -> usize {
    let same = |g: &MatmulGroup| {
        (g.a, g.b, g.c, g.trans_a, g.trans_b, g.fixed_split)
            == (tile.a, tile.b, tile.c, tile.trans_a, tile.trans_b, tile.fixed_split)
            && (!tile.fixed_split || (g.m, g.n) == (tile.m, tile.n))
    };
    let index = match groups.iter().position(same) {
        Some(i) => i,
        None => {
            groups.push(MatmulGroup { m: 0, n: 0, k: 0, families: Vec::new(), ..tile.clone() });
            groups.len() - 1
        }
    };
    let g = &mut groups[index];
    g.m = g.m.max(tile.m);
    g.n = g.n.max(tile.n);
    g.k = g.k.max(tile.k);
    if !g.families.iter().any(|f| f == family) {
        g.families.push(family.to_string());
    }
    index
}

/// Two regions of equal element count: as they are when their shapes agree, else both flattened
/// (which needs both contiguous).
fn pair_shapes(src: &ViewSpec, dst: &ViewSpec, names: &[String]) -> Result<(String, String), EmitFault> {
    if (src.rows, src.cols) == (dst.rows, dst.cols) {
        return Ok((src.cpp(names), dst.cpp(names)));
    }
    if src.elements() == dst.elements() && src.contiguous() && dst.contiguous() {
        return Ok((src.flattened().cpp(names), dst.flattened().cpp(names)));
    }
    Err(EmitFault::new(
        Kind::ShapeMismatch,
        format!(
            "`{}` ({}x{}) and `{}` ({}x{}) differ in shape and are not both contiguous",
            src.text, src.rows, src.cols, dst.text, dst.rows, dst.cols
        ),
    ))
}

/// `k` of a top-k op: `many` has `k ≥ 1` rows per row of `few`, and the same columns.
fn top_k(many: &ViewSpec, few: &ViewSpec, op: &str) -> Result<u64, EmitFault> {
    if many.cols != few.cols || few.rows == 0 || many.rows < few.rows || !many.rows.is_multiple_of(few.rows) {
        return Err(EmitFault::new(
            Kind::ShapeMismatch,
            format!(
                "{op}: `{}` ({}x{}) must have k times the rows of `{}` ({}x{}) (k ≥ 1) and its columns",
                many.text, many.rows, many.cols, few.text, few.rows, few.cols
            ),
        ));
    }
    Ok(many.rows / few.rows)
}

/// The gathering forms of `scale_rows_repeat`, `row_dot_topk` and `sum_topk`: `table` (argument
/// 0) and `i32` row or choice indices (argument 1, contiguous), checked against the other
/// arguments as the runtime's wrappers read them.
fn gather_topk(op: BuiltinOp, v: &[ViewSpec], names: &[String]) -> Result<String, EmitFault> {
    let name = op.name();
    let shape = |message: String| Err(EmitFault::new(Kind::ShapeMismatch, message));
    let (table, index) = (&v[0], &v[1]);
    if index.dtype != DType::I32 {
        return Err(EmitFault::new(
            Kind::UnsupportedDType,
            format!("{name}: the indices `{}` must be i32, not {}", index.text, index.dtype.name()),
        ));
    }
    if !index.contiguous() {
        return shape(format!("{name}: the indices `{}` must be contiguous", index.text));
    }
    // The argument whose rows are as long as the table's, and what else each form needs.
    let rows_like = match op {
        BuiltinOp::GatherScaleRowsRepeat => {
            let (weights, dst) = (&v[2], &v[3]);
            if index.elements() != dst.rows {
                return shape(format!(
                    "{name}: `{}` needs one index per row of `{}` ({})",
                    index.text, dst.text, dst.rows
                ));
            }
            if weights.rows != table.rows || !weights.contiguous() {
                let message = format!(
                    "{name}: `{}` must be {} contiguous rows of weights, one per row of `{}`",
                    weights.text, table.rows, table.text
                );
                return shape(message);
            }
            float_type(weights)?;
            dst
        }
        BuiltinOp::GatherRowDotTopk => {
            let (a, dw) = (&v[2], &v[3]);
            if index.rows != a.rows {
                return shape(format!(
                    "{name}: `{}` needs one row of indices per row of `{}` ({})",
                    index.text, a.text, a.rows
                ));
            }
            if index.cols > u64::from(crate::emit::ROW_SCALARS) {
                let message = format!(
                    "{name}: k = {} choices per row; the backend handles at most {}",
                    index.cols,
                    crate::emit::ROW_SCALARS
                );
                return Err(EmitFault::new(Kind::TooManyRows, message));
            }
            per_row(dw, index.elements(), name)?;
            float_type(dw)?;
            a
        }
        _ => {
            let dst = &v[2];
            if index.rows != dst.rows {
                return shape(format!(
                    "{name}: `{}` needs one row of indices per row of `{}` ({})",
                    index.text, dst.text, dst.rows
                ));
            }
            dst
        }
    };
    if table.cols != rows_like.cols {
        let (t, d) = (&table.text, &rows_like.text);
        return shape(format!(
            "{name}: the table `{t}` ({} columns) and `{d}` ({}) differ",
            table.cols, rows_like.cols
        ));
    }
    for x in v.iter().filter(|x| x.dtype != DType::I32) {
        float_type(x)?;
    }
    let f = match op {
        BuiltinOp::GatherScaleRowsRepeat => "GatherScaleRowsRepeat",
        BuiltinOp::GatherRowDotTopk => "GatherRowDotTopk",
        _ => "GatherSumTopk",
    };
    let args: Vec<String> = v.iter().map(|x| x.cpp(names)).collect();
    Ok(format!("hpmoe::{f}(vec,\n    {});", args.join(",\n    ")))
}

/// One element per row, contiguous.
fn per_row(v: &ViewSpec, rows: u64, op: &str) -> Result<(), EmitFault> {
    if v.elements() != rows || !v.contiguous() {
        let message = format!("{op}: `{}` must be {rows} contiguous elements, one per row", v.text);
        return Err(EmitFault::new(Kind::ShapeMismatch, message));
    }
    Ok(())
}

/// A bf16, f16 or f32 view.
fn float_type(v: &ViewSpec) -> Result<(), EmitFault> {
    if matches!(v.dtype, DType::Bf16 | DType::F16 | DType::F32) {
        Ok(())
    } else {
        Err(EmitFault::new(Kind::UnsupportedDType, format!("`{}` must be bf16, f16 or f32", v.text)))
    }
}

/// Replaces each `{name}` of `template` by its argument; `{{` and `}}` are literal braces. An
/// argument that follows `(` or `,` goes on a new line indented by 4, the way the built-in calls
/// are wrapped: `F(vec, {dst})` becomes `F(vec,\n    <view>)`.
pub fn expand_template(template: &str, args: &[(&str, &str)]) -> Result<String, EmitFault> {
    let bad = |message: String| EmitFault::new(Kind::BadTemplate, message);
    let mut out = String::new();
    let mut chars = template.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                out.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                out.push('}');
            }
            '{' => {
                let name: String = chars.by_ref().take_while(|&c| c != '}').collect();
                match args.iter().find(|(p, _)| *p == name) {
                    Some((_, value)) => {
                        // An argument starts a line of its own, like the built-in calls' views.
                        let kept = out.trim_end_matches(' ').len();
                        if out[..kept].ends_with([',', '(']) {
                            out.truncate(kept);
                            out.push_str("\n    ");
                        }
                        out.push_str(value);
                    }
                    None => {
                        return Err(bad(format!("the emission template names `{{{name}}}`, which is no parameter")));
                    }
                }
            }
            '}' => return Err(bad("unmatched `}` in the emission template".into())),
            c => out.push(c),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_expand_parameters_and_braces() {
        let args = [("dst", "D"), ("src", "S")];
        assert_eq!(expand_template("F(vec, {dst}, {src}) {{x}}", &args).unwrap(), "F(vec,\n    D,\n    S) {x}");
        assert_eq!(expand_template("F({dst}.Flat())", &args).unwrap(), "F(\n    D.Flat())");
        assert_eq!(expand_template("F(vec, 2 * {src})", &args).unwrap(), "F(vec, 2 * S)");
        let unknown = expand_template("F({other})", &args).unwrap_err();
        assert_eq!(unknown.kind, Kind::BadTemplate);
        assert!(unknown.message.contains("`{other}`"), "{}", unknown.message);
        assert_eq!(expand_template("F(})", &args).unwrap_err().kind, Kind::BadTemplate);
    }
}
