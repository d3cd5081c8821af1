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
    /// Rows of the largest tile (M), the tiling's `M` bound.
    pub m: u64,
    /// Columns of the largest tile (N).
    pub n: u64,
    /// Reduction depth of the largest tile (K).
    pub k: u64,
    /// The families with a matmul in this group, in declaration order.
    pub families: Vec<String>,
}

impl MatmulGroup {
    /// `bf16 x bf16 -> f32`.
    pub fn types(&self) -> String {
        format!("{} x {} -> {}", self.a.name(), self.b.name(), self.c.name())
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
        BuiltinOp::Matmul | BuiltinOp::MatmulAccumulate => {
            let (m, k, n) = (v[2].rows, v[0].cols, v[2].cols);
            if v[0].rows != m || v[1].rows != k || v[1].cols != n {
                return Err(fault(
                    Kind::ShapeMismatch,
                    format!(
                        "matmul shapes do not multiply: a `{}` is {}x{}, b `{}` is {}x{}, c `{}` is {}x{}",
                        v[0].text, v[0].rows, v[0].cols, v[1].text, v[1].rows, v[1].cols, v[2].text, m, n
                    ),
                ));
            }
            same_dtype(0, 1)?;
            let (ta, tc) = (v[0].dtype, v[2].dtype);
            let ok = matches!(ta, DType::Bf16 | DType::F16 | DType::F32) && (tc == DType::F32 || tc == ta)
                || ta == DType::I8 && matches!(tc, DType::I32 | DType::F16 | DType::I8);
            if !ok {
                let types = format!("{} x {} -> {}", ta.name(), ta.name(), tc.name());
                return Err(fault(Kind::UnsupportedDType, format!("the Matmul API does not compute {types}")));
            }
            if op == BuiltinOp::MatmulAccumulate && tc != DType::F32 {
                return Err(fault(
                    Kind::UnsupportedDType,
                    format!(
                        "matmul_accumulate adds into `{}`, which is {}: the Matmul API's atomic add would round \
                         the product into {} before adding it; accumulate into an f32 region",
                        v[2].text,
                        tc.name(),
                        tc.name()
                    ),
                ));
            }
            let index = match groups.iter().position(|g| (g.a, g.b, g.c) == (ta, v[1].dtype, tc)) {
                Some(i) => i,
                None => {
                    groups.push(MatmulGroup { a: ta, b: v[1].dtype, c: tc, m: 0, n: 0, k: 0, families: Vec::new() });
                    groups.len() - 1
                }
            };
            let g = &mut groups[index];
            g.m = g.m.max(m);
            g.n = g.n.max(n);
            g.k = g.k.max(k);
            if !g.families.iter().any(|f| f == site.family) {
                g.families.push(site.family.to_string());
            }
            let f = if op == BuiltinOp::Matmul { "MatmulTile" } else { "MatmulAccumulateTile" };
            Ok(format!("hpmoe::{f}(mm{index},\n    {},\n    {},\n    {});", a(0), a(1), a(2)))
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
