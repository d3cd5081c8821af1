/* hpmoe device runtime: the diagnostics area (layout in abi.h).
 *
 * A core writes its own 64-byte record at start, when it stops early and when it finishes, and
 * flushes it from the data cache so the host (and, for the flag counts, its partner cores)
 * read the value in global memory. A core that stops early also sets the rank's abort word,
 * which every waiting core polls so that one failure ends the launch quickly. */
#ifndef HPMOE_DIAG_H
#define HPMOE_DIAG_H

#include "abi.h"
#include "config.h"

namespace hpmoe {

/* Writes back and invalidates the data-cache line holding `p`, so a scalar store reaches global
 * memory and the next scalar load reads it from there. */
HPMOE_FN void FlushLine(__gm__ const void* p) {
    AscendC::GlobalTensor<uint8_t> g;
    g.SetGlobalBuffer(reinterpret_cast<__gm__ uint8_t*>(const_cast<__gm__ void*>(p)));
    AscendC::DataCacheCleanAndInvalid<uint8_t, AscendC::CacheLine::SINGLE_CACHE_LINE, AscendC::DcciDst::CACHELINE_OUT>(
        g);
}

/* Invalidates the whole data cache: at kernel start, so no line of a previous launch's table,
 * flag plan or tiling survives. */
HPMOE_FN void FlushDataCache(GM_ADDR any) {
    AscendC::GlobalTensor<uint8_t> g;
    g.SetGlobalBuffer(any);
    AscendC::DataCacheCleanAndInvalid<uint8_t, AscendC::CacheLine::ENTIRE_DATA_CACHE, AscendC::DcciDst::CACHELINE_OUT>(
        g);
}

class Diag {
public:
    HPMOE_FN void Init(GM_ADDR area, uint32_t local_core, uint32_t global_core) {
        header_ = reinterpret_cast<__gm__ hpmoe_diag_header*>(area);
        records_ = reinterpret_cast<__gm__ hpmoe_diag_record*>(area + HPMOE_DIAG_HEADER_BYTES);
        local_ = local_core;
        mine_ = records_ + local_core;
        mine_->status = HPMOE_STATUS_RUNNING;
        mine_->core = global_core;
        mine_->entry = 0;
        mine_->instance = 0;
        mine_->counter = 0;
        mine_->expected = 0;
        mine_->seen = 0;
        mine_->tiles_done = 0;
        mine_->flag_consumed = 0;
        mine_->flag_set = 0;
        mine_->detail = 0;
        FlushLine(mine_);
    }

    /* Records why the core stops and tells the rank's other cores to stop too. */
    HPMOE_FN void Fail(uint32_t status, uint32_t entry, uint32_t instance, uint32_t counter, int32_t expected,
                       int32_t seen, uint32_t detail) {
        mine_->status = status;
        mine_->entry = entry;
        mine_->instance = instance;
        mine_->counter = counter;
        mine_->expected = expected;
        mine_->seen = seen;
        mine_->detail = detail;
        FlushLine(mine_);
        header_->abort = 1u + local_;
        FlushLine(header_);
    }

    HPMOE_FN void Done(uint32_t tiles_done) {
        mine_->status = HPMOE_STATUS_DONE;
        mine_->tiles_done = tiles_done;
        FlushLine(mine_);
    }

    /* Entries done so far, written through to global memory: after a hang the host reads which
     * entry each core was at (a scalar store stays in the data cache until cleaned). */
    HPMOE_FN void Progress(uint32_t tiles_done) {
        mine_->tiles_done = tiles_done;
        FlushLine(mine_);
    }

    /* Whether a core of this rank has stopped early. */
    HPMOE_FN bool Aborted() const {
        FlushLine(header_);
        return *reinterpret_cast<volatile __gm__ uint32_t*>(&header_->abort) != 0u;
    }

    HPMOE_FN void PublishFlagConsumed(uint32_t n) {
        mine_->flag_consumed = n;
        FlushLine(mine_);
    }
    HPMOE_FN void PublishFlagSet(uint32_t n) {
        mine_->flag_set = n;
        FlushLine(mine_);
    }
    /* Flag waits completed by another core of the rank (its own AIVs, for an AIC). */
    HPMOE_FN uint32_t FlagConsumedOf(uint32_t local_core) const {
        __gm__ hpmoe_diag_record* r = records_ + local_core;
        FlushLine(r);
        return *reinterpret_cast<volatile __gm__ uint32_t*>(&r->flag_consumed);
    }

private:
    __gm__ hpmoe_diag_header* header_ = nullptr;
    __gm__ hpmoe_diag_record* records_ = nullptr;
    __gm__ hpmoe_diag_record* mine_ = nullptr;
    uint32_t local_ = 0;
};

}  // namespace hpmoe

#endif /* HPMOE_DIAG_H */
