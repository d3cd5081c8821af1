/// Sends each rank's rows to the next rank, which doubles the blocks holding rows.
pub const fn ring() -> ::hpmoe_core::dsl::Program {
    /// Number of ranks (`#[taskflow(ranks = 2)]`).
    #[allow(dead_code)]
    const RANKS: u64 = 2u64;
    #[allow(dead_code)]
    const N: u64 = 4;
    #[allow(dead_code)]
    const X: Tensor<F32> = input([2 * N, 8]);
    #[allow(dead_code)]
    const Y: Tensor<F32> = symmetric([2 * N, 8]);
    #[allow(dead_code)]
    const ROWS: Tensor<I32> = input([2]);
    #[allow(dead_code)]
    fn twice(src: &TileData, dst: &mut TileData) {
        for (d, s) in dst.values.iter_mut().zip(&src.values) {
            *d = 2.0 * s;
        }
    }
    #[allow(dead_code, unused_variables)]
    fn send(b: Idx) {
        #[allow(dead_code, unused_variables, clippy::too_many_arguments)]
        fn twice(
            src: impl ::core::convert::Into<::hpmoe_core::dsl::Region>,
            dst: impl ::core::convert::Into<::hpmoe_core::dsl::Region>,
        ) {}
        put(X.slice(b * N, N), Y.on((RANK + 1) % RANKS).slice(b * N, N));
    }
    #[allow(dead_code, unused_variables)]
    fn scale(b: Idx) {
        #[allow(dead_code, unused_variables, clippy::too_many_arguments)]
        fn twice(
            src: impl ::core::convert::Into<::hpmoe_core::dsl::Region>,
            dst: impl ::core::convert::Into<::hpmoe_core::dsl::Region>,
        ) {}
        run_if_above(ROWS.at(b), 0);
        twice(Y.slice(b * N, N), Y.slice(b * N, N));
    }
    {
        /// The schedule table (`ScheduleTable::to_bytes`).
        const __HPMOE_TABLE: &[u8] = b"HPMOETBL\x01\0\0\0\x88\xE7\xFD\x10\x88\x01\0\0\x02\0\0\0\x03\0\0\0\x01\0\0\0\x02\0\0\0\x02\0\0\0\x04\0\0\0\x02\0\0\0\x08\0\0\0\x04\0\0\0h\0\0\08\0\0\0\xA0\0\0\x000\0\0\0\xD0\0\0\0\x08\0\0\0\xD8\0\0\0\x80\0\0\0X\x01\0\0 \0\0\0x\x01\0\0\x10\0\0\0\0\0\0\0\x02\0\0\0\x01\x01\0\0\x02\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\x02\0\0\0\x02\0\0\0\x01\x01\0\0\x02\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\x02\0\0\0\x02\0\0\0\x02\0\0\0\x04\0\0\0\0\0\0\0\x04\0\0\0\x02\0\0\0\x06\0\0\0\x02\0\0\0\x02\0\0\0\x02\0\0\0\0\0\0\0\xFF\xFF\xFF\xFF\0\0\x01\0\0\0\0\0\x03\0\0\0\x01\0\0\0\x01\0\0\0\x01\0\0\0\x01\0\0\0\xFF\xFF\xFF\xFF\0\0\x01\0\x01\0\0\0\x02\0\0\0\0\0\0\0\x01\0\0\0\x02\0\0\0\0\0\0\0\xFF\xFF\xFF\xFF\0\0\x01\0\x02\0\0\0\x03\0\0\0\x01\0\0\0\x01\0\0\0\x03\0\0\0\x01\0\0\0\xFF\xFF\xFF\xFF\0\0\x01\0\x03\0\0\0\x02\0\0\0\0\0\0\0\x01\0\0\0\x04\0\0\0\0\0\0\0\x01\0\0\0\x01\0\0\0\x01\0\0\0\0\0\0\0\0\0\0\0\x01\0\0\0\0\0\0\0ring\0send\0scale\0";
        /// The taskflow IR, as JSON.
        const __HPMOE_IR: &str = "{\"name\":\"ring\",\"profile\":{\"name\":\"small_1c_2r\",\"aic_per_rank\":1,\"aiv_per_aic\":2,\"ranks\":2},\"tensors\":[{\"name\":\"X\",\"kind\":\"input\",\"dtype\":\"f32\",\"shape\":[8,8],\"loc\":1},{\"name\":\"Y\",\"kind\":\"symmetric\",\"dtype\":\"f32\",\"shape\":[8,8],\"loc\":2},{\"name\":\"ROWS\",\"kind\":\"input\",\"dtype\":\"i32\",\"shape\":[2],\"loc\":3}],\"families\":[{\"name\":\"send\",\"core\":\"aiv\",\"grid\":[{\"name\":\"b\",\"extent\":2,\"loc\":5}],\"body\":[{\"op\":\"put\",\"args\":[{\"tensor\":\"X\",\"rank\":\"Local\",\"dims\":[{\"start\":{\"constant\":0,\"terms\":[[{\"Index\":0},4]],\"modulo\":null},\"len\":4}],\"loc\":6},{\"tensor\":\"Y\",\"rank\":{\"Remote\":{\"constant\":1,\"terms\":[[\"Rank\",1]],\"modulo\":2}},\"dims\":[{\"start\":{\"constant\":0,\"terms\":[[{\"Index\":0},4]],\"modulo\":null},\"len\":4}],\"loc\":7}],\"loc\":8}],\"after\":[],\"loc\":4},{\"name\":\"scale\",\"core\":\"aiv\",\"grid\":[{\"name\":\"b\",\"extent\":2,\"loc\":10}],\"body\":[{\"op\":\"twice\",\"args\":[{\"tensor\":\"Y\",\"rank\":\"Local\",\"dims\":[{\"start\":{\"constant\":0,\"terms\":[[{\"Index\":0},4]],\"modulo\":null},\"len\":4}],\"loc\":13},{\"tensor\":\"Y\",\"rank\":\"Local\",\"dims\":[{\"start\":{\"constant\":0,\"terms\":[[{\"Index\":0},4]],\"modulo\":null},\"len\":4}],\"loc\":14}],\"loc\":15}],\"after\":[],\"guard\":{\"count\":{\"tensor\":\"ROWS\",\"rank\":\"Local\",\"dims\":[{\"start\":{\"constant\":0,\"terms\":[[{\"Index\":0},1]],\"modulo\":null},\"len\":1}],\"loc\":11},\"above\":{\"constant\":0,\"terms\":[],\"modulo\":null},\"loc\":12},\"loc\":9}],\"ops\":{\"ops\":{\"matmul\":{\"name\":\"matmul\",\"core\":\"aic\",\"params\":[{\"name\":\"a\",\"access\":\"read\",\"remote\":false},{\"name\":\"b\",\"access\":\"read\",\"remote\":false},{\"name\":\"c\",\"access\":\"write\",\"remote\":false}],\"work\":\"matmul\",\"doc\":\"c = a · b (FP32 accumulation)\",\"emit\":null},\"put\":{\"name\":\"put\",\"core\":\"aiv\",\"params\":[{\"name\":\"src\",\"access\":\"read\",\"remote\":false},{\"name\":\"dst\",\"access\":\"write\",\"remote\":true}],\"work\":\"copy\",\"doc\":\"one-sided write of src into dst on another rank, with a signal\",\"emit\":null},\"copy\":{\"name\":\"copy\",\"core\":\"aiv\",\"params\":[{\"name\":\"src\",\"access\":\"read\",\"remote\":false},{\"name\":\"dst\",\"access\":\"write\",\"remote\":false}],\"work\":\"copy\",\"doc\":\"dst = src\",\"emit\":null},\"swiglu\":{\"name\":\"swiglu\",\"core\":\"aiv\",\"params\":[{\"name\":\"gate_up\",\"access\":\"read\",\"remote\":false},{\"name\":\"out\",\"access\":\"write\",\"remote\":false}],\"work\":{\"vector\":{\"flops_per_element\":6}},\"doc\":\"out = silu(gate) * up, gate and up the two halves of the last dimension\",\"emit\":null},\"scale_rows\":{\"name\":\"scale_rows\",\"core\":\"aiv\",\"params\":[{\"name\":\"src\",\"access\":\"read\",\"remote\":false},{\"name\":\"scale\",\"access\":\"read\",\"remote\":false},{\"name\":\"dst\",\"access\":\"write\",\"remote\":false}],\"work\":{\"vector\":{\"flops_per_element\":1}},\"doc\":\"dst[i, :] = src[i, :] * scale[i]\",\"emit\":null},\"accumulate\":{\"name\":\"accumulate\",\"core\":\"aiv\",\"params\":[{\"name\":\"src\",\"access\":\"read\",\"remote\":false},{\"name\":\"dst\",\"access\":\"read_write\",\"remote\":false}],\"work\":{\"vector\":{\"flops_per_element\":1}},\"doc\":\"dst += src\",\"emit\":null},\"weighted_accumulate\":{\"name\":\"weighted_accumulate\",\"core\":\"aiv\",\"params\":[{\"name\":\"src\",\"access\":\"read\",\"remote\":false},{\"name\":\"weight\",\"access\":\"read\",\"remote\":false},{\"name\":\"dst\",\"access\":\"read_write\",\"remote\":false}],\"work\":{\"vector\":{\"flops_per_element\":2}},\"doc\":\"top-k weighted sum: dst[i, :] += sum over j < k of src[i*k + j, :] * weight[i*k + j], k = rows(src) / rows(dst), in FP32\",\"emit\":null},\"gather_weighted_accumulate\":{\"name\":\"gather_weighted_accumulate\",\"core\":\"aiv\",\"params\":[{\"name\":\"table\",\"access\":\"read\",\"remote\":false},{\"name\":\"index\",\"access\":\"read\",\"remote\":false},{\"name\":\"weight\",\"access\":\"read\",\"remote\":false},{\"name\":\"dst\",\"access\":\"read_write\",\"remote\":false}],\"work\":{\"gather\":{\"flops_per_element\":2}},\"doc\":\"top-k weighted sum of gathered rows: dst[i, :] += sum over j < k of table[index[i, j], :] * weight[i, j] for index[i, j] >= 0, k = last extent of index, in FP32 in j order\",\"emit\":null},\"quantize\":{\"name\":\"quantize\",\"core\":\"aiv\",\"params\":[{\"name\":\"src\",\"access\":\"read\",\"remote\":false},{\"name\":\"dst\",\"access\":\"write\",\"remote\":false},{\"name\":\"scale\",\"access\":\"write\",\"remote\":false}],\"work\":{\"vector\":{\"flops_per_element\":4}},\"doc\":\"per-row symmetric INT8 quantisation\",\"emit\":null},\"dequantize\":{\"name\":\"dequantize\",\"core\":\"aiv\",\"params\":[{\"name\":\"src\",\"access\":\"read\",\"remote\":false},{\"name\":\"scale\",\"access\":\"read\",\"remote\":false},{\"name\":\"dst\",\"access\":\"write\",\"remote\":false}],\"work\":{\"vector\":{\"flops_per_element\":1}},\"doc\":\"dst = src * scale per row\",\"emit\":null},\"cast\":{\"name\":\"cast\",\"core\":\"aiv\",\"params\":[{\"name\":\"src\",\"access\":\"read\",\"remote\":false},{\"name\":\"dst\",\"access\":\"write\",\"remote\":false}],\"work\":{\"vector\":{\"flops_per_element\":1}},\"doc\":\"dst = src converted to dst's element type\",\"emit\":null},\"zero\":{\"name\":\"zero\",\"core\":\"aiv\",\"params\":[{\"name\":\"dst\",\"access\":\"write\",\"remote\":false}],\"work\":{\"vector\":{\"flops_per_element\":0}},\"doc\":\"dst = 0\",\"emit\":null},\"twice\":{\"name\":\"twice\",\"core\":\"aiv\",\"params\":[{\"name\":\"src\",\"access\":\"read\",\"remote\":false},{\"name\":\"dst\",\"access\":\"write\",\"remote\":false}],\"work\":{\"vector\":{\"flops_per_element\":1}},\"doc\":\"\",\"emit\":\"Twice({dst}, {src})\"}}},\"sources\":{\"positions\":[null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null]},\"loc\":0}";
        fn __hpmoe_tile_0(ctx: &mut dyn ::hpmoe_core::dsl::TileContext, at: &[u64]) {
            let [i0] = ::hpmoe_core::dsl::__private::coords::<1usize>(at);
            let rank = i64::from(ctx.rank());
            ctx.call(
                "put",
                &[
                    ::hpmoe_core::dsl::__private::region(
                        0usize,
                        rank,
                        &[4i64 * i0, 0i64],
                        &[4u32, 8u32],
                    ),
                    ::hpmoe_core::dsl::__private::region(
                        1usize,
                        (1i64 + rank).rem_euclid(2i64),
                        &[4i64 * i0, 0i64],
                        &[4u32, 8u32],
                    ),
                ],
            );
        }
        fn __hpmoe_tile_1(ctx: &mut dyn ::hpmoe_core::dsl::TileContext, at: &[u64]) {
            let [i0] = ::hpmoe_core::dsl::__private::coords::<1usize>(at);
            let rank = i64::from(ctx.rank());
            if !::hpmoe_core::dsl::__private::runs(
                ctx,
                ::hpmoe_core::dsl::__private::region(2usize, rank, &[i0], &[1u32]),
                0i64,
            ) {
                return;
            }
            ctx.call(
                "twice",
                &[
                    ::hpmoe_core::dsl::__private::region(
                        1usize,
                        rank,
                        &[4i64 * i0, 0i64],
                        &[4u32, 8u32],
                    ),
                    ::hpmoe_core::dsl::__private::region(
                        1usize,
                        rank,
                        &[4i64 * i0, 0i64],
                        &[4u32, 8u32],
                    ),
                ],
            );
        }
        fn __hpmoe_op_0(args: &mut [::hpmoe_core::dsl::TileData]) {
            match args {
                [a0, a1] => twice(a0, a1),
                _ => ::core::panic!("op `twice` takes 2 regions"),
            }
        }
        ::hpmoe_core::dsl::Program {
            name: "ring",
            ir_json: __HPMOE_IR,
            table_bytes: __HPMOE_TABLE,
            grids: &[&[2u64], &[2u64]],
            tiles: &[
                __hpmoe_tile_0 as ::hpmoe_core::dsl::TileFn,
                __hpmoe_tile_1 as ::hpmoe_core::dsl::TileFn,
            ],
            user_ops: &[
                ::hpmoe_core::dsl::UserOp {
                    name: "twice",
                    params: 2usize,
                    emit: "Twice({dst}, {src})",
                    reference: __hpmoe_op_0,
                },
            ],
            kernel_source: ::core::result::Result::Ok(
                "// ring.cpp: the AscendC kernel of taskflow `ring`, generated by hpmoe-ascendc. Do not edit.\n//\n// One mixed launch per rank (2 ranks): 1 blocks of KERNEL_TYPE_MIX_AIC_1_2, i.e. 1 AIC + 2 AIV cores.\n// Every core walks its own list of the schedule table (`table`, written as NAME_schedule.bin):\n// it waits until the entry's counter reaches its target (bounded; a timeout writes a record to\n// `diag` and stops the core), runs the tile, then adds 1 to the counters of the tiles that depend\n// on it. Dependencies between an AIC and its own AIVs may use a hardware flag instead (`flags`,\n// NAME_flags.bin). The runtime is in hpmoe/runtime.h; the constants in ring_schedule.h.\n//\n// Tile families:\n//   send (aiv), grid b < 2: put\n//   scale (aiv), grid b < 2: twice (guarded: run_if_above)\n//\n// Build with the CANN toolkit (see the hpmoe README), e.g.\n//   bisheng -x asc --npu-arch=dav-2201 -std=c++17 -O2 -I <this folder> -I <this folder>/include\n//           -I <SHMEM include> -c ring.cpp\n\n#include \"kernel_operator.h\"\n#include \"shmem.h\"\n#include \"ring_schedule.h\"\n#include \"hpmoe/runtime.h\"\n\nnamespace ring_kernel {\n\n// The tensor arguments (global memory of this rank; symmetric tensors at their symmetric address).\nstruct Args {\n    GM_ADDR X;  // input f32 [8, 8]\n    GM_ADDR Y;  // symmetric f32 [8, 8]\n    GM_ADDR ROWS;  // input i32 [2]\n};\n\n// No dependency uses a hardware flag: every one is on a global-memory counter.\nconstexpr uint16_t kFlag = hpmoe::kNoFlag;\n\n// What the kernel was generated with; every core checks the table and the flag plan against it.\nconstexpr hpmoe::KernelSpec kSpec = {\n    {\n        HPMOE_RING_RANKS,\n        HPMOE_RING_CORES_PER_RANK,\n        HPMOE_RING_AIC_PER_RANK,\n        HPMOE_RING_AIV_PER_AIC,\n        HPMOE_RING_FAMILIES,\n        HPMOE_RING_INSTANCES_PER_RANK,\n        HPMOE_RING_ENTRY_COUNT,\n        HPMOE_RING_SIGNAL_COUNT,\n        HPMOE_RING_TOTAL_BYTES,\n        HPMOE_RING_CHECKSUM,\n    },\n    {\n        HPMOE_RING_FLAGS_TOTAL_BYTES,\n        HPMOE_RING_FLAGS_CHECKSUM,\n        HPMOE_RING_RANKS * HPMOE_RING_CORES_PER_RANK,\n        HPMOE_RING_ENTRY_COUNT,\n        HPMOE_RING_CHECKSUM,\n    },\n    HPMOE_RING_WAIT_TIMEOUT_US,\n};\n\n// The AIC tiles.\nstruct AicTiles {\n    const Args& args;\n\n    __aicore__ inline explicit AicTiles(const Args& a) : args(a) {}\n\n    __aicore__ inline void Init(AscendC::TPipe& pipe, GM_ADDR tiling) {\n        (void)pipe;\n        (void)tiling;\n    }\n\n    // Runs local tile instance `instance`: one case per tile family of this core kind.\n    __aicore__ inline void Run(hpmoe::TileContext& ctx, uint32_t instance) {\n        uint32_t g[HPMOE_MAX_GRID_DIMS];\n        switch (ctx.Decode(instance, g)) {\n            default:  // not a family of this core kind: the table and the kernel disagree\n                ctx.MarkBadTile();\n                return;\n        }\n    }\n\n    __aicore__ inline void Finish() {}\n};\n\n// The AIV tiles.\nstruct AivTiles {\n    const Args& args;\n    hpmoe::Vec vec;\n\n    __aicore__ inline explicit AivTiles(const Args& a) : args(a) {}\n\n    __aicore__ inline void Init(AscendC::TPipe& pipe) { vec.Init(pipe); }\n\n    // Runs local tile instance `instance`: one case per tile family of this core kind.\n    __aicore__ inline void Run(hpmoe::TileContext& ctx, uint32_t instance) {\n        uint32_t g[HPMOE_MAX_GRID_DIMS];\n        switch (ctx.Decode(instance, g)) {\n            case HPMOE_RING_FAMILY_SEND: {  // send(b)\n                const int64_t b = g[0];\n                const int64_t rank = ctx.rank;\n                // put(src = X[4 * b .. +4, :], dst = Y.on(mod(rank + 1, 2))[4 * b .. +4, :])\n                hpmoe::Put(ctx,\n                    hpmoe::View<float>(args.X, 32 * b, 4, 8, 8),\n                    hpmoe::View<float>(args.Y, 32 * b, 4, 8, 8),\n                    hpmoe::Mod(rank + 1, 2), true);\n                return;\n            }\n            case HPMOE_RING_FAMILY_SCALE: {  // scale(b)\n                const int64_t b = g[0];\n                // run_if_above(count = ROWS[b], above = 0)\n                // It runs its body only above the run-time count; either way it has waited for its inputs\n                // and still signals its waiters (the worker loop waits before Run and signals after it).\n                if (hpmoe::ReadCount(args.ROWS, b) > 0) {\n                    // twice(src = Y[4 * b .. +4, :], dst = Y[4 * b .. +4, :])\n                    Twice(hpmoe::View<float>(args.Y, 32 * b, 4, 8, 8), hpmoe::View<float>(args.Y, 32 * b, 4, 8, 8));\n                }\n                return;\n            }\n            default:  // not a family of this core kind: the table and the kernel disagree\n                ctx.MarkBadTile();\n                return;\n        }\n    }\n};\n\n}  // namespace ring_kernel\n\n// The kernel. Arguments: the tensors (in the order of Args), then the schedule table, the flag plan,\n// the counter workspace (symmetric, zeroed), the diagnostics area (zeroed), the system workspace and\n// the Matmul tilings (one TCubeTiling per Matmul group).\nextern \"C\" __global__ __aicore__ void ring(GM_ADDR X, GM_ADDR Y, GM_ADDR ROWS, GM_ADDR table, GM_ADDR flags, GM_ADDR counters, GM_ADDR diag, GM_ADDR workspace, GM_ADDR tiling) {\n    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);\n    AscendC::SetSysWorkspace(workspace);\n    const ring_kernel::Args args{X, Y, ROWS};\n    const hpmoe::Launch launch{table, flags, counters, diag};\n    AscendC::TPipe pipe;\n    if ASCEND_IS_AIC {\n        ring_kernel::AicTiles tiles(args);\n        tiles.Init(pipe, tiling);\n        hpmoe::RunAic<ring_kernel::kFlag>(launch, ring_kernel::kSpec, tiles);\n    }\n    if ASCEND_IS_AIV {\n        ring_kernel::AivTiles tiles(args);\n        tiles.Init(pipe);\n        hpmoe::RunAiv<ring_kernel::kFlag>(launch, ring_kernel::kSpec, tiles);\n    }\n}\n",
            ),
        }
    }
}
