/* Violation: an AIV copies a tile out to GM (MTE3) and reads the same bytes back in (MTE2) with
 * no sync between the two DMA pipes -> unsynchronised_read on global memory. */
#include "kernel_operator.h"
#include "harness.h"

using namespace AscendC;

extern "C" __global__ __aicore__ void k(GM_ADDR y) {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    if (ASCEND_IS_AIV && GetBlockIdx() == 0) {
        TPipe pipe;
        TQue<TPosition::VECOUT, 1> out;
        TQue<TPosition::VECIN, 1> in;
        pipe.InitBuffer(out, 1, 256);
        pipe.InitBuffer(in, 1, 256);
        GlobalTensor<float> gy;
        gy.SetGlobalBuffer((__gm__ float*)y, 64);
        LocalTensor<float> b = out.AllocTensor<float>();
        Duplicate(b, 1.0f, 64);
        out.EnQue(b);
        b = out.DeQue<float>();
        DataCopy(gy, b, 64);
        out.FreeTensor(b);
        LocalTensor<float> a = in.AllocTensor<float>();
        DataCopy(a, gy, 64);
        in.EnQue(a);
        a = in.DeQue<float>();
        in.FreeTensor(a);
        PipeBarrier<PIPE_ALL>();
    }
}

int main() {
    return harness::RunRanks(1, [](int, aclrtStream s) {
        float* y = harness::Upload(std::vector<float>(64, 0.0f));
        HPMOE_EMU_LAUNCH(k, 1, s, (GM_ADDR)y);
        return aclrtSynchronizeStream(s);
    });
}
