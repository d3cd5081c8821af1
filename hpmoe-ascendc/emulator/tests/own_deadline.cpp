/* Correct: AIV 0 polls a word nobody writes (DataCacheCleanAndInvalid + raw read, as hpmoe's
 * counters do) until its own 5-second deadline on GetSystemCycle passes, then records the
 * timeout. Virtual time makes the 5 s pass in milliseconds once every unfinished core waits; the
 * test bounds the wall time. */
#include <chrono>

#include "kernel_operator.h"
#include "harness.h"

using namespace AscendC;

extern "C" __global__ __aicore__ void k(GM_ADDR word, GM_ADDR out) {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    if (!ASCEND_IS_AIV || GetBlockIdx() != 0) {
        return;
    }
    GlobalTensor<int32_t> g;
    g.SetGlobalBuffer((__gm__ int32_t*)word, 8);
    const int64_t start = GetSystemCycle();
    const int64_t limit = 5 * 50000000LL; /* 5 s of the 50 MHz counter */
    int32_t result = 2;
    for (;;) {
        DataCacheCleanAndInvalid<int32_t, CacheLine::SINGLE_CACHE_LINE, DcciDst::CACHELINE_OUT>(g);
        if (*(volatile __gm__ int32_t*)word != 0) {
            result = 0;
            break;
        }
        if (GetSystemCycle() - start > limit) {
            result = 1;
            break;
        }
    }
    GlobalTensor<int32_t> o;
    o.SetGlobalBuffer((__gm__ int32_t*)out, 8);
    o.SetValue(0, result);
    DataCacheCleanAndInvalid<int32_t, CacheLine::SINGLE_CACHE_LINE, DcciDst::CACHELINE_OUT>(o);
}

int main() {
    return harness::RunRanks(1, [](int, aclrtStream s) {
        int32_t* word = harness::Upload(std::vector<int32_t>(8, 0));
        int32_t* out = harness::Upload(std::vector<int32_t>(8, 0));
        const auto t0 = std::chrono::steady_clock::now();
        HPMOE_EMU_LAUNCH(k, 1, s, (GM_ADDR)word, (GM_ADDR)out);
        const int st = aclrtSynchronizeStream(s);
        const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::vector<int32_t> want(8, 0);
        want[0] = 1;
        harness::Check("timed_out", harness::Download(out, 8), want);
        std::printf("note wall_time %.3f s\n", secs);
        std::printf("check wall_time %s\n", secs < 3.0 ? "ok" : "FAILED");
        return st;
    });
}
