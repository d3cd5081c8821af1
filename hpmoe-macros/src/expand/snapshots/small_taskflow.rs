/// Doubles each rank's rows, then sends them to the next rank.
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
        twice(Y.slice(b * N, N), Y.slice(b * N, N));
    }
    {
        /// The schedule table (`ScheduleTable::to_bytes`).
        const __HPMOE_TABLE: &[u8] = b"HPMOETBL\x01\0\0\0\x88\xE7\xFD\x10\x88\x01\0\0\x02\0\0\0\x03\0\0\0\x01\0\0\0\x02\0\0\0\x02\0\0\0\x04\0\0\0\x02\0\0\0\x08\0\0\0\x04\0\0\0h\0\0\08\0\0\0\xA0\0\0\x000\0\0\0\xD0\0\0\0\x08\0\0\0\xD8\0\0\0\x80\0\0\0X\x01\0\0 \0\0\0x\x01\0\0\x10\0\0\0\0\0\0\0\x02\0\0\0\x01\x01\0\0\x02\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\x02\0\0\0\x02\0\0\0\x01\x01\0\0\x02\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\x02\0\0\0\x02\0\0\0\x02\0\0\0\x04\0\0\0\0\0\0\0\x04\0\0\0\x02\0\0\0\x06\0\0\0\x02\0\0\0\x02\0\0\0\x02\0\0\0\0\0\0\0\xFF\xFF\xFF\xFF\0\0\x01\0\0\0\0\0\x03\0\0\0\x01\0\0\0\x01\0\0\0\x01\0\0\0\x01\0\0\0\xFF\xFF\xFF\xFF\0\0\x01\0\x01\0\0\0\x02\0\0\0\0\0\0\0\x01\0\0\0\x02\0\0\0\0\0\0\0\xFF\xFF\xFF\xFF\0\0\x01\0\x02\0\0\0\x03\0\0\0\x01\0\0\0\x01\0\0\0\x03\0\0\0\x01\0\0\0\xFF\xFF\xFF\xFF\0\0\x01\0\x03\0\0\0\x02\0\0\0\0\0\0\0\x01\0\0\0\x04\0\0\0\0\0\0\0\x01\0\0\0\x01\0\0\0\x01\0\0\0\0\0\0\0\0\0\0\0\x01\0\0\0\0\0\0\0ring\0send\0scale\0";
        /// The taskflow IR, as JSON.
        const __HPMOE_IR: &str = "{\"name\":\"ring\",\"profile\":{\"name\":\"small_1c_2r\",\"aic_per_rank\":1,\"aiv_per_aic\":2,\"ranks\":2},\"tensors\":[{\"name\":\"X\",\"kind\":\"input\",\"dtype\":\"f32\",\"shape\":[8,8],\"loc\":1},{\"name\":\"Y\",\"kind\":\"symmetric\",\"dtype\":\"f32\",\"shape\":[8,8],\"loc\":2}],\"families\":[{\"name\":\"send\",\"core\":\"aiv\",\"grid\":[{\"name\":\"b\",\"extent\":2,\"loc\":4}],\"body\":[{\"op\":\"put\",\"args\":[{\"tensor\":\"X\",\"rank\":\"Local\",\"dims\":[{\"start\":{\"constant\":0,\"terms\":[[{\"Index\":0},4]],\"modulo\":null},\"len\":4}],\"loc\":5},{\"tensor\":\"Y\",\"rank\":{\"Remote\":{\"constant\":1,\"terms\":[[\"Rank\",1]],\"modulo\":2}},\"dims\":[{\"start\":{\"constant\":0,\"terms\":[[{\"Index\":0},4]],\"modulo\":null},\"len\":4}],\"loc\":6}],\"loc\":7}],\"after\":[],\"loc\":3},{\"name\":\"scale\",\"core\":\"aiv\",\"grid\":[{\"name\":\"b\",\"extent\":2,\"loc\":9}],\"body\":[{\"op\":\"twice\",\"args\":[{\"tensor\":\"Y\",\"rank\":\"Local\",\"dims\":[{\"start\":{\"constant\":0,\"terms\":[[{\"Index\":0},4]],\"modulo\":null},\"len\":4}],\"loc\":10},{\"tensor\":\"Y\",\"rank\":\"Local\",\"dims\":[{\"start\":{\"constant\":0,\"terms\":[[{\"Index\":0},4]],\"modulo\":null},\"len\":4}],\"loc\":11}],\"loc\":12}],\"after\":[],\"loc\":8}],\"ops\":{\"ops\":{\"matmul\":{\"name\":\"matmul\",\"core\":\"aic\",\"params\":[{\"name\":\"a\",\"access\":\"read\",\"remote\":false},{\"name\":\"b\",\"access\":\"read\",\"remote\":false},{\"name\":\"c\",\"access\":\"write\",\"remote\":false}],\"work\":\"matmul\",\"doc\":\"c = a · b (FP32 accumulation)\",\"emit\":null},\"put\":{\"name\":\"put\",\"core\":\"aiv\",\"params\":[{\"name\":\"src\",\"access\":\"read\",\"remote\":false},{\"name\":\"dst\",\"access\":\"write\",\"remote\":true}],\"work\":\"copy\",\"doc\":\"one-sided write of src into dst on another rank, with a signal\",\"emit\":null},\"copy\":{\"name\":\"copy\",\"core\":\"aiv\",\"params\":[{\"name\":\"src\",\"access\":\"read\",\"remote\":false},{\"name\":\"dst\",\"access\":\"write\",\"remote\":false}],\"work\":\"copy\",\"doc\":\"dst = src\",\"emit\":null},\"swiglu\":{\"name\":\"swiglu\",\"core\":\"aiv\",\"params\":[{\"name\":\"gate_up\",\"access\":\"read\",\"remote\":false},{\"name\":\"out\",\"access\":\"write\",\"remote\":false}],\"work\":{\"vector\":{\"flops_per_element\":6}},\"doc\":\"out = silu(gate) * up, gate and up the two halves of the last dimension\",\"emit\":null},\"scale_rows\":{\"name\":\"scale_rows\",\"core\":\"aiv\",\"params\":[{\"name\":\"src\",\"access\":\"read\",\"remote\":false},{\"name\":\"scale\",\"access\":\"read\",\"remote\":false},{\"name\":\"dst\",\"access\":\"write\",\"remote\":false}],\"work\":{\"vector\":{\"flops_per_element\":1}},\"doc\":\"dst[i, :] = src[i, :] * scale[i]\",\"emit\":null},\"accumulate\":{\"name\":\"accumulate\",\"core\":\"aiv\",\"params\":[{\"name\":\"src\",\"access\":\"read\",\"remote\":false},{\"name\":\"dst\",\"access\":\"read_write\",\"remote\":false}],\"work\":{\"vector\":{\"flops_per_element\":1}},\"doc\":\"dst += src\",\"emit\":null},\"weighted_accumulate\":{\"name\":\"weighted_accumulate\",\"core\":\"aiv\",\"params\":[{\"name\":\"src\",\"access\":\"read\",\"remote\":false},{\"name\":\"weight\",\"access\":\"read\",\"remote\":false},{\"name\":\"dst\",\"access\":\"read_write\",\"remote\":false}],\"work\":{\"vector\":{\"flops_per_element\":2}},\"doc\":\"top-k weighted sum: dst[i, :] += sum over j < k of src[i*k + j, :] * weight[i*k + j], k = rows(src) / rows(dst), in FP32\",\"emit\":null},\"quantize\":{\"name\":\"quantize\",\"core\":\"aiv\",\"params\":[{\"name\":\"src\",\"access\":\"read\",\"remote\":false},{\"name\":\"dst\",\"access\":\"write\",\"remote\":false},{\"name\":\"scale\",\"access\":\"write\",\"remote\":false}],\"work\":{\"vector\":{\"flops_per_element\":4}},\"doc\":\"per-row symmetric INT8 quantisation\",\"emit\":null},\"dequantize\":{\"name\":\"dequantize\",\"core\":\"aiv\",\"params\":[{\"name\":\"src\",\"access\":\"read\",\"remote\":false},{\"name\":\"scale\",\"access\":\"read\",\"remote\":false},{\"name\":\"dst\",\"access\":\"write\",\"remote\":false}],\"work\":{\"vector\":{\"flops_per_element\":1}},\"doc\":\"dst = src * scale per row\",\"emit\":null},\"cast\":{\"name\":\"cast\",\"core\":\"aiv\",\"params\":[{\"name\":\"src\",\"access\":\"read\",\"remote\":false},{\"name\":\"dst\",\"access\":\"write\",\"remote\":false}],\"work\":{\"vector\":{\"flops_per_element\":1}},\"doc\":\"dst = src converted to dst's element type\",\"emit\":null},\"zero\":{\"name\":\"zero\",\"core\":\"aiv\",\"params\":[{\"name\":\"dst\",\"access\":\"write\",\"remote\":false}],\"work\":{\"vector\":{\"flops_per_element\":0}},\"doc\":\"dst = 0\",\"emit\":null},\"twice\":{\"name\":\"twice\",\"core\":\"aiv\",\"params\":[{\"name\":\"src\",\"access\":\"read\",\"remote\":false},{\"name\":\"dst\",\"access\":\"write\",\"remote\":false}],\"work\":{\"vector\":{\"flops_per_element\":1}},\"doc\":\"\",\"emit\":\"Twice({dst}, {src})\"}}},\"sources\":{\"positions\":[null,null,null,null,null,null,null,null,null,null,null,null,null]},\"loc\":0}";
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
        }
    }
}
