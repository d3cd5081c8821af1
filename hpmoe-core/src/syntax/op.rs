//! User-defined ops: `#[op(aiv, work = vector(5), emit = "...")] fn name(a: &TileData, b: &mut TileData) { .. }`
//! → an [`OpSpec`] in the taskflow's registry. `&TileData` parameters are read,
//! `&mut TileData` ones written (or read and written, when listed in `read_write(..)`).

use super::OpDecl;
use super::attr::OpArgs;
use super::lower::{Lower, ends_with};
use super::spans::{SpanRange, did_you_mean};
use crate::model::{Access, OpSpec, Param};
use syn::{Attribute, Expr, FnArg, ItemFn, Lit, Meta, Pat, ReturnType, Type};

impl Lower {
    pub(super) fn user_op(&mut self, stmt: usize, item: &ItemFn, attr: &Attribute) {
        let name = item.sig.ident.to_string();
        if name == crate::model::Guard::OP {
            // A call by this name is the tile guard, never an op call.
            self.error(
                &item.sig.ident,
                format!(
                    "`{name}` is the tile guard of the taskflow language, not an op name; give the op another name"
                ),
            );
            self.poison.ops.insert(name);
            return;
        }
        let args = match OpArgs::parse(&attr.meta) {
            Ok(a) => Some(a),
            Err(e) => {
                self.errors.push(e);
                None
            }
        };
        let params = self.op_params(item, args.as_ref());
        let (Some(args), Some(params)) = (args, params) else {
            self.poison.ops.insert(name);
            return;
        };
        if !self.emit_template(&args, &params) {
            self.poison.ops.insert(name);
            return;
        }
        let spec = OpSpec::new(name.clone(), args.core, params.clone(), args.work, doc_of(&item.attrs))
            .with_emit(args.emit.clone());
        if self.tf.ops.register(spec).is_err() {
            let builtin = crate::model::OpRegistry::builtin().get(&name).is_some();
            let what = if builtin { "a built-in op" } else { "an op declared earlier" };
            self.error(&item.sig.ident, format!("`{name}` is already {what}; give the op another name"));
            self.poison.ops.insert(name);
            return;
        }
        let idents = item
            .sig
            .inputs
            .iter()
            .filter_map(|a| match a {
                FnArg::Typed(pt) => match &*pt.pat {
                    Pat::Ident(p) => Some(p.ident.clone()),
                    _ => None,
                },
                FnArg::Receiver(_) => None,
            })
            .collect();
        self.ops.push(OpDecl { stmt, ident: item.sig.ident.clone(), params: idents });
    }

    fn op_params(&mut self, item: &ItemFn, args: Option<&OpArgs>) -> Option<Vec<Param>> {
        let sig = &item.sig;
        let mut ok = true;
        if !sig.generics.params.is_empty() {
            self.error(&sig.generics, "an op function has no generic parameters");
            ok = false;
        }
        if let ReturnType::Type(_, ty) = &sig.output {
            self.error(ty, "an op writes its results into its `&mut TileData` parameters and returns nothing");
            ok = false;
        }
        if sig.inputs.is_empty() {
            self.error(&sig.ident, "an op takes at least one region parameter");
            ok = false;
        }
        let usage = "an op parameter is a region: `name: &TileData` (read) or `name: &mut TileData` (written)";
        let mut params = Vec::new();
        for arg in &sig.inputs {
            let FnArg::Typed(pt) = arg else {
                self.error(arg, usage);
                ok = false;
                continue;
            };
            let (Pat::Ident(p), Type::Reference(r)) = (&*pt.pat, &*pt.ty) else {
                self.error(arg, usage);
                ok = false;
                continue;
            };
            if !ends_with(&r.elem, "TileData") {
                self.error(&pt.ty, usage);
                ok = false;
                continue;
            }
            let access = match r.mutability {
                None => Access::Read,
                Some(_) if args.is_some_and(|a| a.read_write.contains(&p.ident)) => Access::ReadWrite,
                Some(_) => Access::Write,
            };
            params.push(Param { name: p.ident.to_string(), access, remote: false });
        }
        for rw in args.map_or(&[][..], |a| &a.read_write[..]) {
            match params.iter().find(|p| *rw == p.name) {
                Some(p) if p.access == Access::ReadWrite => {}
                Some(_) => {
                    self.error(rw, format!("`{rw}` is read and written, so it is a `&mut TileData`"));
                    ok = false;
                }
                None => {
                    let names: Vec<&str> = params.iter().map(|p| p.name.as_str()).collect();
                    let help = did_you_mean(&rw.to_string(), names);
                    self.error(rw, format!("`read_write` names a parameter of the op; `{rw}` is not one{help}"));
                    ok = false;
                }
            }
        }
        ok.then_some(params)
    }

    /// Checks the `{param}` placeholders of the emission template.
    fn emit_template(&mut self, args: &OpArgs, params: &[Param]) -> bool {
        let range = SpanRange::single(args.emit_span);
        let names: Vec<&str> = params.iter().map(|p| p.name.as_str()).collect();
        match placeholders(&args.emit) {
            Err(msg) => {
                self.errors.push(range.error(format!("{msg}; write `{{name}}` for a parameter, `{{{{` for a brace")));
                false
            }
            Ok(used) => {
                let mut ok = true;
                for u in used {
                    if !names.contains(&u.as_str()) {
                        let help = did_you_mean(&u, names.iter().copied());
                        self.errors.push(range.error(format!(
                            "the emission template names `{{{u}}}`, but the op has no parameter `{u}`{help}"
                        )));
                        ok = false;
                    }
                }
                ok
            }
        }
    }
}

/// Why an emission template's braces do not parse ([`placeholders`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TemplateError {
    /// A `{` not closed by `}`, or enclosing something other than a parameter name; `text`
    /// is what followed the `{` (up to the `}` or the template's end).
    NotAPlaceholder {
        /// The text after the `{`.
        text: String,
    },
    /// A `}` with no `{` before it (and not doubled as `}}`).
    UnmatchedClose,
}

impl std::fmt::Display for TemplateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TemplateError::NotAPlaceholder { text } => {
                write!(f, "`{{{text}` in the emission template is not a placeholder")
            }
            TemplateError::UnmatchedClose => f.write_str("unmatched `}` in the emission template"),
        }
    }
}

impl std::error::Error for TemplateError {}

/// The `{name}` placeholders of an emission template, in order; `{{` and `}}` are braces.
pub fn placeholders(template: &str) -> Result<Vec<String>, TemplateError> {
    let mut out = Vec::new();
    let mut chars = template.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
            }
            '{' => {
                let mut name = String::new();
                let mut closed = false;
                for c in chars.by_ref() {
                    if c == '}' {
                        closed = true;
                        break;
                    }
                    name.push(c);
                }
                if !closed || name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
                    return Err(TemplateError::NotAPlaceholder { text: name });
                }
                out.push(name);
            }
            '}' => return Err(TemplateError::UnmatchedClose),
            _ => {}
        }
    }
    Ok(out)
}

/// The doc comment of an item, as one line.
fn doc_of(attrs: &[Attribute]) -> String {
    let lines: Vec<String> = attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            Meta::NameValue(nv) => match &nv.value {
                Expr::Lit(l) => match &l.lit {
                    Lit::Str(s) => Some(s.value().trim().to_string()),
                    _ => None,
                },
                _ => None,
            },
            _ => None,
        })
        .filter(|l| !l.is_empty())
        .collect();
    lines.join(" ")
}

#[cfg(test)]
mod tests {
    use super::{TemplateError, placeholders};

    #[test]
    fn templates() {
        assert_eq!(placeholders("F({dst}, {src}, {{x}})"), Ok(vec!["dst".to_string(), "src".to_string()]));
        let not = |text: &str| Err(TemplateError::NotAPlaceholder { text: text.to_string() });
        assert_eq!(placeholders("F({dst"), not("dst"));
        assert_eq!(placeholders("F(dst})"), Err(TemplateError::UnmatchedClose));
        assert_eq!(placeholders("F({a b})"), not("a b"));
        assert_eq!(not("a b").unwrap_err().to_string(), "`{a b` in the emission template is not a placeholder");
    }
}
