/* Violation: DataCopyPad brings rows of 26 bytes into 32-byte UB rows; a plain DataCopy then
 * stores whole 32-byte rows, 6 bytes of each never written -> undefined_store. */
#include "kernel_operator.h"
#include "harness.h"

using namespace AscendC;

extern "C" __global__ __aicore__ void k(GM_ADDR x, GM_ADDR y) {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    if (ASCEND_IS_AIV && GetBlockIdx() == 0) {
        TPipe pipe;
        TBuf<TPosition::VECCALC> b;
        pipe.InitBuffer(b, 4 * 32);
        LocalTensor<half> t = b.Get<half>();
        GlobalTensor<half> gx, gy;
        gx.SetGlobalBuffer((__gm__ half*)x, 4 * 13);
        gy.SetGlobalBuffer((__gm__ half*)y, 4 * 16);
        DataCopyPad(t, gx, DataCopyExtParams(4, 13 * 2, 0, 0, 0), DataCopyPadExtParams<half>(false, 0, 0, half(0.0f)));
        SetFlag<HardEvent::MTE2_MTE3>(0);
        WaitFlag<HardEvent::MTE2_MTE3>(0);
        DataCopy(gy, t, 4 * 16);
        PipeBarrier<PIPE_ALL>();
    }
}

int main() {
    return harness::RunRanks(1, [](int, aclrtStream s) {
        auto* x = harness::Upload(std::vector<uint16_t>(4 * 13, 0x3C00));
        auto* y = harness::Upload(std::vector<uint16_t>(4 * 16, 0));
        HPMOE_EMU_LAUNCH(k, 1, s, (GM_ADDR)x, (GM_ADDR)y);
        return aclrtSynchronizeStream(s);
    });
}
