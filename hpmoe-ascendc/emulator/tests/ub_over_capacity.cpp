/* Violation: TPipe buffers of 3 x 64 KiB on an AIV (UB: 184 KiB usable). */
#include "kernel_operator.h"
#include "harness.h"

using namespace AscendC;

extern "C" __global__ __aicore__ void k() {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    if ASCEND_IS_AIV {
        TPipe pipe;
        TBuf<TPosition::VECCALC> a, b, c;
        pipe.InitBuffer(a, 64 * 1024);
        pipe.InitBuffer(b, 64 * 1024);
        pipe.InitBuffer(c, 64 * 1024);
    }
}

int main() {
    return harness::RunRanks(1, [](int, aclrtStream s) {
        HPMOE_EMU_LAUNCH(k, 1, s);
        return aclrtSynchronizeStream(s);
    });
}
