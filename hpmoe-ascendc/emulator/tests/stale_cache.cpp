/* Violation: AIV 1 polls a flag word with GlobalTensor::GetValue and no DataCacheCleanAndInvalid;
 * AIV 0 sets it in global memory (scalar store + clean) after the poller cached the line. The
 * poller keeps reading its stale copy -> deadlock, reported as a polling core. With argument
 * "fresh" the poller invalidates before each read and the kernel completes. */
#include "kernel_operator.h"
#include "harness.h"

using namespace AscendC;

extern "C" __global__ __aicore__ void k(GM_ADDR word, GM_ADDR out, int32_t fresh, GM_ADDR ffts) {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    SetSyncBaseAddr(*reinterpret_cast<__gm__ uint64_t*>(ffts));
    if (!ASCEND_IS_AIV) {
        return;
    }
    GlobalTensor<int32_t> g;
    g.SetGlobalBuffer((__gm__ int32_t*)word, 16);
    if (GetBlockIdx() == 1) {
        const int32_t first = g.GetValue(0); /* caches the line (value 0) */
        CrossCoreSetFlag<1, PIPE_MTE3>(9);   /* tell AIV 0 the line is cached */
        CrossCoreWaitFlag<1, PIPE_S>(9);
        int32_t v = first;
        while (v == 0) {
            if (fresh) {
                DataCacheCleanAndInvalid<int32_t, CacheLine::SINGLE_CACHE_LINE, DcciDst::CACHELINE_OUT>(g);
            }
            v = g.GetValue(0);
        }
        GlobalTensor<int32_t> o;
        o.SetGlobalBuffer((__gm__ int32_t*)out, 16);
        o.SetValue(0, v);
        DataCacheCleanAndInvalid<int32_t, CacheLine::SINGLE_CACHE_LINE, DcciDst::CACHELINE_OUT>(o);
    } else {
        CrossCoreSetFlag<1, PIPE_MTE3>(9);
        CrossCoreWaitFlag<1, PIPE_S>(9);
        g.SetValue(0, 7);
        DataCacheCleanAndInvalid<int32_t, CacheLine::SINGLE_CACHE_LINE, DcciDst::CACHELINE_OUT>(g);
    }
}

int main(int argc, char** argv) {
    const int32_t fresh = argc > 1 && std::string(argv[1]) == "fresh";
    return harness::RunRanks(1, [&](int, aclrtStream s) {
        int32_t* word = harness::Upload(std::vector<int32_t>(16, 0));
        int32_t* out = harness::Upload(std::vector<int32_t>(16, 0));
        HPMOE_EMU_LAUNCH(k, 1, s, (GM_ADDR)word, (GM_ADDR)out, fresh, harness::SyncAddr());
        const int st = aclrtSynchronizeStream(s);
        std::vector<int32_t> want(16, 0);
        want[0] = 7;
        harness::Check("out", harness::Download(out, 16), want);
        return st;
    });
}
