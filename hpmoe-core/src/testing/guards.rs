//! Guards: `run_if_above` on random families, their counts put by an `announce` family from
//! every rank, and the data and skip count that go with them.

use crate::model::{Affine, CoreKind, DType, Guard, Loc, Taskflow};

/// A family's `run_if_above` guard: `run_if_above(counts.at((a·i0 + RANK) % R), b·i0 + c)`, where
/// `counts` arrives by put from every rank (see [`with_guards`]) and `i0` is the first grid
/// index (0 for a family without grid).
pub type GuardSpec = Option<(i64, i64, i64)>;

/// The input each rank announces its counts from (`i32`, one per rank).
pub const COUNT_SRC: &str = "count_src";

/// `tf` with an `announce` family first, putting each rank's `count_src[dst]` into `counts[RANK]`
/// on rank `dst`, and family `f{i}` of `tf` guarded by `guards[i]` reading `counts` (see
/// [`GuardSpec`]). Other families (a chain's seed) and families past the end of `guards` stay
/// unguarded.
pub fn with_guards(mut tf: Taskflow, guards: &[GuardSpec]) -> Taskflow {
    let ranks = tf.profile.ranks;
    let count_src = tf.input(COUNT_SRC, DType::I32, &[u64::from(ranks)]);
    let counts = tf.symmetric("counts", DType::I32, &[u64::from(ranks)]);
    tf.tile("announce", CoreKind::Aiv, |t| {
        let dst = t.grid("dst", u64::from(ranks));
        t.put(count_src.at(dst.clone()), counts.on(dst).at(Affine::rank()));
    });
    tf.families.rotate_right(1); // before every family that reads `counts`
    for f in &mut tf.families[1..] {
        let spec = f.name.strip_prefix('f').and_then(|i| i.parse::<usize>().ok()).and_then(|i| guards.get(i));
        let Some(&Some((a, b, c))) = spec else { continue };
        let i0 = if f.grid.is_empty() { Affine::constant(0) } else { Affine::index(0) };
        let sel = (i0.clone() * a + Affine::rank()).modulo(u64::from(ranks));
        f.guard = Some(Guard { count: counts.at(sel), above: i0 * b + c, loc: Loc::NONE });
    }
    tf
}
