/* Violation: a kernel sets cross-core flag 12 (one of SyncAll's ids 11..14) and calls SyncAll
 * -> flag_id_reserved. */
#include "kernel_operator.h"
#include "harness.h"

using namespace AscendC;

extern "C" __global__ __aicore__ void k(GM_ADDR ffts) {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    SetSyncBaseAddr(*reinterpret_cast<__gm__ uint64_t*>(ffts));
    if ASCEND_IS_AIV {
        CrossCoreSetFlag<1, PIPE_MTE3>(12);
        CrossCoreWaitFlag<1, PIPE_S>(12);
        SyncAll();
    }
}

int main() {
    return harness::RunRanks(1, [](int, aclrtStream s) {
        HPMOE_EMU_LAUNCH(k, 1, s, harness::SyncAddr());
        return aclrtSynchronizeStream(s);
    });
}
