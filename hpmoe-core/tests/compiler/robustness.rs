//! Arbitrary taskflow IR — wrong names, zero and huge extents, out-of-range indices, remote
//! regions anywhere, cycles — must give errors or a schedule, never a panic, quickly.

use hpmoe_core::model::{
    Affine, After, CoreKind, DType, DimSlice, GridDim, Guard, IndexSel, Loc, MachineProfile, OpCall, Part, RankSel,
    Reduce, Region, TensorDecl, TensorKind, TileFamily, Var,
};
use hpmoe_core::schedule::UnitCost;
use proptest::prelude::*;
use smallvec::SmallVec;

const NAMES: &[&str] = &["a", "b", "c", "x", "y", "zz"];
const OPS: &[&str] = &["matmul", "put", "copy", "swiglu", "accumulate", "zero", "nope"];

fn name() -> impl Strategy<Value = String> {
    prop::sample::select(NAMES).prop_map(str::to_string)
}

fn extent() -> impl Strategy<Value = u64> {
    prop_oneof![6 => 1u64..6, 1 => Just(0u64), 1 => Just(u64::MAX), 1 => Just(1u64 << 33)]
}

fn affine() -> impl Strategy<Value = Affine> {
    (
        prop_oneof![4 => -2i64..8, 1 => Just(i64::MAX), 1 => Just(i64::MIN)],
        prop::collection::vec((prop_oneof![(0u8..5).prop_map(Var::Index), Just(Var::Rank)], -3i64..4), 0..3),
        prop::option::weighted(0.2, prop_oneof![Just(0u64), 1u64..5]),
        // A reduced part, its divisor possibly zero (hand-built: the builder would refuse it).
        prop::option::weighted(
            0.2,
            (prop_oneof![(0u8..5).prop_map(Var::Index), Just(Var::Rank)], any::<bool>(), 0u64..5, -3i64..4),
        ),
    )
        .prop_map(|(constant, terms, modulo, part)| {
            let mut terms: Vec<(Var, i64)> = terms.into_iter().filter(|t| t.1 != 0).collect();
            terms.sort_by_key(|t| t.0);
            terms.dedup_by_key(|t| t.0);
            let parts = part
                .filter(|p| p.3 != 0)
                .map(|(v, rem, by, k)| {
                    let op = if rem { Reduce::Rem(by) } else { Reduce::Div(by) };
                    (Part { inner: Affine::var(v) + 1, op }, k)
                })
                .into_iter()
                .collect();
            Affine { constant, terms: terms.into_iter().collect(), parts, modulo }
        })
}

fn region() -> impl Strategy<Value = Region> {
    (name(), prop::option::weighted(0.2, affine()), prop::collection::vec((affine(), extent()), 0..4)).prop_map(
        |(tensor, remote, dims)| Region {
            tensor,
            rank: remote.map_or(RankSel::Local, RankSel::Remote),
            dims: dims.into_iter().map(|(start, len)| DimSlice { start, len }).collect(),
            loc: Loc::NONE,
        },
    )
}

fn family() -> impl Strategy<Value = TileFamily> {
    (
        name(),
        any::<bool>(),
        prop::collection::vec((name(), extent()), 0..4),
        prop::collection::vec((prop::sample::select(OPS), prop::collection::vec(region(), 0..4)), 0..3),
        prop::collection::vec((name(), prop::collection::vec(prop::option::of(affine()), 0..3)), 0..2),
        prop::option::weighted(0.3, (region(), affine())),
    )
        .prop_map(|(name, aic, grid, body, after, guard)| TileFamily {
            name,
            core: if aic { CoreKind::Aic } else { CoreKind::Aiv },
            grid: grid.into_iter().map(|(name, extent)| GridDim { name, extent, loc: Loc::NONE }).collect(),
            body: body
                .into_iter()
                .map(|(op, args)| OpCall { op: op.to_string(), args: args.into_iter().collect(), loc: Loc::NONE })
                .collect(),
            after: after
                .into_iter()
                .map(|(family, sel)| After {
                    family,
                    indices: sel.into_iter().map(|s| s.map_or(IndexSel::All, IndexSel::At)).collect(),
                    loc: Loc::NONE,
                })
                .collect(),
            guard: guard.map(|(count, above)| Guard { count, above, loc: Loc::NONE }),
            loc: Loc::NONE,
        })
}

fn tensor() -> impl Strategy<Value = TensorDecl> {
    let kind =
        prop::sample::select(&[TensorKind::Input, TensorKind::Output, TensorKind::Scratch, TensorKind::Symmetric][..]);
    let dtype = prop::sample::select(&[DType::Bf16, DType::I32][..]);
    (name(), kind, dtype, prop::collection::vec(extent(), 0..5)).prop_map(|(name, kind, dtype, shape)| TensorDecl {
        name,
        kind,
        dtype,
        shape: shape.into_iter().collect::<SmallVec<_>>(),
        loc: Loc::NONE,
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn arbitrary_ir_never_panics(
        aic in 0u32..3,
        ranks in prop_oneof![4 => 1u32..4, 1 => Just(0u32), 1 => Just(5000u32)],
        tensors in prop::collection::vec(tensor(), 0..5),
        families in prop::collection::vec(family(), 0..5),
    ) {
        let mut tf = hpmoe_core::model::Taskflow::new("fuzz", MachineProfile::small(aic, ranks));
        tf.tensors = tensors;
        tf.families = families;
        let started = std::time::Instant::now();
        match hpmoe_core::compile(&tf, &UnitCost) {
            Ok(c) => prop_assert_eq!(c.table.entries().len(), c.expanded.nodes()),
            Err(d) => prop_assert!(!d.is_empty()),
        }
        // Generous: a hang or a blow-up, not a slow machine, is what this is for.
        prop_assert!(started.elapsed().as_secs() < 20);
    }
}
