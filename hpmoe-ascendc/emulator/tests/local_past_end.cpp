/* Violation: LocalTensor::GetValue of element 64 of a 64-float TBuf -> local_out_of_bounds. */
#include "kernel_operator.h"
#include "harness.h"

using namespace AscendC;

extern "C" __global__ __aicore__ void k() {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    if ASCEND_IS_AIV {
        TPipe pipe;
        TBuf<TPosition::VECCALC> a;
        pipe.InitBuffer(a, 256);
        LocalTensor<float> t = a.Get<float>();
        Duplicate(t, 0.0f, 64);
        PipeBarrier<PIPE_ALL>();
        (void)t.GetValue(64);
    }
}

int main() {
    return harness::RunRanks(1, [](int, aclrtStream s) {
        HPMOE_EMU_LAUNCH(k, 1, s);
        return aclrtSynchronizeStream(s);
    });
}
