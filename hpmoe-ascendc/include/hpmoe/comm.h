/* hpmoe device runtime: one-sided puts into another rank's symmetric tensor (AIV only), through
 * the CANN SHMEM device API.
 *
 * A put copies a region of a local tensor into the same-shaped region of a symmetric tensor on
 * PE `pe`, row by row when either side is strided. The tile's last put carries one of the
 * tile's signals to that PE with aclshmem_putmem_signal (data first, then an atomic add of 1 to
 * the consumer's counter); any other signal goes out in TileContext::SendSignals after
 * aclshmem_quiet(). */
#ifndef HPMOE_COMM_H
#define HPMOE_COMM_H

#include "config.h"
#include "context.h"
#include "shmem.h"
#include "view.h"

namespace hpmoe {

/* What a put delivers besides its data. The tile's last put is kCarriesSignal: it takes the tile's
 * signal for its PE, if the tile has one, with aclshmem_putmem_signal; every other put is kDataOnly. */
enum PutSignal : uint8_t {
    kDataOnly = 0,
    kCarriesSignal = 1,
};

/* dst (a symmetric tensor's region, on PE `pe`) = src (local); `signal` says whether it may carry
 * one of the tile's signals. */
template <typename T>
HPMOE_FN void Put(TileContext& ctx, const View<T>& src, const View<T>& dst, int64_t pe, PutSignal signal) {
    const bool one_run = src.Contiguous() && dst.Contiguous();
    const uint32_t runs = one_run ? 1u : dst.rows;
    const uint32_t run_bytes = (one_run ? dst.rows * dst.cols : dst.cols) * static_cast<uint32_t>(sizeof(T));
    const bool earlier_puts = ctx.IssuedPuts();
    ctx.NotePut();
    for (uint32_t r = 0; r < runs; ++r) {
        __gm__ void* to = dst.At(r, 0);
        __gm__ void* from = src.At(r, 0);
        __gm__ int32_t* counter = nullptr;
        if (signal == kCarriesSignal && r + 1 == runs) {
            counter = ctx.TakeSignalFor(pe);
        }
        if (counter != nullptr) {
            if (earlier_puts || runs > 1) {
                /* Put-with-signal orders only its own data: deliver the tile's earlier puts first. */
                aclshmem_fence();
            }
            aclshmem_putmem_signal(to, from, static_cast<size_t>(run_bytes), counter, 1, ACLSHMEM_SIGNAL_ADD,
                                   static_cast<int>(pe));
        } else {
            aclshmem_putmem_nbi(to, from, run_bytes, static_cast<int32_t>(pe));
        }
    }
}

}  // namespace hpmoe

#endif /* HPMOE_COMM_H */
