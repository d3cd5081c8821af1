//! Tensor aliases: `const A: Tensor<Bf16> = X;` names the tensor `X` of the body `A` too. The
//! IR holds `X` alone: a region written with `A` is a region of `X`. A layout file shared by
//! several taskflows can so read a tensor each includer picks (the MoE-FFN backward's `GMM1_IN`:
//! the received rows `RECV` under BF16 dispatch, the dequantised `XIN` under INT8).
//!
//! An alias names a tensor declared in the body, or another alias (followed to its tensor),
//! with the same element type; it declares nothing of its own.

use super::ast::AliasItem;
use super::lower::Lower;
use super::spans::{SpanRange, did_you_mean};
use std::collections::{HashMap, HashSet};

impl Lower {
    /// Resolves every alias of the body to the tensor it names (after every tensor is
    /// declared); an alias that cannot be resolved is an error at its name or its target, and
    /// poisoned, so its uses add nothing more.
    pub(super) fn aliases(&mut self, items: &[&AliasItem<'_>]) {
        let written: HashMap<String, &AliasItem<'_>> = items.iter().map(|a| (a.item.ident.to_string(), *a)).collect();
        // The aliases of a cycle already reported: one error per cycle, at its first alias.
        let mut in_reported_cycle: HashSet<String> = HashSet::new();
        for alias in items {
            let name = alias.item.ident.to_string();
            if in_reported_cycle.contains(&name) {
                self.poison.tensors.insert(name);
                continue;
            }
            if self.tensors.contains_key(&name) || self.poison.tensors.contains(&name) {
                self.error(&alias.item.ident, format!("`{name}` is declared twice: as a tensor and as an alias"));
                continue;
            }
            // Follow aliases of aliases to a tensor, refusing a cycle.
            let mut seen = vec![name.clone()];
            let mut target = alias.target.to_string();
            while let Some(next) = written.get(&target) {
                if in_reported_cycle.contains(&target) {
                    // It leads into a cycle already reported.
                    self.poison.tensors.insert(name.clone());
                    break;
                }
                if seen.contains(&target) {
                    let start = seen.iter().position(|s| *s == target).unwrap_or(0);
                    in_reported_cycle.extend(seen[start..].iter().cloned());
                    seen.push(target.clone());
                    self.error(
                        alias.target,
                        format!("the aliases `{}` name one another in a cycle", seen.join("` → `")),
                    );
                    self.poison.tensors.insert(name.clone());
                    break;
                }
                seen.push(target);
                target = next.target.to_string();
            }
            if self.poison.tensors.contains(&name) {
                continue;
            }
            if self.poison.tensors.contains(&target) {
                // The tensor's own declaration failed, and said so.
                self.poison.tensors.insert(name);
                continue;
            }
            let Some(decl) = self.tf.tensors.iter().find(|t| t.name == target) else {
                let help = did_you_mean(&target, self.tf.tensors.iter().map(|t| t.name.as_str()));
                self.errors.push(SpanRange::of(alias.target).error(format!(
                    "`{name}` is an alias of `{target}`, which is not a tensor declared in the taskflow body{help}"
                )));
                self.poison.tensors.insert(name);
                continue;
            };
            if decl.dtype != alias.dtype {
                let msg = format!(
                    "`{name}` is declared `Tensor<{}>` but the tensor it names, `{target}`, holds {}",
                    element(alias.dtype),
                    element(decl.dtype)
                );
                self.error(&alias.item.ty, msg);
                self.poison.tensors.insert(name);
                continue;
            }
            self.aliases.insert(name, target);
        }
    }
}

/// The DSL's name of an element type (`Tensor<Bf16>`).
fn element(dtype: crate::model::DType) -> &'static str {
    use crate::model::DType;
    match dtype {
        DType::Bf16 => "Bf16",
        DType::F16 => "F16",
        DType::F32 => "F32",
        DType::I8 => "I8",
        DType::I32 => "I32",
    }
}
