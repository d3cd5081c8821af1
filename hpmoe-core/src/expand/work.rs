//! The work of a tile instance for the cost model: flops and bytes per op call, from each
//! argument's region extents and the op's [`WorkModel`].

use super::Work;
use crate::model::WorkModel;
use crate::resolve::Resolved;
use smallvec::SmallVec;

/// Work of one instance of family `fi` (the same for all its instances).
pub(super) fn family_work(r: &Resolved<'_>, fi: usize, f: &crate::model::TileFamily) -> Work {
    let tf = r.tf;
    let mut w = Work::default();
    for (call, resolved) in f.body.iter().zip(&r.calls[fi]) {
        let shapes: SmallVec<[(SmallVec<[u64; 4]>, u64); 4]> = call
            .args
            .iter()
            .zip(&resolved.tensors)
            .map(|(region, &t)| {
                let decl = &tf.tensors[t];
                let dims =
                    decl.shape.iter().enumerate().map(|(k, &e)| region.dims.get(k).map_or(e, |d| d.len)).collect();
                (dims, decl.dtype.size_bytes())
            })
            .collect();
        let elems = |s: &SmallVec<[u64; 4]>| s.iter().product::<u64>();
        let bytes = |i: usize| elems(&shapes[i].0).saturating_mul(shapes[i].1);
        let all_bytes = (0..shapes.len()).map(bytes).fold(0u64, u64::saturating_add);
        match resolved.spec.work {
            work @ (WorkModel::Matmul | WorkModel::MatmulNt | WorkModel::MatmulTn) => {
                if shapes.len() >= 3
                    && let Some(d) = work.matmul_dims(&shapes[0].0, &shapes[2].0)
                {
                    w.flops = w.flops.saturating_add(2u64.saturating_mul(d.m).saturating_mul(d.n).saturating_mul(d.k));
                }
                w.bytes = w.bytes.saturating_add(all_bytes);
            }
            WorkModel::Vector { flops_per_element } => {
                let most = shapes.iter().map(|s| elems(&s.0)).max().unwrap_or(0);
                w.flops = w.flops.saturating_add(most.saturating_mul(u64::from(flops_per_element)));
                w.bytes = w.bytes.saturating_add(all_bytes);
            }
            WorkModel::Gather { flops_per_element } => {
                let picked = gathered(&shapes.iter().map(|s| (s.0.as_slice(), s.1)).collect::<SmallVec<[_; 4]>>());
                w.flops = w.flops.saturating_add(picked.elements.saturating_mul(u64::from(flops_per_element)));
                let rest = (1..shapes.len()).map(bytes).fold(0u64, u64::saturating_add);
                w.bytes = w.bytes.saturating_add(picked.bytes).saturating_add(rest);
            }
            // Orders only: nothing moves, nothing is computed.
            WorkModel::Order => {}
            WorkModel::Copy => {
                for (i, region) in call.args.iter().enumerate() {
                    if region.is_remote() {
                        w.remote_bytes = w.remote_bytes.saturating_add(bytes(i));
                    } else {
                        w.bytes = w.bytes.saturating_add(bytes(i));
                    }
                }
            }
        }
    }
    w
}

/// Elements and bytes of the rows a [`WorkModel::Gather`] op reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Gathered {
    pub elements: u64,
    pub bytes: u64,
}

/// The rows a gather picks, from its arguments' (extents, element size): one row of the
/// table (argument 0, every dimension but the first) per element of the index (argument 1).
pub fn gathered(args: &[(&[u64], u64)]) -> Gathered {
    let (Some((table, elem_bytes)), Some((index, _))) = (args.first(), args.get(1)) else {
        return Gathered::default();
    };
    let row = table.iter().skip(1).fold(1u64, |a, &e| a.saturating_mul(e));
    let rows = index.iter().fold(1u64, |a, &e| a.saturating_mul(e));
    let elements = rows.saturating_mul(row);
    Gathered { elements, bytes: elements.saturating_mul(*elem_bytes) }
}
