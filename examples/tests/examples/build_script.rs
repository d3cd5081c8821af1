//! `cargo build` makes the kernels: this package's build script wrote the flagship's and the
//! mini layer's AscendC sources and schedule tables.

use std::path::Path;

#[test]
fn the_build_script_wrote_the_flagship_kernel() {
    let dir = Path::new(env!("HPMOE_EXAMPLES_DIR"));
    for kernel in ["moe_ffn", "mini_moe"] {
        for suffix in [".cpp", "_schedule.h", "_schedule.bin", "_flags.bin", "_launch.cpp"] {
            let file = dir.join(format!("{kernel}{suffix}"));
            assert!(file.is_file(), "{} is missing", file.display());
        }
    }
    let source = std::fs::read_to_string(dir.join("moe_ffn.cpp")).unwrap();
    assert!(source.contains("__global__ __aicore__ void moe_ffn("), "{source}");
    assert!(dir.join("include").is_dir());
    // The table the kernel walks is the EP 8 layer's: 8 ranks of 6,720 instances.
    let table = hpmoe_core::table::ScheduleTable::from_bytes(&std::fs::read(dir.join("moe_ffn_schedule.bin")).unwrap());
    let table = table.expect("the blob decodes");
    assert_eq!(table.header().ranks, 8);
    assert_eq!(table.header().instances_per_rank, 6720);
}

#[test]
fn the_build_script_wrote_the_natural_flagship_kernel() {
    let dir = Path::new(env!("HPMOE_EXAMPLES_DIR"));
    for suffix in [".cpp", "_schedule.h", "_schedule.bin", "_flags.bin", "_launch.cpp"] {
        let file = dir.join(format!("moe_ffn_natural{suffix}"));
        assert!(file.is_file(), "{} is missing", file.display());
    }
    let source = std::fs::read_to_string(dir.join("moe_ffn_natural.cpp")).unwrap();
    assert!(source.contains("__global__ __aicore__ void moe_ffn_natural("), "{source}");
    // The guarded tiles read their run-time counts; the weighted sum gathers by slot.
    assert!(source.contains("if (hpmoe::ReadCount(args.RECV_COUNTS, 32 * src + e) > 192 * b) {"), "{source}");
    assert!(source.contains("hpmoe::GatherWeightedAccumulate(vec,"), "{source}");
    let table =
        hpmoe_core::table::ScheduleTable::from_bytes(&std::fs::read(dir.join("moe_ffn_natural_schedule.bin")).unwrap());
    let table = table.expect("the blob decodes");
    assert_eq!(table.header().ranks, 8);
    let per_rank = hpmoe_host::moe::MoeShape::deepseek_v3_natural(8, 4096).instances_per_rank();
    assert_eq!(u64::from(table.header().instances_per_rank), per_rank);
}
