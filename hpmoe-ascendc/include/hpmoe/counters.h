/* hpmoe device runtime: global-memory event counters.
 *
 * Every waiting tile owns one int32 counter in the rank's counter workspace (symmetric memory,
 * zeroed by the host before the launch) and waits until it reaches its fan-in; each producer
 * adds 1 when it finishes. Adds are SHMEM atomics (scalar, so AIC and AIV cores alike, local or
 * on another PE); waits poll with a data-cache invalidation before each read and give up after
 * a deadline, or as soon as another core of the rank has stopped. */
#ifndef HPMOE_COUNTERS_H
#define HPMOE_COUNTERS_H

#include "config.h"
#include "diag.h"
#include "shmem.h"

namespace hpmoe {

/* The system counter runs at 50 MHz. */
constexpr int64_t kCyclesPerMicrosecond = 50;

class Deadline {
public:
    HPMOE_FN explicit Deadline(uint64_t microseconds)
        : start_(AscendC::GetSystemCycle()), cycles_(static_cast<int64_t>(microseconds) * kCyclesPerMicrosecond) {}
    HPMOE_FN bool Passed() const { return AscendC::GetSystemCycle() - start_ > cycles_; }

private:
    int64_t start_;
    int64_t cycles_;
};

/* The counter's value in global memory (not a stale cached copy). */
HPMOE_FN int32_t LoadFresh(__gm__ int32_t* counter) {
    FlushLine(counter);
    return *reinterpret_cast<volatile __gm__ int32_t*>(counter);
}

/* Element `offset` of an int32 tensor in global memory, read fresh: the count of a tile's
 * `run_if_above` guard. It was written during the launch by another rank's put or another
 * core, so the data-cache line is invalidated before the scalar read (LoadFresh); the tile's
 * wait has already seen the writer's signal. */
HPMOE_FN int32_t ReadCount(GM_ADDR tensor, int64_t offset) {
    return LoadFresh(reinterpret_cast<__gm__ int32_t*>(tensor) + offset);
}

enum WaitOutcome : uint32_t { kWaitOk = 0, kWaitTimeout = 1, kWaitAborted = 2 };

/* Polls until *counter >= target. `seen` holds the last value read. */
HPMOE_FN uint32_t WaitAtLeast(__gm__ int32_t* counter, int32_t target, uint64_t timeout_us, const Diag& diag,
                              int32_t& seen) {
    const Deadline deadline(timeout_us);
    for (uint32_t polls = 1;; ++polls) {
        seen = LoadFresh(counter);
        if (seen >= target) {
            return kWaitOk;
        }
        if ((polls & 63u) == 0u) {
            if (diag.Aborted()) {
                return kWaitAborted;
            }
            if (deadline.Passed()) {
                return kWaitTimeout;
            }
        }
    }
}

/* Adds 1 to counter `id` of PE `pe`: the signal of a finished producer. */
HPMOE_FN void AddOne(__gm__ int32_t* counters, uint32_t id, int32_t pe) {
    aclshmem_int32_atomic_add(counters + id, 1, pe);
}

}  // namespace hpmoe

#endif /* HPMOE_COUNTERS_H */
