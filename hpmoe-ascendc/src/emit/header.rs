//! `NAME_schedule.h`: the schedule table's layout and constants (hpmoe-core's
//! `ScheduleTable::c_header`), then the kernel's own section: how to launch it, its tensor
//! arguments and their sizes, the workspaces, the flag plan, the Matmul tilings the host must
//! compute, and the wait bound. Plain C, so host code can include it too.

use super::ops::MatmulGroup;
use hpmoe_core::model::Taskflow;
use hpmoe_core::table::ScheduleTable;
use std::fmt::Write;

use super::names::constant_name;

/// What the kernel section needs.
#[derive(Debug)]
pub struct HeaderParts<'a> {
    pub tf: &'a Taskflow,
    pub name: &'a str,
    pub prefix: &'a str,
    pub table: &'a ScheduleTable,
    pub tensor_params: &'a [String],
    pub groups: &'a [MatmulGroup],
    pub flag_id: Option<u16>,
    pub flagged_edges: usize,
    pub flags_bytes: &'a [u8],
    pub wait_timeout_us: u64,
}

/// The whole header.
pub fn render(parts: &HeaderParts<'_>) -> String {
    let guard = format!("HPMOE_{}SCHEDULE_H", parts.prefix);
    let mut out = parts.table.c_header(&guard);
    kernel_section(&mut out, parts);
    out
}

fn kernel_section(out: &mut String, parts: &HeaderParts<'_>) {
    let p = parts.prefix;
    let tf = parts.tf;
    let profile = &tf.profile;
    let guard = format!("HPMOE_{p}KERNEL_H");
    let _ =
        writeln!(out, "/* ---- Kernel `{}` (hpmoe-ascendc): launch, arguments, workspaces, flags. ---- */", parts.name);
    let _ = writeln!(out, "#ifndef {guard}\n#define {guard}\n");
    let mut params: Vec<&str> = parts.tensor_params.iter().map(String::as_str).collect();
    params.extend(super::kernel::FIXED_PARAMS);
    let _ = writeln!(
        out,
        "/* Launch on every rank, with the SHMEM library initialised over HPMOE_{p}RANKS PEs:\n *   {}<<<HPMOE_{p}BLOCKS, nullptr, stream>>>({});\n * KERNEL_TYPE_MIX_AIC_1_2: HPMOE_{p}BLOCKS AIC and twice as many AIV cores. */",
        parts.name,
        params.join(", ")
    );
    let _ = writeln!(out, "#define HPMOE_{p}BLOCKS {}u\n", profile.aic_per_rank);
    out.push_str(
        "/* Tensor arguments, in order: bytes on each rank. Inputs, outputs and scratch are ordinary device\n\
         \x20* memory; symmetric tensors must come from the SHMEM symmetric heap (aclshmem_malloc), the same\n\
         \x20* allocation on every rank. */\n",
    );
    let _ = writeln!(out, "#define HPMOE_{p}TENSORS {}u", tf.tensors.len());
    for t in &tf.tensors {
        let shape: Vec<String> = t.shape.iter().map(u64::to_string).collect();
        let _ = writeln!(
            out,
            "#define HPMOE_{p}TENSOR_{}_BYTES {}ull /* {} {} [{}] */",
            constant_name(&t.name),
            t.bytes().unwrap_or(u64::MAX),
            t.kind.name(),
            t.dtype.name(),
            shape.join(", ")
        );
    }
    let _ = writeln!(
        out,
        "\n/* Counter workspace (`counters`): symmetric, one int32 per counter, zeroed on every rank before each\n\
         \x20* launch, and the zeroing finished on all ranks (a barrier) before any rank launches. */\n\
         #define HPMOE_{p}COUNTER_BYTES {}u",
        u64::from(parts.table.header().counters_per_rank_max) * 4
    );
    let cores = profile.cores_per_rank();
    let _ = writeln!(
        out,
        "/* Diagnostics area (`diag`): 64-byte aligned, zeroed before each launch, read back after; layout in\n\
         \x20* hpmoe/abi.h (a 64-byte header, then one 64-byte record per core of the rank). */\n\
         #define HPMOE_{p}DIAG_BYTES {}u",
        64 + 64 * cores
    );
    let checksum = u32::from_le_bytes(parts.flags_bytes[12..16].try_into().expect("flag plan header"));
    let _ = writeln!(
        out,
        "\n/* Flag plan (`flags`, NAME_flags.bin): the dependencies the hardware flag between an AIC and its own\n\
         \x20* AIVs carries instead of a counter. */"
    );
    match parts.flag_id {
        Some(id) => {
            let _ = writeln!(out, "#define HPMOE_{p}FLAG_ID {id}u");
        }
        None => {
            let _ = writeln!(out, "#define HPMOE_{p}FLAG_ID 0xFFFFFFFFu /* none */");
        }
    }
    let _ = writeln!(out, "#define HPMOE_{p}FLAGGED_EDGES {}u", parts.flagged_edges);
    let _ = writeln!(out, "#define HPMOE_{p}FLAGS_TOTAL_BYTES {}u", parts.flags_bytes.len());
    let _ = writeln!(out, "#define HPMOE_{p}FLAGS_CHECKSUM 0x{checksum:08X}u");
    let _ = writeln!(
        out,
        "\n/* Matmul groups: the `tiling` argument holds one TCubeTiling per group, in this order, computed on\n\
         \x20* the host (matmul_tiling::MultiCoreMatmulTiling, A/B/C in GM, ND) for the group's largest tile: M x N x K. */"
    );
    let _ = writeln!(out, "#define HPMOE_{p}MATMUL_GROUPS {}u", parts.groups.len());
    for (i, g) in parts.groups.iter().enumerate() {
        let _ = writeln!(out, "#define HPMOE_{p}MATMUL{i}_M {}u /* {}: {} */", g.m, g.types(), g.families.join(", "));
        let _ = writeln!(out, "#define HPMOE_{p}MATMUL{i}_N {}u", g.n);
        let _ = writeln!(out, "#define HPMOE_{p}MATMUL{i}_K {}u", g.k);
    }
    let _ = writeln!(
        out,
        "\n/* Bound of every counter wait, in microseconds: a core still waiting after it writes a diagnostic\n\
         \x20* record and stops. Define it before including this header to change it. */\n\
         #ifndef HPMOE_{p}WAIT_TIMEOUT_US\n#define HPMOE_{p}WAIT_TIMEOUT_US {}u\n#endif\n",
        parts.wait_timeout_us
    );
    let _ = writeln!(out, "#endif /* {guard} */");
}
