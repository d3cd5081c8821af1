//! The shipped runtime headers against the declaration-only devkit headers: every runtime
//! template instantiated by a hand-written kernel compiles with `-Wall -Wextra -Werror`; the
//! table and flag-plan readers, compiled for the host, read a real blob; and the headers reject
//! what they must (a reserved flag id, a table reader without the table layout).

use crate::common;

use common::{assert_rejected, gxx, temp_dir};
use hpmoe_core::schedule::SimpleCost;
use hpmoe_host::moe::MoeShape;
use std::process::Command;

/// A kernel calling every runtime entry point, with the MoE tiny table's layout.
const KERNEL: &str = r#"
#define ASCENDC_CUBE_ONLY
#include "kernel_operator.h"
#include "lib/matmul_intf.h"
#include "shmem.h"
#include "tiny_schedule.h"
#include "hpmoe/runtime.h"

using Mm = AscendC::Matmul<AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, bfloat16_t>,
                           AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, bfloat16_t>,
                           AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, float>>;

struct AicTiles {
    GM_ADDR x;
    Mm mm;
    TCubeTiling tiling;
    __aicore__ inline void Init(AscendC::TPipe& pipe, GM_ADDR t) {
        hpmoe::LoadTiling(tiling, t, 0);
        REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &tiling);
    }
    __aicore__ inline void Run(hpmoe::TileContext& ctx, uint32_t instance) {
        uint32_t g[HPMOE_MAX_GRID_DIMS];
        switch (ctx.Decode(instance, g)) {
            case 1: {
                const int64_t m = g[1];
                hpmoe::MatmulTile(mm, hpmoe::View<bfloat16_t>(x, 64 * m + ctx.rank, 4, 32, 32),
                                  hpmoe::View<bfloat16_t>(x, 0, 32, 16, 16),
                                  hpmoe::View<float>(x).From(0).Rows(4).Cols(16).Stride(32));
                {
                    /* An on-chip sum over two row blocks, the second guarded. */
                    const hpmoe::View<float> c(x, 0, 4, 16, 32);
                    hpmoe::MatmulTnSumStep(mm, hpmoe::View<bfloat16_t>(x, 0, 8, 4, 4),
                                           hpmoe::View<bfloat16_t>(x, 0, 8, 16, 16), c, false);
                    if (m > 0) {
                        hpmoe::MatmulTnSumStep(mm, hpmoe::View<bfloat16_t>(x, 32, 8, 4, 4),
                                               hpmoe::View<bfloat16_t>(x, 128, 8, 16, 16), c, true);
                    }
                    hpmoe::MatmulSumAddInto(mm, c);
                }
                return;
            }
            default:
                ctx.MarkBadTile();
                return;
        }
    }
    __aicore__ inline void Finish() { mm.End(); }
};

struct AivTiles {
    GM_ADDR x;
    hpmoe::Vec vec;
    __aicore__ inline void Init(AscendC::TPipe& pipe) { vec.Init(pipe); }
    __aicore__ inline void Run(hpmoe::TileContext& ctx, uint32_t instance) {
        uint32_t g[HPMOE_MAX_GRID_DIMS];
        const hpmoe::View<bfloat16_t> b(x, 0, 8, 32, 64);
        const hpmoe::View<half> h(x, 0, 8, 32, 32);
        const hpmoe::View<float> f(x, 0, 8, 32, 32);
        const hpmoe::View<float> scales(x, 0, 1, 8, 8);
        const hpmoe::View<int8_t> q(x, 0, 8, 32, 32);
        const hpmoe::View<int32_t> i32(x, 0, 8, 32, 32);
        switch (ctx.Decode(instance, g)) {
            case 0:
                hpmoe::Put(ctx, b, b, hpmoe::Mod(ctx.rank + g[0], 2), hpmoe::kCarriesSignal);
                return;
            case 2:
                hpmoe::Copy(vec, b, b);
                hpmoe::Zero(vec, f);
                hpmoe::Zero(vec, q);
                hpmoe::Cast(vec, b, h);
                hpmoe::Cast(vec, i32, f);
                hpmoe::Accumulate(vec, f, b);
                hpmoe::ScaleRows(vec, b, scales, f);
                hpmoe::WeightedAccumulate(vec, hpmoe::View<bfloat16_t>(x, 0, 16, 32, 32), hpmoe::View<float>(x, 0, 8, 2, 2), f);
                hpmoe::SwiGlu(vec, b, hpmoe::View<bfloat16_t>(x, 0, 8, 16, 16));
                hpmoe::Quantize(vec, b, q, scales);
                hpmoe::ScaleRows(vec, q, scales, b);
                hpmoe::Cast(vec, f, i32);
                return;
            default:
                ctx.MarkBadTile();
                return;
        }
    }
};

constexpr hpmoe::KernelSpec kSpec = {
    {HPMOE_TINY_RANKS, HPMOE_TINY_CORES_PER_RANK, HPMOE_TINY_AIC_PER_RANK, HPMOE_TINY_AIV_PER_AIC,
     HPMOE_TINY_FAMILIES, HPMOE_TINY_INSTANCES_PER_RANK, HPMOE_TINY_ENTRY_COUNT, HPMOE_TINY_SIGNAL_COUNT,
     HPMOE_TINY_TOTAL_BYTES, HPMOE_TINY_CHECKSUM},
    {64u, 0u, HPMOE_TINY_RANKS * HPMOE_TINY_CORES_PER_RANK, HPMOE_TINY_ENTRY_COUNT, HPMOE_TINY_CHECKSUM},
    1000000u,
};

extern "C" __global__ __aicore__ void tiny(GM_ADDR x, GM_ADDR table, GM_ADDR flags, GM_ADDR counters, GM_ADDR diag,
                                           GM_ADDR workspace, GM_ADDR tiling) {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    AscendC::SetSysWorkspace(workspace);
    const hpmoe::Launch launch{table, flags, counters, diag};
    AscendC::TPipe pipe;
    if ASCEND_IS_AIC {
        AicTiles tiles{x, Mm(), TCubeTiling()};
        tiles.Init(pipe, tiling);
        hpmoe::RunAic<15>(launch, kSpec, tiles);
        hpmoe::RunAic<hpmoe::kNoFlag>(launch, kSpec, tiles);
    }
    if ASCEND_IS_AIV {
        AivTiles tiles{x, hpmoe::Vec()};
        tiles.Init(pipe);
        hpmoe::RunAiv<15>(launch, kSpec, tiles);
        hpmoe::RunAiv<hpmoe::kNoFlag>(launch, kSpec, tiles);
    }
}
"#;

fn tiny_table() -> hpmoe_core::table::ScheduleTable {
    let tf = MoeShape::tiny(2).taskflow().unwrap();
    hpmoe_core::compile(&tf, &SimpleCost::default()).unwrap().table
}

#[test]
fn runtime_compiles_against_the_declaration_only_devkit() {
    let Some(check) = gxx() else { return };
    let dir = temp_dir("runtime");
    std::fs::write(dir.join("tiny_schedule.h"), tiny_table().c_header("TINY_SCHEDULE_H")).unwrap();
    std::fs::write(dir.join("kernel.cpp"), KERNEL.replace("HPMOE_TINY_", "HPMOE_MOE_FFN_")).unwrap();
    let check = check.include(&dir);
    for core in ["AscendC::AIC", "AscendC::AIV"] {
        check
            .clone()
            .define(format!("HPMOE_DECL_CORE_TYPE={core}"))
            .run(&dir.join("kernel.cpp"))
            .unwrap_or_else(|e| panic!("{e}"));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn runtime_rejects_reserved_flag_ids_and_a_missing_table_layout() {
    let Some(check) = gxx() else { return };
    let dir = temp_dir("runtime-neg");
    std::fs::write(dir.join("tiny_schedule.h"), tiny_table().c_header("TINY_SCHEDULE_H")).unwrap();
    let check = check.include(&dir);
    let base = KERNEL.replace("HPMOE_TINY_", "HPMOE_MOE_FFN_");
    for (id, why) in [
        (3, "reserved by the Matmul high-level API"),
        (9, "reserved by catlass"),
        (12, "reserved by SyncAll"),
        (16, "ids are 0..15"),
    ] {
        let file = dir.join(format!("flag{id}.cpp"));
        std::fs::write(&file, base.replace("RunAiv<15>", &format!("RunAiv<{id}>"))).unwrap();
        assert_rejected(&check, &file, why);
    }
    let file = dir.join("no_layout.cpp");
    std::fs::write(&file, "#include \"kernel_operator.h\"\n#include \"hpmoe/table.h\"\n").unwrap();
    assert_rejected(&check, &file, "include the generated NAME_schedule.h");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The host program: opens a table blob with the runtime's reader and prints every core's
/// entries, decoded, one line each.
const READER: &str = r#"
#include <cstdio>
#include <vector>
#include "tiny_schedule.h"
#include "hpmoe/table.h"

int main(int argc, char** argv) {
    std::FILE* f = std::fopen(argv[1], "rb");
    std::vector<uint8_t> blob(HPMOE_MOE_FFN_TOTAL_BYTES + 64);
    const size_t n = std::fread(blob.data(), 1, blob.size(), f);
    std::fclose(f);
    if (argc > 2) blob[n - 1] ^= 1;  // corrupt the last byte
    const hpmoe::TableExpect expect = {HPMOE_MOE_FFN_RANKS, HPMOE_MOE_FFN_CORES_PER_RANK, HPMOE_MOE_FFN_AIC_PER_RANK,
        HPMOE_MOE_FFN_AIV_PER_AIC, HPMOE_MOE_FFN_FAMILIES, HPMOE_MOE_FFN_INSTANCES_PER_RANK, HPMOE_MOE_FFN_ENTRY_COUNT,
        HPMOE_MOE_FFN_SIGNAL_COUNT, HPMOE_MOE_FFN_TOTAL_BYTES, HPMOE_MOE_FFN_CHECKSUM};
    hpmoe::Table table;
    const uint32_t status = table.Open(blob.data(), expect, true);
    std::printf("status %u\n", status);
    if (status != HPMOE_TABLE_OK) return 0;
    for (uint32_t c = 0; c < table.Ranks() * table.CoresPerRank(); ++c) {
        const hpmoe_core_record core = table.Core(c);
        for (uint32_t i = 0; i < core.entry_count; ++i) {
            const hpmoe_entry_record e = table.Entry(core.first_entry + i);
            uint32_t g[HPMOE_MAX_GRID_DIMS];
            const uint32_t fam = table.Decode(e.instance, g);
            std::printf("%u %u f%u (%u,%u,%u) w%d/%u s", c, e.instance, fam, g[0], g[1], g[2],
                        e.wait_counter == HPMOE_NO_WAIT ? -1 : (int)e.wait_counter, e.wait_target);
            for (uint32_t s = 0; s < e.signal_count; ++s) {
                const hpmoe_signal_record sig = table.Signal(e.first_signal + s);
                std::printf(" %u:%u", sig.rank, sig.counter);
            }
            std::printf("\n");
        }
    }
    return 0;
}
"#;

#[test]
fn table_reader_runs_on_the_host_and_agrees_with_rust() {
    if gxx().is_none() {
        return;
    }
    let dir = temp_dir("reader");
    let table = tiny_table();
    std::fs::write(dir.join("tiny_schedule.h"), table.c_header("TINY_SCHEDULE_H")).unwrap();
    std::fs::write(dir.join("tiny.bin"), table.to_bytes()).unwrap();
    std::fs::write(dir.join("reader.cpp"), READER).unwrap();
    let exe = dir.join("reader");
    let out = Command::new("g++")
        .args(["-std=c++17", "-Wall", "-Wextra", "-Werror", "-DHPMOE_HOST_TEST", "-o"])
        .arg(&exe)
        .arg("-I")
        .arg(hpmoe_ascendc::runtime::source_include_dir())
        .arg("-I")
        .arg(&dir)
        .arg(dir.join("reader.cpp"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let run = |corrupt: bool| {
        let mut cmd = Command::new(&exe);
        cmd.arg(dir.join("tiny.bin"));
        if corrupt {
            cmd.arg("corrupt");
        }
        String::from_utf8(cmd.output().unwrap().stdout).unwrap()
    };
    let view = table.view();
    let mut expected = String::from("status 0\n");
    for c in 0..view.core_count() as u32 {
        for e in view.core_entries(c) {
            let (fam, g) = view.coords_of_instance(e.instance).unwrap();
            let g: Vec<u32> = (0..3).map(|i| g.get(i).copied().unwrap_or(0)).collect();
            let wait = e.wait().map_or(-1, |w| i64::from(w.counter.raw()));
            expected.push_str(&format!(
                "{c} {} f{fam} ({},{},{}) w{wait}/{} s",
                e.instance, g[0], g[1], g[2], e.wait_target
            ));
            for s in view.entry_signals(e) {
                expected.push_str(&format!(" {}:{}", s.rank, s.counter));
            }
            expected.push('\n');
        }
    }
    assert_eq!(run(false), expected);
    // The CRC-32 catches a flipped bit that the size and checksum field cannot.
    assert_eq!(run(true), "status 6\n");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The Rust decoder of the diagnostics area and the C layout agree on every offset and code.
#[test]
fn diagnostics_layout_matches_the_rust_decoder() {
    use hpmoe_ascendc::diag::{DiagStatus, HEADER_BYTES, RECORD_BYTES};
    let Some(check) = gxx() else { return };
    let dir = temp_dir("abi");
    let fields = [
        "status",
        "core",
        "entry",
        "instance",
        "counter",
        "expected",
        "seen",
        "tiles_done",
        "flag_consumed",
        "flag_set",
        "detail",
    ];
    let mut src = String::from("#include <cstddef>\n#include \"hpmoe/abi.h\"\n");
    src.push_str(&format!("static_assert(HPMOE_DIAG_HEADER_BYTES == {HEADER_BYTES}, \"header\");\n"));
    src.push_str(&format!("static_assert(HPMOE_DIAG_RECORD_BYTES == {RECORD_BYTES}, \"record\");\n"));
    for (i, f) in fields.iter().enumerate() {
        src.push_str(&format!("static_assert(offsetof(hpmoe_diag_record, {f}) == {}, \"{f}\");\n", 4 * i));
    }
    let codes = [
        ("NOT_RUN", DiagStatus::NotRun),
        ("RUNNING", DiagStatus::Running),
        ("DONE", DiagStatus::Done),
        ("WAIT_TIMEOUT", DiagStatus::WaitTimeout),
        ("FLAG_TIMEOUT", DiagStatus::FlagTimeout),
        ("ABORTED", DiagStatus::Aborted),
        ("BAD_TABLE", DiagStatus::BadTable),
        ("BAD_LAUNCH", DiagStatus::BadLaunch),
        ("BAD_TILE", DiagStatus::BadTile),
    ];
    for (code, (name, status)) in codes.iter().enumerate() {
        assert_eq!(DiagStatus::from_code(code as u32), *status);
        src.push_str(&format!("static_assert(HPMOE_STATUS_{name} == {code}u, \"{name}\");\n"));
    }
    let file = dir.join("abi.cpp");
    std::fs::write(&file, src).unwrap();
    check.define("HPMOE_HOST_TEST").run(&file).unwrap_or_else(|e| panic!("{e}"));
    let _ = std::fs::remove_dir_all(&dir);
}
