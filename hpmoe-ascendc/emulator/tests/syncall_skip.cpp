/* Violation: AIV 3 skips SyncAll; the other AIVs wait in it forever -> deadlock. */
#include "kernel_operator.h"
#include "harness.h"

using namespace AscendC;

extern "C" __global__ __aicore__ void k(GM_ADDR ffts) {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    SetSyncBaseAddr(*reinterpret_cast<__gm__ uint64_t*>(ffts));
    if ASCEND_IS_AIV {
        if (GetBlockIdx() != 3) {
            SyncAll();
        }
    }
}

int main() {
    return harness::RunRanks(1, [](int, aclrtStream s) {
        HPMOE_EMU_LAUNCH(k, 2, s, harness::SyncAddr());
        return aclrtSynchronizeStream(s);
    });
}
