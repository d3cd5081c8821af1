//! [`ScheduleTable::c_header`]: a C/C++ header describing the binary blob exactly.
//!
//! The header has two parts. The *layout* (structs mirroring the records, with
//! `static_assert`s on every size and field offset) is the same for every table of this
//! format version and sits under its own guard `HPMOE_TABLE_LAYOUT_V1`, so several tables'
//! headers can be included together. The *table* part, under the caller's guard, gives this
//! table's constants with prefix `HPMOE_<NAME>_` (`<NAME>`: the table's name in capitals,
//! other characters as `_`): machine shape, counts, total size, checksum, section offsets,
//! and per family `FAMILY_<F>` (its index), `FIRST_<F>`, `COUNT_<F>`, `KIND_<F>`, `DIMS_<F>`
//! and `EXTENTS_<F>` (a brace initialiser of 4 extents).

use super::ScheduleTable;
use super::layout::{CHECKSUM_OFFSET, CHECKSUM_START, FILE_HEADER_SIZE, SECTION_NAMES};
use super::records::{
    CORE_KIND_AIC, CoreRecord, EntryRecord, FORMAT_VERSION, FamilyRecord, MAGIC, NO_WAIT, SignalRecord,
};
use crate::limits::MAX_GRID_DIMS;
use std::fmt::Write;

/// One field of a C struct: type, name, array length (0 = not an array), offset, comment.
struct CField {
    ty: &'static str,
    name: &'static str,
    array: usize,
    offset: usize,
    doc: &'static str,
}

const fn field(ty: &'static str, name: &'static str, array: usize, offset: usize, doc: &'static str) -> CField {
    CField { ty, name, array, offset, doc }
}

/// One C struct mirroring a record: name, size, fields, comment.
struct CStruct {
    name: &'static str,
    size: usize,
    doc: &'static str,
    fields: &'static [CField],
}

const SECTION: CStruct = CStruct {
    name: "hpmoe_section",
    size: 8,
    doc: "Where a section lies: byte offset from the blob's start, and size in bytes.",
    fields: &[field("uint32_t", "offset", 0, 0, ""), field("uint32_t", "bytes", 0, 4, "")],
};

const HEADER: CStruct = CStruct {
    name: "hpmoe_table_header",
    size: FILE_HEADER_SIZE,
    doc: "The blob's first bytes.",
    fields: &[
        field("uint8_t", "magic", 8, 0, "HPMOE_TABLE_MAGIC, without a NUL"),
        field("uint32_t", "version", 0, 8, "HPMOE_TABLE_FORMAT_VERSION"),
        field("uint32_t", "checksum", 0, CHECKSUM_OFFSET, "CRC-32 of bytes [HPMOE_TABLE_CHECKSUM_START, total_bytes)"),
        field("uint32_t", "total_bytes", 0, CHECKSUM_START, "length of the blob"),
        field("uint32_t", "ranks", 0, 20, ""),
        field("uint32_t", "cores_per_rank", 0, 24, "aic_per_rank * (1 + aiv_per_aic)"),
        field("uint32_t", "aic_per_rank", 0, 28, ""),
        field("uint32_t", "aiv_per_aic", 0, 32, ""),
        field("uint32_t", "families", 0, 36, "tile families"),
        field("uint32_t", "instances_per_rank", 0, 40, "tile instances of one rank"),
        field("uint32_t", "counters_per_rank_max", 0, 44, "counter workspace size of a rank, in counters"),
        field("uint32_t", "entry_count", 0, 48, "entries of all cores"),
        field("uint32_t", "signal_count", 0, 52, "signals of all entries"),
        field("hpmoe_section", "families_section", 0, 56, "hpmoe_family_record[families]"),
        field("hpmoe_section", "cores_section", 0, 64, "hpmoe_core_record[ranks * cores_per_rank]"),
        field("hpmoe_section", "counters_section", 0, 72, "uint32_t[ranks]: counters each rank uses"),
        field("hpmoe_section", "entries_section", 0, 80, "hpmoe_entry_record[entry_count]"),
        field("hpmoe_section", "signals_section", 0, 88, "hpmoe_signal_record[signal_count]"),
        field("hpmoe_section", "names_section", 0, 96, "NUL-terminated names, zero-padded to 4 bytes"),
    ],
};

const FAMILY: CStruct = CStruct {
    name: "hpmoe_family_record",
    size: FamilyRecord::SIZE,
    doc: "A tile family: local instance ids [first_instance, first_instance + instance_count),\n\
          grid point (instance - first_instance) in row-major order over extents[0 .. dims].",
    fields: &[
        field("uint32_t", "first_instance", 0, 0, ""),
        field("uint32_t", "instance_count", 0, 4, ""),
        field("uint8_t", "core_kind", 0, 8, "HPMOE_CORE_KIND_AIC or HPMOE_CORE_KIND_AIV"),
        field("uint8_t", "dims", 0, 9, "grid dimensions in use, 0..4"),
        field("uint16_t", "reserved", 0, 10, "0"),
        field("uint32_t", "extents", MAX_GRID_DIMS, 12, "0 beyond dims"),
    ],
};

const CORE: CStruct = CStruct {
    name: "hpmoe_core_record",
    size: CoreRecord::SIZE,
    doc: "A core's entries: entries[first_entry, first_entry + entry_count), in run order.\n\
          One per global core = rank * cores_per_rank + local core; local AIC ids first, then AIV.",
    fields: &[field("uint32_t", "first_entry", 0, 0, ""), field("uint32_t", "entry_count", 0, 4, "")],
};

const ENTRY: CStruct = CStruct {
    name: "hpmoe_entry_record",
    size: EntryRecord::SIZE,
    doc: "One tile on a core: wait until counter wait_counter of this rank >= wait_target\n\
          (unless wait_counter == HPMOE_NO_WAIT), run local instance `instance`, then send\n\
          signals[first_signal, first_signal + signal_count).",
    fields: &[
        field("uint32_t", "instance", 0, 0, "local instance id within the rank"),
        field("uint32_t", "wait_counter", 0, 4, "counter on this rank, or HPMOE_NO_WAIT"),
        field("uint16_t", "wait_target", 0, 8, "0 when there is no wait"),
        field("uint16_t", "signal_count", 0, 10, ""),
        field("uint32_t", "first_signal", 0, 12, ""),
    ],
};

const SIGNAL: CStruct = CStruct {
    name: "hpmoe_signal_record",
    size: SignalRecord::SIZE,
    doc: "After its tile, an entry adds 1 to counter `counter` on rank `rank`.",
    fields: &[
        field("uint32_t", "counter", 0, 0, ""),
        field("uint16_t", "rank", 0, 4, ""),
        field("uint16_t", "reserved", 0, 6, "0"),
    ],
};

/// What a core does with its list of entries: the table's meaning in words, one line each,
/// without comment markers. The header's preamble says it, and so does every generated kernel
/// that walks a table (hpmoe-ascendc's `NAME.cpp`), in these words.
pub const CORE_WALK: [&str; 4] = [
    "A core c of rank r (global core g = r * cores_per_rank + c) runs, for each of its entries:",
    "  1. if wait_counter != HPMOE_NO_WAIT: wait until counter wait_counter of rank r >= wait_target;",
    "  2. the tile of local instance `instance` (see hpmoe_family_record for its family and grid point);",
    "  3. for each of its signals: add 1 to counter `counter` on rank `rank`.",
];

/// The constants of a table's header (each `HPMOE_<NAME>_<constant>`) a kernel checks a blob
/// against before it trusts an index read from it, in this order: the machine shape and the
/// counts, the total size and the checksum field.
pub const CHECKED_CONSTANTS: [&str; 10] = [
    "RANKS",
    "CORES_PER_RANK",
    "AIC_PER_RANK",
    "AIV_PER_AIC",
    "FAMILIES",
    "INSTANCES_PER_RANK",
    "ENTRY_COUNT",
    "SIGNAL_COUNT",
    "TOTAL_BYTES",
    "CHECKSUM",
];

/// `count` and the noun that agrees with it: `one` for 1, `many` otherwise.
fn counted(count: impl Into<u64>, one: &str, many: &str) -> String {
    let count = count.into();
    format!("{count} {}", if count == 1 { one } else { many })
}

impl ScheduleTable {
    /// A C/C++ header describing this table's blob: the record structs (with size and
    /// offset `static_assert`s) and this table's constants. `guard_name` is the include
    /// guard of the table part; it must be a C identifier.
    ///
    /// # Panics
    /// If `guard_name` is not a C identifier.
    pub fn c_header(&self, guard_name: &str) -> String {
        assert!(is_c_identifier(guard_name), "include guard {guard_name:?} is not a C identifier");
        let mut out = String::new();
        self.write_preamble(&mut out);
        out.push_str(&format!("#ifndef {guard_name}\n#define {guard_name}\n\n"));
        write_layout(&mut out);
        self.write_constants(&mut out);
        out.push_str(&format!("#endif /* {guard_name} */\n"));
        out
    }

    fn write_preamble(&self, out: &mut String) {
        let name = comment_safe(self.name());
        let h = &self.header;
        let _ = writeln!(out, "/* Schedule table `{name}`, generated by hpmoe. Do not edit.");
        let _ = writeln!(out, " *");
        let _ = writeln!(
            out,
            " * {} x {} ({} AIC + {} AIV, {} AIV per AIC); {};",
            counted(h.ranks, "rank", "ranks"),
            counted(h.cores_per_rank, "core", "cores"),
            h.aic_per_rank,
            h.aic_per_rank * h.aiv_per_aic,
            h.aiv_per_aic,
            counted(h.families, "tile family", "tile families")
        );
        let _ = writeln!(
            out,
            " * {} per rank; {}, {}, {}.",
            counted(h.instances_per_rank, "instance", "instances"),
            counted(h.entry_count, "entry", "entries"),
            counted(h.signal_count, "signal", "signals"),
            counted(self.total_bytes() as u64, "byte", "bytes")
        );
        out.push_str(
            " *
 * The blob (ScheduleTable::to_bytes) is little-endian: an hpmoe_table_header, then these
 * sections in this order, each at a multiple of 4 bytes, with no gaps:
 *   families  hpmoe_family_record[families]
 *   cores     hpmoe_core_record[ranks * cores_per_rank]  global core = rank * cores_per_rank + local
 *   counters  uint32_t[ranks]                            counters each rank uses
 *   entries   hpmoe_entry_record[entry_count]            core after core, each core's in run order
 *   signals   hpmoe_signal_record[signal_count]          entry after entry
 *   names     the table's name, then each family's, each NUL-terminated; zero-padded
 * The checksum is the CRC-32 (IEEE 802.3, as zlib's crc32()) of every byte from offset
 * HPMOE_TABLE_CHECKSUM_START (just after the checksum field) to the end of the blob.
 *
",
        );
        for line in CORE_WALK {
            let _ = writeln!(out, " * {line}");
        }
        out.push_str(" */\n\n");
    }

    fn write_constants(&self, out: &mut String) {
        let view = self.view();
        let h = &self.header;
        let prefix = format!("HPMOE_{}_", c_constant_name(self.name()));
        let layout = view.layout();
        let checksum = crc32fast::hash(&self.to_bytes()[CHECKSUM_START..]);
        let _ = writeln!(out, "/* Constants of table `{}`. */", comment_safe(self.name()));
        let constants = [
            ("RANKS", h.ranks),
            ("CORES_PER_RANK", h.cores_per_rank),
            ("AIC_PER_RANK", h.aic_per_rank),
            ("AIV_PER_AIC", h.aiv_per_aic),
            ("FAMILIES", h.families),
            ("INSTANCES_PER_RANK", h.instances_per_rank),
            ("COUNTERS_PER_RANK_MAX", h.counters_per_rank_max),
            ("ENTRY_COUNT", h.entry_count),
            ("SIGNAL_COUNT", h.signal_count),
            ("TOTAL_BYTES", layout.total as u32),
        ];
        for (name, value) in constants {
            let _ = writeln!(out, "#define {prefix}{name} {value}u");
        }
        let _ = writeln!(out, "#define {prefix}CHECKSUM 0x{checksum:08X}u");
        let _ = writeln!(out, "\n/* Sections: byte offset from the blob's start, size in bytes. */");
        for (section, s) in SECTION_NAMES.iter().zip(layout.sections) {
            let upper = section.to_ascii_uppercase();
            let _ = writeln!(out, "#define {prefix}{upper}_OFFSET {}u", s.offset);
            let _ = writeln!(out, "#define {prefix}{upper}_BYTES {}u", s.bytes);
        }
        let _ = writeln!(out, "\n/* Tile families: index, and for each its local instance ids, core kind and grid. */");
        let idents = family_identifiers(view.family_names());
        if !idents.is_empty() {
            out.push_str("enum {\n");
            for (i, ident) in idents.iter().enumerate() {
                let f = &self.families[i];
                let _ = writeln!(
                    out,
                    "    {prefix}FAMILY_{ident} = {i}, /* `{}`: {}, grid {:?}, instances [{}, {}) */",
                    comment_safe(view.family_name(i)),
                    f.kind().map_or("?", |k| k.name()),
                    f.grid(),
                    f.first_instance,
                    f.first_instance + f.instance_count
                );
            }
            out.push_str("};\n");
        }
        for (ident, f) in idents.iter().zip(&self.families) {
            let kind = if f.core_kind == CORE_KIND_AIC { "HPMOE_CORE_KIND_AIC" } else { "HPMOE_CORE_KIND_AIV" };
            let extents = f.extents.map(|e| format!("{e}u")).join(", ");
            let _ = writeln!(out, "#define {prefix}FIRST_{ident} {}u", f.first_instance);
            let _ = writeln!(out, "#define {prefix}COUNT_{ident} {}u", f.instance_count);
            let _ = writeln!(out, "#define {prefix}KIND_{ident} {kind}");
            let _ = writeln!(out, "#define {prefix}DIMS_{ident} {}u", f.dims);
            let _ = writeln!(out, "#define {prefix}EXTENTS_{ident} {{{extents}}}");
        }
        out.push('\n');
    }
}

/// The structs and format constants, the same for every table of this format version.
fn write_layout(out: &mut String) {
    let magic = String::from_utf8_lossy(&MAGIC);
    out.push_str(
        "/* ---- Layout of format version 1, shared by all tables. ---- */
#ifndef HPMOE_TABLE_LAYOUT_V1
#define HPMOE_TABLE_LAYOUT_V1

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
#define HPMOE_STATIC_ASSERT(cond, message) static_assert(cond, message)
#else
#define HPMOE_STATIC_ASSERT(cond, message) _Static_assert(cond, message)
#endif

",
    );
    let _ = writeln!(out, "#define HPMOE_TABLE_MAGIC \"{magic}\" /* the first 8 bytes; no NUL in the blob */");
    let _ = writeln!(out, "#define HPMOE_TABLE_FORMAT_VERSION {FORMAT_VERSION}u");
    let _ = writeln!(out, "#define HPMOE_TABLE_CHECKSUM_OFFSET {CHECKSUM_OFFSET}u");
    let _ = writeln!(out, "#define HPMOE_TABLE_CHECKSUM_START {CHECKSUM_START}u");
    let _ = writeln!(out, "#define HPMOE_NO_WAIT 0x{NO_WAIT:08X}u /* wait_counter of an entry that does not wait */");
    let _ = writeln!(out, "#define HPMOE_CORE_KIND_AIC 0u");
    let _ = writeln!(out, "#define HPMOE_CORE_KIND_AIV 1u");
    let _ = writeln!(out, "#define HPMOE_MAX_GRID_DIMS {MAX_GRID_DIMS}u\n");
    for s in [&SECTION, &HEADER, &FAMILY, &CORE, &ENTRY, &SIGNAL] {
        write_struct(out, s);
    }
    out.push_str("#endif /* HPMOE_TABLE_LAYOUT_V1 */\n\n");
}

fn write_struct(out: &mut String, s: &CStruct) {
    let _ = writeln!(out, "/* {} ({} bytes) */", s.doc.replace('\n', "\n * "), s.size);
    let _ = writeln!(out, "typedef struct {} {{", s.name);
    for f in s.fields {
        let decl =
            if f.array > 0 { format!("{} {}[{}];", f.ty, f.name, f.array) } else { format!("{} {};", f.ty, f.name) };
        let doc = if f.doc.is_empty() { String::new() } else { format!(": {}", f.doc) };
        let _ = writeln!(out, "    {decl:<36} /* {:>3}{doc} */", f.offset);
    }
    let _ = writeln!(out, "}} {};", s.name);
    let _ = writeln!(out, "HPMOE_STATIC_ASSERT(sizeof({0}) == {1}, \"{0} is {1} bytes\");", s.name, s.size);
    for f in s.fields {
        let _ = writeln!(
            out,
            "HPMOE_STATIC_ASSERT(offsetof({0}, {1}) == {2}, \"{0}.{1} is at byte {2}\");",
            s.name, f.name, f.offset
        );
    }
    out.push('\n');
}

/// `name` in capitals, every character other than an ASCII letter or digit as `_`, with a
/// leading `_` if it would start with a digit or be empty. Public so that code generators
/// (the AscendC backend) name the header's constants exactly as [`ScheduleTable::c_header`]
/// does.
pub fn c_constant_name(name: &str) -> String {
    let mut out: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_uppercase() } else { '_' }).collect();
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    out
}

/// Distinct constant names for the families: [`c_constant_name`], with `_<index>` added
/// (and `_` after that, as often as needed) to a name already taken: the `<F>` of the
/// header's `HPMOE_<T>_FAMILY_<F>` constants.
pub fn family_identifiers<'a>(names: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut taken = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    for (i, name) in names.enumerate() {
        let mut ident = c_constant_name(name);
        if taken.contains(&ident) {
            ident = format!("{ident}_{i}");
        }
        while taken.contains(&ident) {
            ident.push('_');
        }
        taken.insert(ident.clone());
        out.push(ident);
    }
    out
}

/// Text safe inside a `/* */` comment on one line: printable ASCII only, no `*/`.
fn comment_safe(text: &str) -> String {
    let printable: String = text.chars().map(|c| if (' '..='~').contains(&c) { c } else { '?' }).collect();
    printable.replace("*/", "* /")
}

fn is_c_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The offsets written into the C structs are the natural ones: each field follows the
    /// previous at its alignment, and the fields fill the record exactly.
    #[test]
    fn c_field_offsets_are_contiguous() {
        let size_of = |ty: &str| match ty {
            "uint8_t" => 1,
            "uint16_t" => 2,
            "uint32_t" => 4,
            "hpmoe_section" => 8,
            other => panic!("unknown C type {other}"),
        };
        for s in [&SECTION, &HEADER, &FAMILY, &CORE, &ENTRY, &SIGNAL] {
            let mut at = 0;
            for f in s.fields {
                assert_eq!(f.offset, at, "{}.{}", s.name, f.name);
                at += size_of(f.ty) * f.array.max(1);
            }
            assert_eq!(at, s.size, "{}", s.name);
        }
    }

    #[test]
    fn identifiers_are_distinct_and_valid() {
        let names = ["gmm", "Gmm", "9lives", "", "a-b", "a_b"];
        let idents = family_identifiers(names.into_iter());
        assert_eq!(idents, ["GMM", "GMM_1", "_9LIVES", "_", "A_B", "A_B_5"]);
        assert!(idents.iter().all(|i| is_c_identifier(i)));
        assert_eq!(comment_safe("a*/b\n"), "a* /b?");
    }
}
