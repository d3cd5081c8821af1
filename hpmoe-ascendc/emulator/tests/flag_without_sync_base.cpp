/* Wrong: a cross-core flag before SetSyncBaseAddr (the host's aclrtGetHardwareSyncAddr value). */
#include "kernel_operator.h"
#include "harness.h"

using namespace AscendC;

extern "C" __global__ __aicore__ void k() {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    if ASCEND_IS_AIC {
        CrossCoreSetFlag<2, PIPE_FIX>(9);
    }
    if ASCEND_IS_AIV {
        CrossCoreWaitFlag<2, PIPE_S>(9);
    }
}

int main() {
    return harness::RunRanks(1, [](int, aclrtStream s) {
        HPMOE_EMU_LAUNCH(k, 1, s);
        return aclrtSynchronizeStream(s);
    });
}
