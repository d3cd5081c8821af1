/* Violation: FreeTensor twice on the same buffer -> double_free. */
#include "kernel_operator.h"
#include "harness.h"

using namespace AscendC;

extern "C" __global__ __aicore__ void k() {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    if ASCEND_IS_AIV {
        TPipe pipe;
        TQue<TPosition::VECOUT, 1> out;
        pipe.InitBuffer(out, 1, 256);
        LocalTensor<float> b = out.AllocTensor<float>();
        Duplicate(b, 1.0f, 64);
        out.EnQue(b);
        b = out.DeQue<float>();
        out.FreeTensor(b);
        out.FreeTensor(b);
    }
}

int main() {
    return harness::RunRanks(1, [](int, aclrtStream s) {
        HPMOE_EMU_LAUNCH(k, 1, s);
        return aclrtSynchronizeStream(s);
    });
}
