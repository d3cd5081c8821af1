/* Violation: an AIV-only kernel type; the emulator launches KERNEL_TYPE_MIX_AIC_1_2 -> kernel_type. */
#include "kernel_operator.h"
#include "harness.h"

extern "C" __global__ __aicore__ void k() { KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY); }

int main() {
    return harness::RunRanks(1, [](int, aclrtStream s) {
        HPMOE_EMU_LAUNCH(k, 1, s);
        return aclrtSynchronizeStream(s);
    });
}
