/* The device function of the moe_ffn_shared example's user op `weighted_sum_shared`
 * (examples/src/shared_expert/op.rs), written against the hpmoe device runtime the way the
 * built-in hpmoe::WeightedAccumulate is: tiles of rows streamed through the AIV's unified buffer,
 * FP32 compute, one rounding on the store.
 *
 * out has M rows, routed k*M rows (k = routed.rows / out.rows), shared the rows and columns of
 * out, weight k*M contiguous elements:
 *     out[i, :] = shared[i, :] + sum over j = 0, 1, .. k-1 of routed[i*k + j, :] * weight[i*k + j]
 * in FP32 starting from shared's value, in that order (each product rounded to FP32, then added),
 * rounded once to out's type: the host reference body's order, term by term.
 * Needs k <= hpmoe::kTileElems (4096): one tile row's k weights must fit a work tile, as for the
 * built-in hpmoe::WeightedAccumulate (whose emitter checks it; a template has no such hook). */
#ifndef SHARED_EXPERT_OPS_H
#define SHARED_EXPERT_OPS_H

namespace shared_expert_ops {

template <typename S, typename W, typename H, typename D>
__aicore__ inline void WeightedSumShared(hpmoe::Vec& vec, const hpmoe::View<S>& routed, const hpmoe::View<W>& weight,
                                         const hpmoe::View<H>& shared, const hpmoe::View<D>& out) {
    const uint32_t k = routed.rows / out.rows;
    /* At most kTileElems / k rows per tile: their k weights each fit one work tile. */
    const hpmoe::TileGrid grid(out.rows, out.cols, hpmoe::kTileElems / k);
    AscendC::LocalTensor<float> acc = vec.W0();
    AscendC::LocalTensor<float> wts = vec.W1();
    AscendC::LocalTensor<float> x = vec.W2();
    for (uint32_t i = 0; i < grid.Count(); ++i) {
        const hpmoe::Tile t = grid.At(i);
        vec.Load(shared, t, acc);
        hpmoe::LoadScalars(vec, weight, t.r0 * k, t.rows * k, wts);
        AscendC::PipeBarrier<PIPE_ALL>();
        for (uint32_t j = 0; j < k; ++j) {
            hpmoe::Tile tj = t;
            tj.r0 = 0;
            /* Rows t.r0*k + j, t.r0*k + j + k, ...: choice j of each token of the tile. */
            vec.Load(routed.RowStride(t.r0 * k + j, k, t.rows), tj, x);
            AscendC::PipeBarrier<PIPE_ALL>();
            for (uint32_t r = 0; r < t.rows; ++r) {
                const float w = wts.GetValue(r * k + j);
                AscendC::Muls(x[r * t.pitch], x[r * t.pitch], w, static_cast<int32_t>(t.cols));
                hpmoe::VBarrier();  // the Add reads what the Muls wrote
                AscendC::Add(acc[r * t.pitch], acc[r * t.pitch], x[r * t.pitch], static_cast<int32_t>(t.cols));
            }
        }
        vec.Store(out, t, acc);
    }
    hpmoe::OpDone();
}

}  // namespace shared_expert_ops

#endif /* SHARED_EXPERT_OPS_H */
