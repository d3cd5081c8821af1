            case HPMOE_GUARDED_FAMILY_GMM: {  // gmm(src, b)
                const int64_t src = g[0];
                const int64_t b = g[1];
                // run_if_above(count = recv_counts[src], above = 4 * b)
                // It runs its body only above the run-time count; either way it has waited for its inputs
                // and still signals its waiters (the worker loop waits before Run and signals after it).
                if (hpmoe::ReadCount(args.recv_counts, src) > 4 * b) {
                    // matmul(a = recv[8 * src + 4 * b .. +4, :], b = w[:, :], c = y[8 * src + 4 * b .. +4, :])
                    hpmoe::MatmulTile(mm0,
                        hpmoe::View<bfloat16_t>(args.recv).From(256 * src + 128 * b).Rows(4).Cols(32).Stride(32),
                        hpmoe::View<bfloat16_t>(args.w).Rows(32).Cols(32).Stride(32),
                        hpmoe::View<bfloat16_t>(args.y).From(256 * src + 128 * b).Rows(4).Cols(32).Stride(32));
                }
                return;
            }
            case HPMOE_GUARDED_FAMILY_COMBINE: {  // combine(src, b)
                const int64_t src = g[0];
                const int64_t b = g[1];
                const int64_t rank = ctx.rank;
                // run_if_above(count = recv_counts[src], above = 4 * b)
                // It runs its body only above the run-time count; either way it has waited for its inputs
                // and still signals its waiters (the worker loop waits before Run and signals after it).
                if (hpmoe::ReadCount(args.recv_counts, src) > 4 * b) {
                    // put(src = y[8 * src + 4 * b .. +4, :], dst = back.on(src)[4 * b + 8 * rank .. +4, :])
                    hpmoe::Put(ctx,
                        hpmoe::View<bfloat16_t>(args.y).From(256 * src + 128 * b).Rows(4).Cols(32).Stride(32),
                        hpmoe::View<bfloat16_t>(args.back).From(128 * b + 256 * rank).Rows(4).Cols(32).Stride(32),
                        src,
                        hpmoe::kCarriesSignal);
                }
                return;
            }
            case HPMOE_GUARDED_FAMILY_WEIGHTED_SUM: {  // weighted_sum(t)
                const int64_t t = g[0];
                // zero(dst = out[4 * t .. +4, :])
                hpmoe::Zero(vec,
                    hpmoe::View<bfloat16_t>(args.out).From(128 * t).Rows(4).Cols(32).Stride(32));
                // gather_weighted_accumulate(table = back[:, :], index = slot_of[4 * t .. +4, :], weight = weights[4 * t .. +4, :], dst = out[4 * t .. +4, :])
                hpmoe::GatherWeightedAccumulate(vec,
                    hpmoe::View<bfloat16_t>(args.back).Rows(16).Cols(32).Stride(32),
                    hpmoe::View<int32_t>(args.slot_of).From(8 * t).Rows(4).Cols(2).Stride(2),
                    hpmoe::View<float>(args.weights).From(8 * t).Rows(4).Cols(2).Stride(2),
                    hpmoe::View<bfloat16_t>(args.out).From(128 * t).Rows(4).Cols(32).Stride(32));
                return;
            }
