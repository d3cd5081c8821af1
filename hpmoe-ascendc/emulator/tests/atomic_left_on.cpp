/* Violation: SetAtomicAdd<float> around a copy-out that accumulates into GM, but no
 * SetAtomicNone before the end -> atomic_left_on. (The add itself is checked by the value.) */
#include "kernel_operator.h"
#include "harness.h"

using namespace AscendC;

extern "C" __global__ __aicore__ void k(GM_ADDR y) {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    if (ASCEND_IS_AIV && GetBlockIdx() == 0) {
        TPipe pipe;
        TQue<TPosition::VECOUT, 1> out;
        pipe.InitBuffer(out, 1, 256);
        GlobalTensor<float> gy;
        gy.SetGlobalBuffer((__gm__ float*)y, 64);
        LocalTensor<float> b = out.AllocTensor<float>();
        Duplicate(b, 1.5f, 64);
        out.EnQue(b);
        b = out.DeQue<float>();
        SetAtomicAdd<float>();
        DataCopy(gy, b, 64);
        out.FreeTensor(b);
        PipeBarrier<PIPE_ALL>();
    }
}

int main() {
    return harness::RunRanks(1, [](int, aclrtStream s) {
        float* y = harness::Upload(std::vector<float>(64, 1.0f));
        HPMOE_EMU_LAUNCH(k, 1, s, (GM_ADDR)y);
        const int st = aclrtSynchronizeStream(s);
        harness::Check("accumulated", harness::Download(y, 64), std::vector<float>(64, 2.5f));
        return st;
    });
}
