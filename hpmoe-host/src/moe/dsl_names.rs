//! The builder's taskflows under the family names of the MoE-FFN layer written in the
//! `#[taskflow]` DSL (`examples/dsl/`), so the two can be compared table for table: a schedule
//! table names its families.

use hpmoe_core::model::Taskflow;

/// `built` with the forward's `swiglu` family named `activation`, as the DSL files name it (a
/// tile cannot share its name with the op it calls), in the family and in every `after` that
/// refers to it.
pub fn under_dsl_names(mut built: Taskflow) -> Taskflow {
    for f in &mut built.families {
        if f.name == "swiglu" {
            f.name = "activation".into();
        }
        for a in &mut f.after {
            if a.family == "swiglu" {
                a.family = "activation".into();
            }
        }
    }
    built
}
