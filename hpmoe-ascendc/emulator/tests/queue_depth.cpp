/* Violation: two EnQue on a TQue of depth 1 without a DeQue between -> queue_depth_exceeded. */
#include "kernel_operator.h"
#include "harness.h"

using namespace AscendC;

extern "C" __global__ __aicore__ void k() {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    if ASCEND_IS_AIV {
        TPipe pipe;
        TQue<TPosition::VECOUT, 1> out;
        pipe.InitBuffer(out, 2, 256);
        LocalTensor<float> a = out.AllocTensor<float>();
        LocalTensor<float> b = out.AllocTensor<float>();
        Duplicate(a, 1.0f, 64);
        Duplicate(b, 1.0f, 64);
        out.EnQue(a);
        out.EnQue(b);
    }
}

int main() {
    return harness::RunRanks(1, [](int, aclrtStream s) {
        HPMOE_EMU_LAUNCH(k, 1, s);
        return aclrtSynchronizeStream(s);
    });
}
