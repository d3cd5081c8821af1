/* Violation: DataCopyPad reads one element past the end of a 100-element tensor. */
#include "kernel_operator.h"
#include "harness.h"

using namespace AscendC;

extern "C" __global__ __aicore__ void k(GM_ADDR x) {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    if ASCEND_IS_AIV {
        if (GetBlockIdx() != 1) {
            return;
        }
        TPipe pipe;
        TQue<TPosition::VECIN, 1> in;
        pipe.InitBuffer(in, 1, 512);
        GlobalTensor<float> gx;
        gx.SetGlobalBuffer((__gm__ float*)x);
        LocalTensor<float> a = in.AllocTensor<float>();
        DataCopyPad(a, gx, DataCopyExtParams(1, 101 * sizeof(float), 0, 0, 0), DataCopyPadExtParams<float>(false, 0, 0, 0.0f));
        in.EnQue(a);
        a = in.DeQue<float>();
        in.FreeTensor(a);
    }
}

int main() {
    return harness::RunRanks(1, [](int, aclrtStream s) {
        float* x = harness::Upload(std::vector<float>(100, 1.0f));
        HPMOE_EMU_LAUNCH(k, 1, s, (GM_ADDR)x);
        return aclrtSynchronizeStream(s);
    });
}
