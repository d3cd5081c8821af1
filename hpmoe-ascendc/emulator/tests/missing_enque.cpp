/* Violation: the vector unit reads what MTE2 copied in with no EnQue/DeQue (or flag) between
 * them -> unsynchronised_read, even though the emulator's copy has already landed. */
#include "kernel_operator.h"
#include "harness.h"

using namespace AscendC;

extern "C" __global__ __aicore__ void k(GM_ADDR x, GM_ADDR y) {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    if ASCEND_IS_AIC {
        return;
    }
    TPipe pipe;
    TQue<TPosition::VECIN, 1> in;
    TQue<TPosition::VECOUT, 1> out;
    pipe.InitBuffer(in, 1, 1024);
    pipe.InitBuffer(out, 1, 1024);
    GlobalTensor<float> gx, gy;
    gx.SetGlobalBuffer((__gm__ float*)x + GetBlockIdx() * 256, 256);
    gy.SetGlobalBuffer((__gm__ float*)y + GetBlockIdx() * 256, 256);
    LocalTensor<float> a = in.AllocTensor<float>();
    DataCopy(a, gx, 256);
    LocalTensor<float> b = out.AllocTensor<float>();
    Muls(b, a, 2.0f, 256); /* no in.EnQue(a); a = in.DeQue<float>(); */
    out.EnQue(b);
    b = out.DeQue<float>();
    DataCopy(gy, b, 256);
    in.FreeTensor(a);
    out.FreeTensor(b);
    PipeBarrier<PIPE_ALL>();
}

int main() {
    return harness::RunRanks(1, [](int, aclrtStream s) {
        float* x = harness::Upload(std::vector<float>(512, 1.0f));
        float* y = harness::Upload(std::vector<float>(512, 0.0f));
        HPMOE_EMU_LAUNCH(k, 1, s, (GM_ADDR)x, (GM_ADDR)y);
        return aclrtSynchronizeStream(s);
    });
}
