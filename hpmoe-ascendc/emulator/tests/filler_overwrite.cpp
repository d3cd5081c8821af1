/* Violation: a raw store to the element just before a buffer's start lands in its front filler
 * (no fault there); the end-of-launch filler check reports it -> gm_filler_overwritten. */
#include "kernel_operator.h"
#include "harness.h"

using namespace AscendC;

extern "C" __global__ __aicore__ void k(GM_ADDR x) {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    if ASCEND_IS_AIC {
        volatile __gm__ float* p = (__gm__ float*)x;
        p[-1] = 1.0f;
    }
}

int main() {
    return harness::RunRanks(1, [](int, aclrtStream s) {
        float* x = harness::Upload(std::vector<float>(64, 0.0f));
        HPMOE_EMU_LAUNCH(k, 1, s, (GM_ADDR)x);
        return aclrtSynchronizeStream(s);
    });
}
