//! The C header: it compiles, and a C++ program reading a blob through it sees exactly the
//! table Rust wrote. Skipped, with a note, where g++ is missing.

use super::fixture::{temp_dir, tiny};
use hpmoe_core::table::{CHECKED_CONSTANTS, CORE_WALK, ScheduleTable};
use std::fmt::Write;
use std::path::Path;
use std::process::Command;

fn have(compiler: &str) -> bool {
    let found = Command::new(compiler).arg("--version").output().is_ok_and(|o| o.status.success());
    if !found {
        eprintln!("note: {compiler} not found; skipping this C/C++ check");
    }
    found
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().expect("run command");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    assert!(out.status.success(), "{cmd:?} failed:\n{}{}", text(&out.stdout), text(&out.stderr));
    text(&out.stdout)
}

/// A user of two tables' headers at once, touching every kind of constant.
const USER: &str = r#"
#include "tiny.h"
#include "tiny.h"
#include "other.h"

HPMOE_STATIC_ASSERT(HPMOE_TINY_RANKS == 2, "ranks");
HPMOE_STATIC_ASSERT(HPMOE_TINY_CORES_PER_RANK == 3, "cores");
HPMOE_STATIC_ASSERT(HPMOE_TINY_FAMILY_GMM == 1, "family index");
HPMOE_STATIC_ASSERT(HPMOE_TINY_FIRST_COMBINE == 6, "first instance");
HPMOE_STATIC_ASSERT(HPMOE_TINY_KIND_GMM == HPMOE_CORE_KIND_AIC, "kind");
HPMOE_STATIC_ASSERT(HPMOE_OTHER_ENTRY_COUNT == HPMOE_TINY_ENTRY_COUNT, "same schedule");

static const uint32_t dispatch_grid[HPMOE_MAX_GRID_DIMS] = HPMOE_TINY_EXTENTS_DISPATCH;

uint32_t grid_points(void) {
    uint32_t n = 1;
    for (uint32_t d = 0; d < HPMOE_TINY_DIMS_DISPATCH; d++) n *= dispatch_grid[d];
    return n + sizeof(hpmoe_entry_record);
}
"#;

fn write_headers(dir: &Path) -> ScheduleTable {
    let table = tiny().build("tiny");
    std::fs::write(dir.join("tiny.h"), table.c_header("TINY_SCHEDULE_H")).unwrap();
    std::fs::write(dir.join("other.h"), tiny().build("other").c_header("OTHER_SCHEDULE_H")).unwrap();
    table
}

#[test]
fn header_compiles_as_cpp_and_c() {
    let dir = temp_dir("syntax");
    write_headers(&dir);
    if have("g++") {
        std::fs::write(dir.join("user.cpp"), USER).unwrap();
        run(Command::new("g++")
            .args(["-std=c++17", "-fsyntax-only", "-Wall", "-Wextra", "-Werror", "user.cpp"])
            .current_dir(&dir));
    }
    if have("gcc") {
        std::fs::write(dir.join("user.c"), USER).unwrap();
        run(Command::new("gcc")
            .args(["-std=c11", "-fsyntax-only", "-Wall", "-Wextra", "-Werror", "user.c"])
            .current_dir(&dir));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn header_is_readable() {
    let h = tiny().build("tiny").c_header("TINY_SCHEDULE_H");
    for line in [
        "#ifndef TINY_SCHEDULE_H",
        "    uint32_t wait_counter;               /*   4: counter on this rank, or HPMOE_NO_WAIT */",
        "    uint32_t first_signal;               /*  12 */",
        "HPMOE_STATIC_ASSERT(sizeof(hpmoe_entry_record) == 16, \"hpmoe_entry_record is 16 bytes\");",
        "    HPMOE_TINY_FAMILY_DISPATCH = 0, /* `dispatch`: aiv, grid [2, 2], instances [0, 4) */",
        "#define HPMOE_TINY_ENTRIES_OFFSET 244u",
        "#define HPMOE_TINY_EXTENTS_GMM {2u, 0u, 0u, 0u}",
        "#endif /* TINY_SCHEDULE_H */",
    ] {
        assert!(h.lines().any(|l| l == line), "missing line {line:?} in\n{h}");
    }
    for constant in CHECKED_CONSTANTS {
        let define = format!("#define HPMOE_TINY_{constant} ");
        assert!(h.lines().any(|l| l.starts_with(&define)), "no {define:?} in\n{h}");
    }
    for line in CORE_WALK {
        assert!(h.lines().any(|l| l == format!(" * {line}")), "missing line {line:?} in\n{h}");
    }
}

/// Reads `tiny.bin` through the header's structs, checks the header against the constants
/// and the checksum, and prints every record.
const READER: &str = r#"
#include "tiny.h"
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

#define CHECK(c) do { if (!(c)) { std::fprintf(stderr, "check failed: %s\n", #c); return 1; } } while (0)

static std::vector<uint8_t> blob;

template <typename T> static T load(size_t offset) {
    T value;
    std::memcpy(&value, blob.data() + offset, sizeof(T));
    return value;
}

static uint32_t crc32_ieee(const uint8_t* p, size_t n) {
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    }
    return ~c;
}

int main(int argc, char** argv) {
    CHECK(argc == 2);
    std::ifstream file(argv[1], std::ios::binary);
    blob.assign(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
    CHECK(blob.size() >= sizeof(hpmoe_table_header));
    const hpmoe_table_header h = load<hpmoe_table_header>(0);
    CHECK(std::memcmp(h.magic, HPMOE_TABLE_MAGIC, 8) == 0);
    CHECK(h.version == HPMOE_TABLE_FORMAT_VERSION);
    CHECK(h.total_bytes == blob.size() && h.total_bytes == HPMOE_TINY_TOTAL_BYTES);
    CHECK(h.checksum == crc32_ieee(blob.data() + HPMOE_TABLE_CHECKSUM_START, blob.size() - HPMOE_TABLE_CHECKSUM_START));
    CHECK(h.checksum == HPMOE_TINY_CHECKSUM);
    CHECK(h.ranks == HPMOE_TINY_RANKS && h.cores_per_rank == HPMOE_TINY_CORES_PER_RANK);
    CHECK(h.aic_per_rank == HPMOE_TINY_AIC_PER_RANK && h.aiv_per_aic == HPMOE_TINY_AIV_PER_AIC);
    CHECK(h.families == HPMOE_TINY_FAMILIES && h.instances_per_rank == HPMOE_TINY_INSTANCES_PER_RANK);
    CHECK(h.counters_per_rank_max == HPMOE_TINY_COUNTERS_PER_RANK_MAX);
    CHECK(h.entry_count == HPMOE_TINY_ENTRY_COUNT && h.signal_count == HPMOE_TINY_SIGNAL_COUNT);
    CHECK(h.families_section.offset == HPMOE_TINY_FAMILIES_OFFSET && h.families_section.bytes == HPMOE_TINY_FAMILIES_BYTES);
    CHECK(h.cores_section.offset == HPMOE_TINY_CORES_OFFSET && h.cores_section.bytes == HPMOE_TINY_CORES_BYTES);
    CHECK(h.counters_section.offset == HPMOE_TINY_COUNTERS_OFFSET && h.counters_section.bytes == HPMOE_TINY_COUNTERS_BYTES);
    CHECK(h.entries_section.offset == HPMOE_TINY_ENTRIES_OFFSET && h.entries_section.bytes == HPMOE_TINY_ENTRIES_BYTES);
    CHECK(h.signals_section.offset == HPMOE_TINY_SIGNALS_OFFSET && h.signals_section.bytes == HPMOE_TINY_SIGNALS_BYTES);
    CHECK(h.names_section.offset == HPMOE_TINY_NAMES_OFFSET && h.names_section.bytes == HPMOE_TINY_NAMES_BYTES);
    CHECK(h.families_section.bytes == h.families * sizeof(hpmoe_family_record));
    CHECK(h.cores_section.bytes == h.ranks * h.cores_per_rank * sizeof(hpmoe_core_record));
    CHECK(h.entries_section.bytes == h.entry_count * sizeof(hpmoe_entry_record));
    CHECK(h.signals_section.bytes == h.signal_count * sizeof(hpmoe_signal_record));
    CHECK(h.names_section.offset + h.names_section.bytes == h.total_bytes);

    std::printf("header ranks=%u cores_per_rank=%u aic_per_rank=%u aiv_per_aic=%u families=%u instances=%u counters_max=%u entries=%u signals=%u\n",
                h.ranks, h.cores_per_rank, h.aic_per_rank, h.aiv_per_aic, h.families, h.instances_per_rank,
                h.counters_per_rank_max, h.entry_count, h.signal_count);
    const char* name = reinterpret_cast<const char*>(blob.data() + h.names_section.offset);
    std::printf("table %s\n", name);
    for (uint32_t f = 0; f < h.families; f++) {
        name += std::strlen(name) + 1;
        const hpmoe_family_record r = load<hpmoe_family_record>(h.families_section.offset + f * sizeof(hpmoe_family_record));
        std::printf("family %u %s first=%u count=%u kind=%u dims=%u extents=%u,%u,%u,%u\n", f, name, r.first_instance,
                    r.instance_count, unsigned(r.core_kind), unsigned(r.dims), r.extents[0], r.extents[1], r.extents[2],
                    r.extents[3]);
    }
    for (uint32_t r = 0; r < h.ranks; r++) {
        std::printf("counters rank=%u count=%u\n", r, load<uint32_t>(h.counters_section.offset + r * 4));
    }
    for (uint32_t c = 0; c < h.ranks * h.cores_per_rank; c++) {
        const hpmoe_core_record core = load<hpmoe_core_record>(h.cores_section.offset + c * sizeof(hpmoe_core_record));
        std::printf("core %u first=%u count=%u\n", c, core.first_entry, core.entry_count);
        for (uint32_t i = core.first_entry; i < core.first_entry + core.entry_count; i++) {
            const hpmoe_entry_record e = load<hpmoe_entry_record>(h.entries_section.offset + i * sizeof(hpmoe_entry_record));
            if (e.wait_counter == HPMOE_NO_WAIT) {
                std::printf("  entry instance=%u no-wait", e.instance);
            } else {
                std::printf("  entry instance=%u wait=%u>=%u", e.instance, e.wait_counter, unsigned(e.wait_target));
            }
            std::printf(" signals=%u@%u:", unsigned(e.signal_count), e.first_signal);
            for (uint32_t s = e.first_signal; s < e.first_signal + e.signal_count; s++) {
                const hpmoe_signal_record sig = load<hpmoe_signal_record>(h.signals_section.offset + s * sizeof(hpmoe_signal_record));
                std::printf(" r%u.c%u", unsigned(sig.rank), sig.counter);
            }
            std::printf("\n");
        }
    }
    return 0;
}
"#;

/// What READER prints, from the Rust side.
fn dump(t: &ScheduleTable) -> String {
    let h = t.header();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "header ranks={} cores_per_rank={} aic_per_rank={} aiv_per_aic={} families={} instances={} counters_max={} entries={} signals={}",
        h.ranks,
        h.cores_per_rank,
        h.aic_per_rank,
        h.aiv_per_aic,
        h.families,
        h.instances_per_rank,
        h.counters_per_rank_max,
        h.entry_count,
        h.signal_count
    );
    let _ = writeln!(out, "table {}", t.name());
    for (i, f) in t.families().iter().enumerate() {
        let [a, b, c, d] = f.extents;
        let _ = writeln!(
            out,
            "family {i} {} first={} count={} kind={} dims={} extents={a},{b},{c},{d}",
            t.family_name(i),
            f.first_instance,
            f.instance_count,
            f.core_kind,
            f.dims
        );
    }
    for (r, n) in t.counters_per_rank().iter().enumerate() {
        let _ = writeln!(out, "counters rank={r} count={n}");
    }
    for (c, core) in t.cores().iter().enumerate() {
        let _ = writeln!(out, "core {c} first={} count={}", core.first_entry, core.entry_count);
        for e in t.core_entries(c as u32) {
            match e.wait() {
                None => out.push_str(&format!("  entry instance={} no-wait", e.instance)),
                Some(w) => out.push_str(&format!("  entry instance={} wait={}>={}", e.instance, w.counter, w.target)),
            }
            out.push_str(&format!(" signals={}@{}:", e.signal_count, e.first_signal));
            for s in t.entry_signals(e) {
                out.push_str(&format!(" r{}.c{}", s.rank, s.counter));
            }
            out.push('\n');
        }
    }
    out
}

#[test]
fn cpp_program_reads_the_blob_through_the_header() {
    if !have("g++") {
        return;
    }
    let dir = temp_dir("reader");
    let table = write_headers(&dir);
    std::fs::write(dir.join("tiny.bin"), table.to_bytes()).unwrap();
    std::fs::write(dir.join("reader.cpp"), READER).unwrap();
    run(Command::new("g++")
        .args(["-std=c++17", "-Wall", "-Wextra", "-Werror", "reader.cpp", "-o", "reader"])
        .current_dir(&dir));
    let printed = run(Command::new(dir.join("reader")).arg("tiny.bin").current_dir(&dir));
    assert_eq!(printed, dump(&table));
    assert!(printed.contains("  entry instance=6 wait=2>=2 signals=0@"), "{printed}");
    let _ = std::fs::remove_dir_all(&dir);
}
