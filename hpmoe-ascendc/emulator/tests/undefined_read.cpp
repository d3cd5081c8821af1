/* Violation: GetValue of a UB element nothing wrote (fresh TBuf) -> undefined_read. */
#include "kernel_operator.h"
#include "harness.h"

using namespace AscendC;

extern "C" __global__ __aicore__ void k() {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    if (ASCEND_IS_AIV && GetBlockIdx() == 0) {
        TPipe pipe;
        TBuf<TPosition::VECCALC> b;
        pipe.InitBuffer(b, 256);
        LocalTensor<float> t = b.Get<float>();
        Duplicate(t, 1.0f, 32);
        PipeBarrier<PIPE_ALL>();
        const float ok = t.GetValue(31);
        const float bad = t.GetValue(32);
        t.SetValue(0, ok + bad);
    }
}

int main() {
    return harness::RunRanks(1, [](int, aclrtStream s) {
        HPMOE_EMU_LAUNCH(k, 1, s);
        return aclrtSynchronizeStream(s);
    });
}
