//! Dependency cycles, reported as the path of tile instances.

use super::node_name;
use crate::error::{Diagnostic, ErrorKind};
use crate::expand::InstanceSpace;
use crate::ids::NodeId;
use crate::model::{Loc, Taskflow};

/// The error for per-core orders that would deadlock: `cycle` is a cycle `[a, b, ..., a]`
/// of the DAG joined with the per-core order edges, as the deadlock proof returns it.
pub fn deadlock_error(tf: &Taskflow, space: &InstanceSpace, cycle: &[NodeId]) -> Diagnostic {
    Diagnostic::new(
        ErrorKind::Deadlock,
        tf.loc,
        format!("the per-core orders could deadlock: {}", path_text(tf, space, cycle)),
    )
    .help("each tile waits on the next one of the cycle, either for its data or because it runs later on the same core")
}

/// `a(..) on rank r -> b(..) on rank r -> ...`, shortened past a dozen steps.
fn path_text(tf: &Taskflow, space: &InstanceSpace, cycle: &[NodeId]) -> String {
    const SHOWN: usize = 12;
    let mut path: Vec<String> = cycle.iter().take(SHOWN).map(|&n| node_name(tf, space, n)).collect();
    if cycle.len() > SHOWN {
        path.push(format!("... ({} more) ... {}", cycle.len() - SHOWN - 1, node_name(tf, space, cycle[0])));
    }
    path.join(" -> ")
}

/// The error for a cycle `[a, b, ..., a]` of the instance DAG.
///
/// Data edges always run from an earlier-declared family to a later one, so a cycle must
/// use an `after` entry that points back to a family declared no earlier: the error is put
/// at that entry.
pub fn cycle_error(tf: &Taskflow, space: &InstanceSpace, cycle: &[NodeId]) -> Diagnostic {
    let fam = |n: NodeId| space.family_of(n);
    let loc = cycle
        .windows(2)
        .find_map(|w| {
            let (from, to) = (fam(w[0]), fam(w[1]));
            (from >= to).then(|| {
                let consumer = &tf.families[to];
                consumer.after.iter().find(|a| a.family == tf.families[from].name).map(|a| a.loc)
            })?
        })
        .unwrap_or_else(|| cycle.first().map_or(Loc::NONE, |&n| tf.families[fam(n)].loc));
    let families: Vec<&str> = {
        let mut v: Vec<&str> = cycle.iter().map(|&n| tf.families[fam(n)].name.as_str()).collect();
        v.dedup();
        v
    };
    let d = Diagnostic::new(ErrorKind::Cycle, loc, format!("dependency cycle: {}", path_text(tf, space, cycle)));
    match cycle.first().map(|&n| fam(n)) {
        Some(only) if cycle.iter().all(|&n| fam(n) == only) => {
            let f = &tf.families[only];
            d.help(format!(
                "the instances of `{}` wait for each other: its `after` entries on itself must all point the same \
                 way along the grid, e.g. only `after({})`",
                f.name,
                f.chain_entry(f.grid.len().saturating_sub(1))
            ))
        }
        _ => d.help(format!("tiles on the cycle: {}; remove or redirect one `after` entry", families.join(" -> "))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{CoreKind, MachineProfile};

    #[test]
    fn deadlock_names_the_waiting_tiles() {
        let mut tf = Taskflow::new("t", MachineProfile::small(1, 1));
        tf.tile("a", CoreKind::Aiv, |t| {
            t.grid("i", 2);
        });
        let exp = crate::analyse(&tf).unwrap();
        let d = deadlock_error(&tf, &exp.space, &[1, 0, 1].map(NodeId::new));
        assert_eq!(d.kind, ErrorKind::Deadlock);
        assert_eq!(
            d.message,
            "the per-core orders could deadlock: a(i=1) on rank 0 -> a(i=0) on rank 0 -> a(i=1) on rank 0"
        );
    }
}
