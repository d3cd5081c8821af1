/* Violation: an AIV signals its partner with a cross-core flag set on PIPE_V right after a
 * copy-out on MTE3: the set orders only after the V pipe's earlier instructions, so the GM
 * write is not known complete -> gm_write_not_complete. */
#include "kernel_operator.h"
#include "harness.h"

using namespace AscendC;

extern "C" __global__ __aicore__ void k(GM_ADDR y, GM_ADDR ffts) {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    SetSyncBaseAddr(*reinterpret_cast<__gm__ uint64_t*>(ffts));
    if ASCEND_IS_AIV {
        TPipe pipe;
        TQue<TPosition::VECOUT, 1> out;
        pipe.InitBuffer(out, 1, 256);
        GlobalTensor<float> gy;
        gy.SetGlobalBuffer((__gm__ float*)y + GetBlockIdx() * 64, 64);
        LocalTensor<float> b = out.AllocTensor<float>();
        Duplicate(b, 1.0f, 64);
        out.EnQue(b);
        b = out.DeQue<float>();
        DataCopy(gy, b, 64);
        out.FreeTensor(b);
        CrossCoreSetFlag<1, PIPE_V>(9);
        CrossCoreWaitFlag<1, PIPE_S>(9);
        PipeBarrier<PIPE_ALL>();
    }
}

int main() {
    return harness::RunRanks(1, [](int, aclrtStream s) {
        float* y = harness::Upload(std::vector<float>(128, 0.0f));
        HPMOE_EMU_LAUNCH(k, 1, s, (GM_ADDR)y, harness::SyncAddr());
        return aclrtSynchronizeStream(s);
    });
}
