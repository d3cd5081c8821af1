/* Violation: the AIC sets mode-2 flag 9 sixteen times while its AIVs never wait: the 16th set
 * takes the AIVs' counters past 15 -> flag_overflow. */
#include "kernel_operator.h"
#include "harness.h"

using namespace AscendC;

extern "C" __global__ __aicore__ void k(GM_ADDR ffts) {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    SetSyncBaseAddr(*reinterpret_cast<__gm__ uint64_t*>(ffts));
    if ASCEND_IS_AIC {
        for (int i = 0; i < 16; ++i) {
            CrossCoreSetFlag<2, PIPE_FIX>(9);
        }
    }
}

int main() {
    return harness::RunRanks(1, [](int, aclrtStream s) {
        HPMOE_EMU_LAUNCH(k, 1, s, harness::SyncAddr());
        return aclrtSynchronizeStream(s);
    });
}
