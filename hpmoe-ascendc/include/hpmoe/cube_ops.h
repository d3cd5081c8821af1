/* hpmoe device runtime: matmul tiles on the AIC, through the Matmul high-level API.
 *
 * The kernel drives one Matmul object per combination of element types (compiled with
 * ASCENDC_CUBE_ONLY, so the AIC runs its own matmuls rather than a server loop for AIV
 * clients). Each group's TCubeTiling is computed on the host for the group's largest tile and
 * passed in the kernel's `tiling` argument, one after the other in group order; every tile then
 * sets its own original and single-core shapes, so a tile may be smaller than the tiling's. */
#ifndef HPMOE_CUBE_OPS_H
#define HPMOE_CUBE_OPS_H

#include "config.h"
#include "counters.h"
#include "view.h"

namespace hpmoe {

/* Copies tiling number `index` of the `tiling` argument into `dst`. */
template <typename TilingT>
HPMOE_FN void LoadTiling(TilingT& dst, GM_ADDR tiling, uint32_t index) {
    static_assert(sizeof(TilingT) % sizeof(int32_t) == 0, "a tiling struct is made of 32-bit words");
    __gm__ const int32_t* src = reinterpret_cast<__gm__ const int32_t*>(tiling + index * sizeof(TilingT));
    int32_t* out = reinterpret_cast<int32_t*>(&dst);
    for (uint32_t i = 0; i < sizeof(TilingT) / sizeof(int32_t); ++i) {
        out[i] = src[i];
    }
}

/* A (M x K, or K x M stored when kTransA) times B (K x N, or N x K stored when kTransB) into c[M, N]
 * with IterateAll's enAtomic = kAtomic (0: overwrite, 1: add). The regions are strided matrices: the
 * original shapes tell the API each one's row stride — orgKa for an A stored M x K, orgM for one
 * stored K x M; orgN for a B stored K x N, orgKb for one stored N x K (a transposed operand is
 * stored as the original shape's transpose, rows the other extent apart); orgKc is C's. */
template <uint8_t kAtomic, bool kTransA, bool kTransB, class MM, typename A, typename B, typename C>
HPMOE_FN void MatmulInto(MM& mm, const View<A>& a, const View<B>& b, const View<C>& c) {
    const uint32_t k = kTransA ? a.rows : a.cols;
    /* orgM, orgN, orgKa, orgKb, orgKc. */
    const uint32_t org_m = kTransA ? a.ld : a.rows;
    const uint32_t org_ka = kTransA ? a.rows : a.ld;
    const uint32_t org_n = kTransB ? b.rows : b.ld;
    const uint32_t org_kb = kTransB ? b.ld : b.rows;
    mm.SetOrgShape(static_cast<int>(org_m), static_cast<int>(org_n), static_cast<int>(org_ka), static_cast<int>(org_kb),
                   static_cast<int>(c.ld));
    mm.SetSingleShape(static_cast<int>(c.rows), static_cast<int>(c.cols), static_cast<int>(k));
    AscendC::GlobalTensor<A> ga;
    ga.SetGlobalBuffer(a.At(0, 0));
    AscendC::GlobalTensor<B> gb;
    gb.SetGlobalBuffer(b.At(0, 0));
    AscendC::GlobalTensor<C> gc;
    gc.SetGlobalBuffer(c.At(0, 0));
    mm.SetTensorA(ga, kTransA);
    mm.SetTensorB(gb, kTransB);
    mm.IterateAll(gc, kAtomic);
}

/* c[M, N] = a[M, K] * b[K, N], FP32 accumulation, rounded once into c's type. The regions are
 * strided matrices: the original shapes tell the API each one's row stride. */
template <class MM, typename A, typename B, typename C>
HPMOE_FN void MatmulTile(MM& mm, const View<A>& a, const View<B>& b, const View<C>& c) {
    MatmulInto<0, false, false>(mm, a, b, c);
}

/* c[M, N] += a[M, K] * b[K, N]: the product in FP32, added into c by the Matmul API's atomic add
 * (IterateAll's enAtomic = 1), which for an FP32 c is one FP32 addition per element. The backend
 * emits it for FP32 c only (for bf16/f16 the product would be rounded before the add). Several
 * tiles adding into one region run in the order their dependencies give them, so the sum's order
 * is fixed; the atomic add is what makes a tile add rather than overwrite, not a license to race. */
template <class MM, typename A, typename B>
HPMOE_FN void MatmulAccumulateTile(MM& mm, const View<A>& a, const View<B>& b, const View<float>& c) {
    MatmulInto<1, false, false>(mm, a, b, c);
}

/* c[M, N] = a[M, K] * b[N, K]^T (b read as stored, row by row), FP32 accumulation, rounded once into
 * c's type. The group's MatmulType for B has isTrans set. */
template <class MM, typename A, typename B, typename C>
HPMOE_FN void MatmulNtTile(MM& mm, const View<A>& a, const View<B>& b, const View<C>& c) {
    MatmulInto<0, false, true>(mm, a, b, c);
}

/* c[M, N] = a[K, M]^T * b[K, N], FP32 accumulation, rounded once into c's type. The group's
 * MatmulType for A has isTrans set. */
template <class MM, typename A, typename B, typename C>
HPMOE_FN void MatmulTnTile(MM& mm, const View<A>& a, const View<B>& b, const View<C>& c) {
    MatmulInto<0, true, false>(mm, a, b, c);
}

/* c[M, N] += a[K, M]^T * b[K, N], as MatmulAccumulateTile (FP32 c only, ordered by the tiles'
 * dependencies). */
template <class MM, typename A, typename B>
HPMOE_FN void MatmulTnAccumulateTile(MM& mm, const View<A>& a, const View<B>& b, const View<float>& c) {
    MatmulInto<1, true, false>(mm, a, b, c);
}

/* The on-chip sum of one tile: c[M, N] += sum over a run-time-guarded list of row blocks r of
 * a_r[K_r, M]^T * b_r[K_r, N], summed in L0C and written to global memory once, instead of one
 * atomic read-modify-write of c per block (MatmulTnAccumulateTile). The Matmul API's facts it
 * relies on (the Iterate and GetTensorC pages; ascendc-api.md):
 *   - Iterate(enPartialSum) computes one baseM x baseN block of C into CO1 (L0C); with
 *     enPartialSum = true the product is added to the CO1 data already there. Accumulating in
 *     L0C is supported only when singleCoreM == baseM and singleCoreN == baseN, so the group's
 *     tiling has base block == c's block (at most L0C's 128 KiB of FP32 accumulators);
 *   - GetTensorC(gm, enAtomic) moves that block from CO1 to global memory after Iterate,
 *     enAtomic = 1 adding it into gm (AtomicAdd); rows land orgKc apart (the default
 *     "jump-write" mode).
 * The emitter walks c's blocks (base block = the whole op output when it fits L0C) and, per
 * block, the ops in the order written: the first op whose guard holds starts CO1
 * (MatmulTnSumStep(..., false)), each later one continues it (true), and MatmulSumAddInto
 * adds the sum into c once if any op ran (c was zeroed before, so a block no op ran stays 0).
 * The order is therefore fixed: one FP32 accumulation continued across the blocks that ran,
 * in the order written, rounded once; only hardware can confirm that Iterate(true) continues
 * L0C's accumulators rather than adding a separately rounded partial product (the emulator's
 * README, assumption 19c). */
template <class MM, typename A, typename B>
HPMOE_FN void MatmulTnSumStep(MM& mm, const View<A>& a, const View<B>& b, const View<float>& c, bool continue_sum) {
    /* A stored K x M (rows a.ld apart: orgM), B K x N (rows b.ld apart: orgN), C rows c.ld apart. */
    mm.SetOrgShape(static_cast<int>(a.ld), static_cast<int>(b.ld), static_cast<int>(a.rows), static_cast<int>(b.rows),
                   static_cast<int>(c.ld));
    mm.SetSingleShape(static_cast<int>(c.rows), static_cast<int>(c.cols), static_cast<int>(a.rows));
    AscendC::GlobalTensor<A> ga;
    ga.SetGlobalBuffer(a.At(0, 0));
    AscendC::GlobalTensor<B> gb;
    gb.SetGlobalBuffer(b.At(0, 0));
    mm.SetTensorA(ga, true);
    mm.SetTensorB(gb, false);
    mm.Iterate(continue_sum);
}

/* The end of an on-chip sum: CO1's block added into c (FP32 AtomicAdd, one addition per
 * element), once. Call only after a MatmulTnSumStep of this block. */
template <class MM>
HPMOE_FN void MatmulSumAddInto(MM& mm, const View<float>& c) {
    AscendC::GlobalTensor<float> gc;
    gc.SetGlobalBuffer(c.At(0, 0));
    mm.GetTensorC(gc, 1);
}

/* The end of a writing on-chip sum (matmul_tn_slots): CO1's block written over c (no atomic), once.
 * Call only after a MatmulTnSumStep of this block. */
template <class MM>
HPMOE_FN void MatmulSumWriteInto(MM& mm, const View<float>& c) {
    AscendC::GlobalTensor<float> gc;
    gc.SetGlobalBuffer(c.At(0, 0));
    mm.GetTensorC(gc, 0);
}

/* A block of a writing on-chip sum that no slot feeds: +0.0 written by the scalar unit (the AIC
 * has no vector unit to fill it, and CO1 holds no block to write), then the data cache cleaned so
 * the stores reach global memory. Earlier FIX/MTE writes are completed first (a scalar store
 * needs them complete to the scalar pipe). Slow (one store per element), but taken only where
 * every slot of a group is empty for the block's expert. */
HPMOE_FN void ZeroBlockByScalar(const View<float>& c) {
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::GlobalTensor<float> gc;
    gc.SetGlobalBuffer(c.At(0, 0));
    for (uint32_t r = 0; r < c.rows; ++r) {
        for (uint32_t j = 0; j < c.cols; ++j) {
            gc.SetValue(static_cast<uint64_t>(r) * c.ld + j, 0.0f);
        }
    }
    AscendC::DataCacheCleanAndInvalid<float, AscendC::CacheLine::ENTIRE_DATA_CACHE, AscendC::DcciDst::CACHELINE_OUT>(
        gc);
}

/* matmul_tn_slots_accumulate (kWrite false) and matmul_tn_slots (kWrite true):
 * grad[M, N] += (or =) sum over slots s ascending of x_s^T * g_s, x [S*C, M]
 * and g [S*C, N] holding S slots of C rows (slot s the rows s*C ..), over the first
 * min(counts[s], C) rows of each slot; counts is S int32 elements in one row or column, each read
 * fresh from global memory (ReadCount's LoadFresh: they were written during the launch by another
 * rank's put, whose signal the tile has waited for). grad is walked in base blocks of
 * base_m x base_n (the group's tiling fixes that base block: SetFixSplit); per block, the slots
 * with a count above zero are summed in L0C (MatmulTnSumStep, one Iterate over the slot's rows,
 * the first starting the accumulators) and the block is added into grad once
 * (MatmulSumAddInto), or written over it (kWrite: MatmulSumWriteInto, grad never read). A block
 * no slot feeds is left as it is, or written +0.0 (kWrite: ZeroBlockByScalar). Rows past a count
 * are not read. */
template <bool kWrite, class MM, typename A, typename B>
HPMOE_FN void MatmulTnSlotsTile(MM& mm, const View<A>& x, const View<B>& g, const View<float>& grad,
                                const View<int32_t>& counts, uint32_t base_m, uint32_t base_n) {
    const uint32_t slots = counts.rows * counts.cols;
    const uint32_t slot_rows = x.rows / slots;
    for (uint32_t i0 = 0; i0 < grad.rows; i0 += base_m) {
        for (uint32_t j0 = 0; j0 < grad.cols; j0 += base_n) {
            const View<float> block(grad.base, grad.offset + static_cast<int64_t>(i0) * grad.ld + j0, base_m, base_n,
                                    grad.ld);
            bool started = false;
            for (uint32_t s = 0; s < slots; ++s) {
                /* Element s of a row (cols > 1) or a column (rows > 1) of counts. */
                const int64_t at = counts.cols > 1 ? counts.offset + s : counts.offset + static_cast<int64_t>(s) * counts.ld;
                const int32_t count = LoadFresh(counts.base + at);
                if (count <= 0) {
                    continue;
                }
                const uint32_t k = static_cast<uint32_t>(count) < slot_rows ? static_cast<uint32_t>(count) : slot_rows;
                const int64_t row = static_cast<int64_t>(s) * slot_rows;
                MatmulTnSumStep(mm, View<A>(x.base, x.offset + row * x.ld + i0, k, base_m, x.ld),
                                View<B>(g.base, g.offset + row * g.ld + j0, k, base_n, g.ld), block, started);
                started = true;
            }
            if (kWrite && started) {
                MatmulSumWriteInto(mm, block);
            } else if (kWrite) {
                ZeroBlockByScalar(block);
            } else if (started) {
                MatmulSumAddInto(mm, block);
            }
        }
    }
}

/* Between an AIC op that writes global memory and a later op of the same tile that reads it: the
 * Matmul API writes C on the FIX pipe, and nothing orders that write with the next matmul's reads
 * on MTE2 (IterateAll returns before the write completes, as the emulator assumes). The FIX_MTE2
 * event would be narrower, but SetFlag/WaitFlag documents FIX events as unsupported on some
 * releases, so this is the barrier of all pipes that the vector side's OpDone also uses. Emitted
 * only where a tile reads a tensor an earlier op of the same tile wrote; consecutive tiles of one
 * core are already ordered by the barrier before each tile's signals (TileContext::SendSignals). */
HPMOE_FN void CubeWritesDone() { AscendC::PipeBarrier<PIPE_ALL>(); }

}  // namespace hpmoe

#endif /* HPMOE_CUBE_OPS_H */
