/* Correct: one process, three launches in a row on one stream: a clean one, one that fails, and a
 * clean one again; each synchronisation returns its own launch's status and the report always
 * describes the last launch. */
#include "kernel_operator.h"
#include "harness.h"

using namespace AscendC;

extern "C" __global__ __aicore__ void k(GM_ADDR y, int32_t fail) {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    if (ASCEND_IS_AIV && GetBlockIdx() == 0) {
        GlobalTensor<int32_t> g;
        g.SetGlobalBuffer((__gm__ int32_t*)y, 8);
        g.SetValue(fail ? 8 : 0, g.GetValue(0) + 1); /* fail: one past the end */
        DataCacheCleanAndInvalid<int32_t, CacheLine::SINGLE_CACHE_LINE, DcciDst::CACHELINE_OUT>(g);
    }
}

int main() {
    int32_t* y = nullptr;
    harness::RunRanks(1, [&](int, aclrtStream s) {
        y = harness::Upload(std::vector<int32_t>(8, 0));
        int bad = 0;
        for (int32_t fail : {0, 1, 0}) {
            HPMOE_EMU_LAUNCH(k, 1, s, (GM_ADDR)y, fail);
            const int st = aclrtSynchronizeStream(s);
            const std::vector<std::string> report = hpmoe_emu::Report();
            const bool expected = fail ? (st != 0 && report.size() == 1 && report[0].rfind("error gm_out_of_bounds", 0) == 0)
                                       : (st == 0 && report.empty());
            bad += expected ? 0 : 1;
        }
        std::vector<int32_t> want(8, 0);
        want[0] = 2;
        harness::Check("count", harness::Download(y, 8), want);
        std::printf("check statuses %s\n", bad == 0 ? "ok" : "FAILED");
        return 0;
    });
    return 0;
}
