//! Guards: `run_if_above` on random families, their counts put by an `announce` family from
//! every rank, and the data and skip count that go with them.

use super::spec::GuardSpec;
use crate::exec::{HostTensor, Inputs, SplitMix};
use crate::model::{Affine, CoreKind, DType, Guard, Loc, Taskflow};

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

/// `count_src` of every rank for data seed `seed`: values in `0..5`.
pub fn count_data(tf: &Taskflow, seed: u64) -> Vec<Vec<i32>> {
    let mut rng = SplitMix::new(seed ^ 0xC0);
    (0..tf.profile.ranks).map(|_| (0..tf.profile.ranks).map(|_| (rng.next_u64() % 5) as i32).collect()).collect()
}

/// Random data for every input of `tf` ([`Inputs::random`]) with `count_src` from [`count_data`].
pub fn inputs(tf: &Taskflow, seed: u64) -> Inputs {
    let mut inputs = Inputs::random(tf, seed);
    for (rank, c) in (0..).zip(count_data(tf, seed)) {
        let bits = c.iter().map(|&v| v as u32).collect();
        inputs.set_rank(COUNT_SRC, rank, HostTensor::from_bits(DType::I32, &[c.len() as u64], bits));
    }
    inputs
}

/// The instances whose guard fails on data seed `seed`, from the guards' definition alone: on
/// rank `r`, `counts[s]` is rank `s`'s `count_src[r]`.
pub fn expected_skips(tf: &Taskflow, seed: u64) -> u64 {
    let counts = count_data(tf, seed);
    let mut skipped = 0;
    for rank in 0..tf.profile.ranks {
        for f in &tf.families {
            let Some(g) = &f.guard else { continue };
            let sel = &g.count.dims[0].start;
            let extents: Vec<u64> = f.grid.iter().map(|d| d.extent).collect();
            for i in 0..extents.iter().product::<u64>() {
                let mut coords = vec![0u64; extents.len()];
                let mut rest = i;
                for (c, &e) in coords.iter_mut().zip(&extents).rev() {
                    *c = rest % e;
                    rest /= e;
                }
                let src = sel.eval(&coords, u64::from(rank)).expect("guards of generated taskflows evaluate") as usize;
                let count = i64::from(counts[src][rank as usize]);
                let above = g.above.eval(&coords, u64::from(rank)).expect("guards of generated taskflows evaluate");
                skipped += u64::from(count <= above);
            }
        }
    }
    skipped
}
