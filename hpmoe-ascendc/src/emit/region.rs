//! A region argument as a strided matrix of its tensor: the `hpmoe::View` the emitted code
//! passes to an op.
//!
//! A region's box in a row-major tensor is `rows x cols` with one row stride when its last
//! dimension gives the columns and, among the other dimensions, every one after the first that
//! has more than one index is taken whole (then consecutive rows are always a tensor row apart).
//! `recv[e, 128*m .. +128, :]` is 128 x H with stride H; `w13[e, :, 512*n .. +512]` is H x 512
//! with stride 2I; `x[0..2, 0..4, :]` of an `[E, R, H]` tensor is not (rows jump at the third and
//! fifth), and the backend reports it.

use super::expr;
use crate::error::{EmitErrorKind, EmitFault};
use hpmoe_core::model::{Affine, DType, RankSel, Region, TensorDecl, Var};
use std::fmt::Write;

/// A region as `hpmoe::View<T>(args.<param>).From(offset).Rows(rows).Cols(cols).Stride(ld)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ViewSpec {
    pub dtype: DType,
    /// The tensor's field in the kernel's `Args`.
    pub param: String,
    /// Element offset of the region's start: the part without a modulus ...
    pub offset: Affine,
    /// ... plus these reduced starts times their strides.
    pub offset_mods: Vec<(Affine, i64)>,
    pub rows: u64,
    pub cols: u64,
    /// Elements between consecutive rows.
    pub ld: u64,
    /// The destination rank of a put's region.
    pub remote: Option<Affine>,
    /// The region as written, for comments: `recv[e, 128 * m .. +128, :]`.
    pub text: String,
}

impl ViewSpec {
    pub fn elements(&self) -> u64 {
        self.rows * self.cols
    }

    /// One contiguous run of elements.
    pub fn contiguous(&self) -> bool {
        self.cols == self.ld || self.rows <= 1
    }

    /// A contiguous region as one row.
    pub fn flattened(&self) -> ViewSpec {
        let n = self.elements();
        ViewSpec { rows: 1, cols: n, ld: n, ..self.clone() }
    }

    /// The C++ element type.
    pub fn cpp_type(&self) -> &'static str {
        cpp_type(self.dtype)
    }

    /// The offset as a C++ expression.
    pub fn offset_cpp(&self, names: &[String]) -> String {
        let mut parts = Vec::new();
        if self.offset != Affine::constant(0) || self.offset_mods.is_empty() {
            parts.push(expr::cpp(&self.offset, names));
        }
        for (e, stride) in &self.offset_mods {
            parts.push(if *stride == 1 { expr::cpp(e, names) } else { format!("{} * {stride}", expr::cpp(e, names)) });
        }
        parts.join(" + ")
    }

    /// `hpmoe::View<T>(args.x).From(offset).Rows(rows).Cols(cols).Stride(ld)`: every number
    /// named, `From` left out when the region starts at the tensor's first element.
    pub fn cpp(&self, names: &[String]) -> String {
        let offset = self.offset_cpp(names);
        let from = if offset == "0" { String::new() } else { format!(".From({offset})") };
        format!(
            "hpmoe::View<{}>(args.{}){from}.Rows({}).Cols({}).Stride({})",
            self.cpp_type(),
            self.param,
            self.rows,
            self.cols,
            self.ld
        )
    }

    /// Every variable the view's offset and destination mention.
    pub fn vars(&self) -> Vec<Var> {
        let mut out: Vec<Var> = expr::vars(&self.offset).collect();
        for (e, _) in &self.offset_mods {
            out.extend(expr::vars(e));
        }
        if let Some(r) = &self.remote {
            out.extend(expr::vars(r));
        }
        out
    }
}

/// The C++ element type of a tensor element type.
pub fn cpp_type(d: DType) -> &'static str {
    match d {
        DType::Bf16 => "bfloat16_t",
        DType::F16 => "half",
        DType::F32 => "float",
        DType::I8 => "int8_t",
        DType::I32 => "int32_t",
    }
}

/// The view of `region` of `tensor` (whose kernel field is `param`); `names` are the family's
/// grid variables. Errors name what does not fit.
pub fn view(tensor: &TensorDecl, param: &str, region: &Region, names: &[String]) -> Result<ViewSpec, EmitFault> {
    let shape = &tensor.shape;
    let n = shape.len();
    let len = |k: usize| region.dims.get(k).map_or(shape[k], |d| d.len);
    let start = |k: usize| region.dims.get(k).map_or_else(|| Affine::constant(0), |d| d.start.clone());
    let text = region_text(tensor, region, names);
    if n == 0 {
        return Err(EmitFault::new(EmitErrorKind::UnstridedRegion, format!("`{text}`: a tensor without dimensions")));
    }
    let cols = len(n - 1);
    let ld = shape[n - 1];
    let rows: u64 = (0..n - 1).map(len).product();
    if let Some(first) = (0..n - 1).find(|&k| len(k) > 1)
        && let Some(q) = (first + 1..n - 1).find(|&q| len(q) != shape[q])
    {
        return Err(EmitFault::new(
            EmitErrorKind::UnstridedRegion,
            format!(
                "`{text}` is not a strided matrix: dimension {first} spans several indices, so dimension {q} \
             (extent {}) must be taken whole, not {} of it; the AscendC backend passes every region as rows \
             of one stride",
                shape[q],
                len(q)
            ),
        ));
    }
    let fits = |v: u64| v <= u64::from(u32::MAX);
    if !fits(rows) || !fits(cols) || !fits(ld) || !fits(rows.saturating_mul(cols)) {
        return Err(EmitFault::new(
            EmitErrorKind::RegionTooLarge,
            format!("`{text}` has {rows} x {cols} elements (row stride {ld}); the backend's views hold 2^32 - 1"),
        ));
    }
    let mut offset = Affine::constant(0);
    let mut offset_mods = Vec::new();
    let mut stride: i64 = 1;
    for k in (0..n).rev() {
        let s = start(k);
        if s.modulo.is_some() {
            offset_mods.push((s, stride));
        } else if s != Affine::constant(0) {
            offset = offset + s * stride;
        }
        stride = stride.saturating_mul(i64::try_from(shape[k]).unwrap_or(i64::MAX));
    }
    offset_mods.reverse();
    let remote = match &region.rank {
        RankSel::Local => None,
        RankSel::Remote(e) => Some(e.clone()),
    };
    Ok(ViewSpec { dtype: tensor.dtype, param: param.to_string(), offset, offset_mods, rows, cols, ld, remote, text })
}

/// `name[start .. +len, i, :]`, with `.on(dst)` for a remote region.
pub fn region_text(tensor: &TensorDecl, region: &Region, names: &[String]) -> String {
    let mut out = tensor.name.clone();
    if let RankSel::Remote(e) = &region.rank {
        let _ = write!(out, ".on({})", expr::cpp(e, names).replace("hpmoe::Mod", "mod"));
    }
    out.push('[');
    for (k, &extent) in tensor.shape.iter().enumerate() {
        if k > 0 {
            out.push_str(", ");
        }
        match region.dims.get(k) {
            Some(d) if d.start == Affine::constant(0) && d.len == extent => out.push(':'),
            Some(d) => {
                let s = expr::cpp(&d.start, names).replace("hpmoe::Mod", "mod");
                if d.len == 1 {
                    out.push_str(&s);
                } else {
                    let _ = write!(out, "{s} .. +{}", d.len);
                }
            }
            None => out.push(':'),
        }
    }
    out.push(']');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use hpmoe_core::model::{Loc, TensorKind};

    fn tensor(shape: &[u64]) -> TensorDecl {
        TensorDecl {
            name: "t".into(),
            kind: TensorKind::Scratch,
            dtype: DType::Bf16,
            shape: shape.iter().copied().collect(),
            loc: Loc::NONE,
        }
    }

    #[test]
    fn strided_matrices_and_their_offsets() {
        let names = ["e".to_string(), "m".to_string(), "n".to_string()];
        let t = tensor(&[4, 256, 64]);
        let r = Region::whole("t").at(Affine::index(0)).slice(Affine::index(1) * 16, 16);
        let v = view(&t, "t", &r, &names).unwrap();
        assert_eq!((v.rows, v.cols, v.ld), (16, 64, 64));
        assert_eq!(v.offset_cpp(&names), "16384 * e + 1024 * m");
        assert_eq!(v.text, "t[e, 16 * m .. +16, :]");
        let r = Region::whole("t").at(Affine::index(0)).all(256).slice(Affine::index(2) * 8, 8);
        let v = view(&t, "t", &r, &names).unwrap();
        assert_eq!((v.rows, v.cols, v.ld), (256, 8, 64));
        assert!(!v.contiguous());
        let r = Region::whole("t").slice(0, 2).slice(0, 4);
        assert_eq!(view(&t, "t", &r, &names).unwrap_err().kind, EmitErrorKind::UnstridedRegion);
        let r = Region::whole("t").slice(0, 2);
        let v = view(&t, "t", &r, &names).unwrap();
        assert_eq!((v.rows, v.cols, v.ld, v.contiguous()), (512, 64, 64, true));
        let r = Region::whole("t").at((Affine::rank() + Affine::index(0)).modulo(4)).on(Affine::index(1));
        let v = view(&t, "t", &r, &names).unwrap();
        assert_eq!(v.offset_cpp(&names), "hpmoe::Mod(e + rank, 4) * 16384");
        assert_eq!(v.text, "t.on(m)[mod(e + rank, 4), :, :]");
        assert_eq!(
            v.cpp(&names),
            "hpmoe::View<bfloat16_t>(args.t).From(hpmoe::Mod(e + rank, 4) * 16384).Rows(256).Cols(64).Stride(64)"
        );
        let whole = view(&t, "t", &Region::whole("t"), &names).unwrap();
        assert_eq!(whole.cpp(&names), "hpmoe::View<bfloat16_t>(args.t).Rows(1024).Cols(64).Stride(64)");
    }
}
