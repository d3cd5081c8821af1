/* Violation: the AIC sets a mode-2 flag its AIVs never wait for; the launch ends with both AIV
 * counters at 1 -> flag_outstanding. */
#include "kernel_operator.h"
#include "harness.h"

using namespace AscendC;

extern "C" __global__ __aicore__ void k(GM_ADDR ffts) {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    SetSyncBaseAddr(*reinterpret_cast<__gm__ uint64_t*>(ffts));
    if ASCEND_IS_AIC {
        CrossCoreSetFlag<2, PIPE_FIX>(9);
    }
}

int main() {
    return harness::RunRanks(1, [](int, aclrtStream s) {
        HPMOE_EMU_LAUNCH(k, 1, s, harness::SyncAddr());
        return aclrtSynchronizeStream(s);
    });
}
