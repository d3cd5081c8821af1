//! Ordered accumulation: tiles that add into one region must be totally ordered.
//!
//! An accumulating op (a parameter with [`Access::ReadWrite`]: `accumulate`,
//! `weighted_accumulate`, `matmul_accumulate`, a user op that reads and writes in place) adds
//! into its region. Two instances of one family that add into overlapping data form a hazard
//! like any two writers; when the ordering check finds no path between them, the sum would
//! take whatever order the schedule gives it, and floating-point sums differ by order. This
//! module words that error for accumulations: what is wrong, and how to chain the instances so
//! that the sum has one order on every run and under every schedule. (Accumulations in
//! different families need nothing: a later family's read-modify-write already waits for the
//! earlier family's writes, so they add in declaration order.)

use super::node_name;
use crate::error::{Capped, Diagnostic, Diagnostics, ErrorKind as K};
use crate::expand::{Expanded, Hazard, HazardKind};
use crate::model::{Access, Loc, Taskflow, TileFamily};

/// Whether `h` is two instances of one family that both add into the data they share.
pub fn is_accumulation(tf: &Taskflow, exp: &Expanded, h: &Hazard) -> bool {
    if h.kind != HazardKind::SameFamily {
        return false;
    }
    let family = &tf.families[exp.space.family_of(h.first)];
    let tensor = &tf.tensors[h.tensor as usize].name;
    access_at(tf, family, tensor, h.first_loc) == Some(Access::ReadWrite)
        && access_at(tf, family, tensor, h.second_loc) == Some(Access::ReadWrite)
}

/// The access of the argument of `family`'s body written at `loc` that names `tensor`.
fn access_at(tf: &Taskflow, family: &TileFamily, tensor: &str, loc: Loc) -> Option<Access> {
    family.body.iter().find_map(|call| {
        let spec = tf.ops.get(&call.op)?;
        let position = call.args.iter().position(|r| r.loc == loc && r.tensor == tensor)?;
        Some(spec.params.get(position)?.access)
    })
}

/// One error per pair of places in the source for the unordered accumulations `failed`
/// (indices into `hazards`, all of which satisfy [`is_accumulation`]).
pub fn report(tf: &Taskflow, exp: &Expanded, hazards: &[Hazard], failed: &[u32], out: &mut Diagnostics) {
    let mut capped = Capped::new(out, K::UnorderedAccumulation);
    let mut groups: Vec<(&Hazard, usize)> = Vec::new();
    // A pair of instances is one hazard per direction it was found in; count it once.
    let mut seen = std::collections::HashSet::new();
    for h in failed.iter().map(|&i| &hazards[i as usize]) {
        if !seen.insert((h.first.min(h.second), h.first.max(h.second))) {
            continue;
        }
        match groups.iter_mut().find(|(g, _)| (g.first_loc, g.second_loc) == (h.first_loc, h.second_loc)) {
            Some(group) => group.1 += 1,
            None => groups.push((h, 0)),
        }
    }
    for (h, more) in groups {
        let family = &tf.families[exp.space.family_of(h.first)];
        let t = &tf.tensors[h.tensor as usize];
        let (a, b) = (node_name(tf, &exp.space, h.first), node_name(tf, &exp.space, h.second));
        let more = match more {
            0 => String::new(),
            n => format!(" (and {n} more pairs)"),
        };
        let d = Diagnostic::new(
            K::UnorderedAccumulation,
            h.second_loc,
            format!(
                "unordered accumulation: {a} and {b} both add into `{}`{} on rank {} with no order between them, \
                 so the sum's order (and its rounding) would depend on the schedule{more}",
                t.name, h.overlap, h.rank
            ),
        )
        .help(chain_help(exp, family, h));
        capped.push(if h.first_loc == h.second_loc { d } else { d.note(h.first_loc, format!("{a} adds here")) });
    }
}

/// How to order the two instances: a chain along a grid dimension in which they differ.
fn chain_help(exp: &Expanded, family: &TileFamily, h: &Hazard) -> String {
    let space = &exp.space;
    let (a, b) = (space.coords_of_local(space.local_of(h.first)), space.coords_of_local(space.local_of(h.second)));
    let tree = "or add into disjoint regions and sum those in a fixed order";
    let Some(k) = (0..family.grid.len()).find(|&k| a.get(k) != b.get(k)) else {
        return format!("accumulations into one region must be totally ordered: {tree}");
    };
    let entry: Vec<String> = family
        .grid
        .iter()
        .enumerate()
        .map(|(i, d)| if i == k { format!("{} - 1", d.name) } else { d.name.clone() })
        .collect();
    format!(
        "accumulations into one region must be totally ordered: chain the instances along `{}` so that each \
         waits for the one before it, `after({}({}))` in `{}` (the first instance has none to wait for), {tree}",
        family.grid[k].name,
        family.name,
        entry.join(", "),
        family.name
    )
}
