/* Correct: AIC -> both AIVs (mode 2) 40 times with back-pressure from the AIVs' own mode-2 sets;
 * the AIVs then meet in mode 1 and all AIVs of the launch in mode 0; every AIV writes how many
 * waits it completed. */
#include "kernel_operator.h"
#include "harness.h"

using namespace AscendC;

extern "C" __global__ __aicore__ void k(GM_ADDR out, GM_ADDR ffts) {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    SetSyncBaseAddr(*reinterpret_cast<__gm__ uint64_t*>(ffts));
    if ASCEND_IS_AIC {
        for (int i = 0; i < 40; ++i) {
            CrossCoreSetFlag<2, PIPE_FIX>(9);
            CrossCoreWaitFlag<2, PIPE_S>(10); /* both AIVs acknowledged */
        }
    }
    if ASCEND_IS_AIV {
        int32_t done = 0;
        for (int i = 0; i < 40; ++i) {
            CrossCoreWaitFlag<2, PIPE_S>(9);
            ++done;
            CrossCoreSetFlag<2, PIPE_MTE3>(10);
        }
        CrossCoreSetFlag<1, PIPE_MTE3>(8);
        CrossCoreWaitFlag<1, PIPE_S>(8);
        CrossCoreSetFlag<0, PIPE_MTE3>(7);
        CrossCoreWaitFlag<0, PIPE_S>(7);
        GlobalTensor<int32_t> g;
        g.SetGlobalBuffer((__gm__ int32_t*)out + GetBlockIdx() * 16, 16);
        g.SetValue(0, done);
        DataCacheCleanAndInvalid<int32_t, CacheLine::SINGLE_CACHE_LINE, DcciDst::CACHELINE_OUT>(g);
    }
}

int main() {
    return harness::RunRanks(1, [](int, aclrtStream s) {
        int32_t* out = harness::Upload(std::vector<int32_t>(4 * 16, 0));
        HPMOE_EMU_LAUNCH(k, 2, s, (GM_ADDR)out, harness::SyncAddr());
        const int st = aclrtSynchronizeStream(s);
        std::vector<int32_t> want(4 * 16, 0);
        for (int v = 0; v < 4; ++v) {
            want[v * 16] = 40;
        }
        harness::Check("waits", harness::Download(out, 4 * 16), want);
        return st;
    });
}
