//! Identifiers in generated C/C++: the kernel's name, its parameters, grid variables, and the
//! constant names `ScheduleTable::c_header` gives a table and its families.

// The header's constant names come from the table's own header writer, so the two cannot drift.
pub use hpmoe_core::table::{c_constant_name as constant_name, family_identifiers as family_constants};
use std::collections::BTreeSet;

/// C++ keywords and names a generated kernel already uses, which a user's name must not shadow.
const RESERVED: &[&str] = &[
    "alignas",
    "alignof",
    "and",
    "asm",
    "auto",
    "bool",
    "break",
    "case",
    "catch",
    "char",
    "class",
    "const",
    "constexpr",
    "continue",
    "default",
    "delete",
    "do",
    "double",
    "else",
    "enum",
    "explicit",
    "export",
    "extern",
    "false",
    "float",
    "for",
    "friend",
    "goto",
    "if",
    "inline",
    "int",
    "long",
    "mutable",
    "namespace",
    "new",
    "noexcept",
    "not",
    "nullptr",
    "operator",
    "or",
    "private",
    "protected",
    "public",
    "register",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "struct",
    "switch",
    "template",
    "this",
    "throw",
    "true",
    "try",
    "typedef",
    "typename",
    "union",
    "unsigned",
    "using",
    "virtual",
    "void",
    "volatile",
    "while",
    "xor",
    "half",
    "bfloat16_t",
    "int8_t",
    "int32_t",
    "int64_t",
    "uint32_t",
    "uint8_t",
    "g",
    "ctx",
    "vec",
    "args",
    "rank",
    "instance",
    "tiles",
    "pipe",
    "launch",
    "hpmoe",
    "AscendC",
];

/// `name` as a C identifier: characters other than ASCII letters, digits and `_` become `_`, a
/// leading digit (or nothing) gets a `_` in front, and a reserved word gets a `_` after.
pub fn identifier(name: &str) -> String {
    let mut out: String = name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect();
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    if RESERVED.contains(&out.as_str()) {
        out.push('_');
    }
    out
}

/// Distinct identifiers for `names`, avoiding `taken`: [`identifier`], then `_` appended until
/// free.
pub fn distinct_identifiers<'a>(names: impl Iterator<Item = &'a str>, taken: &[&str]) -> Vec<String> {
    let mut used: BTreeSet<String> = taken.iter().map(|s| s.to_string()).collect();
    names
        .map(|n| {
            let mut id = identifier(n);
            while used.contains(&id) {
                id.push('_');
            }
            used.insert(id.clone());
            id
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_valid_and_distinct() {
        assert_eq!(identifier("moe_ffn"), "moe_ffn");
        assert_eq!(identifier("9x"), "_9x");
        assert_eq!(identifier("a-b"), "a_b");
        assert_eq!(identifier("int"), "int_");
        assert_eq!(identifier("rank"), "rank_");
        assert_eq!(distinct_identifiers(["x", "x", "table"].into_iter(), &["table"]), ["x", "x_", "table_"]);
        assert_eq!(family_constants(["gmm", "Gmm", "9"].into_iter()), ["GMM", "GMM_1", "_9"]);
    }
}
