/* Violation: a core spins on a raw volatile read that never changes, with no emulator call in
 * the loop: only the launch's wall-clock bound (HPMOE_EMU_TIMEOUT_MS) ends it -> timeout. */
#include "kernel_operator.h"
#include "harness.h"

using namespace AscendC;

extern "C" __global__ __aicore__ void k(GM_ADDR x) {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    if ASCEND_IS_AIC {
        volatile __gm__ int32_t* p = (__gm__ int32_t*)x;
        while (*p == 0) {
        }
    }
}

int main() {
    return harness::RunRanks(1, [](int, aclrtStream s) {
        int32_t* x = harness::Upload(std::vector<int32_t>(8, 0));
        HPMOE_EMU_LAUNCH(k, 1, s, (GM_ADDR)x);
        const int st = aclrtSynchronizeStream(s);
        const int32_t one = 1;
        aclrtMemcpy(x, 4, &one, 4, ACL_MEMCPY_HOST_TO_DEVICE); /* let the spinning thread finish */
        return st;
    });
}
