//! Traces of simulated runs: Chrome/Perfetto JSON ([`chrome_trace`]) and an SVG timeline
//! of one rank ([`svg_timeline`]), for example taskflow above kernel-by-kernel.
//!
//! ```
//! use hpmoe_core::cost::{CostProfile, TaskflowCost};
//! use hpmoe_host::moe::MoeShape;
//! use hpmoe_host::trace::{Labels, Panel, chrome_trace, svg_timeline};
//!
//! let shape = MoeShape::tiny(2);
//! let tf = shape.taskflow().unwrap();
//! let cost = TaskflowCost::new(&tf, CostProfile::ascend_a3_die());
//! let compiled = hpmoe_core::compile(&tf, &cost).unwrap();
//! let cmp = hpmoe_host::sim::compare(&compiled, &tf.profile, &cost).unwrap();
//! let labels = Labels::new(&tf, &compiled.expanded);
//! let json = chrome_trace(&cmp.taskflow, &labels);
//! assert!(json.starts_with("{\"displayTimeUnit\""));
//! let svg = svg_timeline(&[Panel::taskflow(&cmp.taskflow), Panel::baseline(&cmp.baseline, &labels)], 0, &labels);
//! assert!(svg.starts_with("<svg"));
//! ```

pub mod chrome;
pub mod svg;

pub use chrome::chrome_trace;
pub use svg::{Panel, svg_timeline};

use hpmoe_core::expand::{Expanded, InstanceSpace};
use hpmoe_core::ids::NodeId;
use hpmoe_core::model::Taskflow;

/// Names of families and tile instances, for traces.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Labels {
    space: InstanceSpace,
    families: Vec<String>,
    /// Per family: its grid index names.
    index_names: Vec<Vec<String>>,
}

impl Labels {
    /// Labels from the taskflow `exp` was expanded from.
    pub fn new(tf: &Taskflow, exp: &Expanded) -> Self {
        Labels {
            space: exp.space.clone(),
            families: tf.families.iter().map(|f| f.name.clone()).collect(),
            index_names: tf.families.iter().map(|f| f.index_names()).collect(),
        }
    }

    /// Name of family `f`.
    pub fn family(&self, f: usize) -> &str {
        self.families.get(f).map_or("?", String::as_str)
    }

    /// Number of families.
    pub fn families(&self) -> usize {
        self.families.len()
    }

    /// `gmm1(e=0, m=1, n=2)`: a node's family and grid coordinates.
    pub fn instance(&self, node: NodeId) -> String {
        let local = self.space.local_of(node);
        let f = self.space.family_of_local(local);
        let coords = self.space.coords_of_local(local);
        let names = self.index_names.get(f).map_or(&[][..], Vec::as_slice);
        let parts: Vec<String> = names.iter().zip(&coords).map(|(n, c)| format!("{n}={c}")).collect();
        format!("{}({})", self.family(f), parts.join(", "))
    }
}
