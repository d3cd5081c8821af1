//! Dependency cycles, reported as the path of tile instances.

use super::node_name;
use crate::error::{Diagnostic, ErrorKind};
use crate::expand::InstanceSpace;
use crate::model::{Loc, Taskflow};

/// The error for a cycle `[a, b, ..., a]` of the instance DAG.
///
/// Data edges always run from an earlier-declared family to a later one, so a cycle must
/// use an `after` entry that points back to a family declared no earlier: the error is put
/// at that entry.
pub fn cycle_error(tf: &Taskflow, space: &InstanceSpace, cycle: &[u32]) -> Diagnostic {
    let fam = |n: u32| space.family_of(n);
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
    const SHOWN: usize = 12;
    let mut path: Vec<String> = cycle.iter().take(SHOWN).map(|&n| node_name(tf, space, n)).collect();
    if cycle.len() > SHOWN {
        path.push(format!("... ({} more) ... {}", cycle.len() - SHOWN - 1, node_name(tf, space, cycle[0])));
    }
    let families: Vec<&str> = {
        let mut v: Vec<&str> = cycle.iter().map(|&n| tf.families[fam(n)].name.as_str()).collect();
        v.dedup();
        v
    };
    Diagnostic::new(ErrorKind::Cycle, loc, format!("dependency cycle: {}", path.join(" -> ")))
        .help(format!("tiles on the cycle: {}; remove or redirect one `after` entry", families.join(" -> ")))
}
