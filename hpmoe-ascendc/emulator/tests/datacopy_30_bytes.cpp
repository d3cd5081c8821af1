/* Violation: DataCopy (non-Pad) of 15 halves = 30 bytes, not a multiple of 32. */
#include "kernel_operator.h"
#include "harness.h"

using namespace AscendC;

extern "C" __global__ __aicore__ void k(GM_ADDR x) {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    if ASCEND_IS_AIV {
        TPipe pipe;
        TQue<TPosition::VECIN, 1> in;
        pipe.InitBuffer(in, 1, 64);
        GlobalTensor<half> gx;
        gx.SetGlobalBuffer((__gm__ half*)x, 32);
        LocalTensor<half> a = in.AllocTensor<half>();
        DataCopy(a, gx, 15);
        in.EnQue(a);
        a = in.DeQue<half>();
        in.FreeTensor(a);
    }
}

int main() {
    return harness::RunRanks(1, [](int, aclrtStream s) {
        half* x = harness::Upload(std::vector<half>(32));
        HPMOE_EMU_LAUNCH(k, 1, s, (GM_ADDR)x);
        return aclrtSynchronizeStream(s);
    });
}
