/* Violation: AIV 0 puts (nbi) into a symmetric buffer of its own PE and tells AIV 1 with a
 * cross-core flag before its quiet; AIV 1 copies the buffer in while the put has not landed
 * -> read_before_quiet (AIV 0 quiets only after a second handshake, once AIV 1 has read). */
#include "kernel_operator.h"
#include "shmem.h"
#include "harness.h"

using namespace AscendC;

extern "C" __global__ __aicore__ void k(GM_ADDR src, GM_ADDR buf, GM_ADDR ffts) {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    SetSyncBaseAddr(*reinterpret_cast<__gm__ uint64_t*>(ffts));
    if (!ASCEND_IS_AIV) {
        return;
    }
    if (GetBlockIdx() == 0) {
        aclshmem_putmem_nbi(buf, src, 256, aclshmem_my_pe());
        CrossCoreSetFlag<1, PIPE_MTE3>(9);
        CrossCoreWaitFlag<1, PIPE_S>(9);
        CrossCoreSetFlag<1, PIPE_MTE3>(10); /* quiet only once AIV 1 has read */
        CrossCoreWaitFlag<1, PIPE_S>(10);
        aclshmem_quiet();
    } else {
        CrossCoreSetFlag<1, PIPE_MTE3>(9);
        CrossCoreWaitFlag<1, PIPE_S>(9);
        TPipe pipe;
        TQue<TPosition::VECIN, 1> in;
        pipe.InitBuffer(in, 1, 256);
        GlobalTensor<float> g;
        g.SetGlobalBuffer((__gm__ float*)buf, 64);
        LocalTensor<float> a = in.AllocTensor<float>();
        DataCopy(a, g, 64);
        in.EnQue(a);
        a = in.DeQue<float>();
        in.FreeTensor(a);
        CrossCoreSetFlag<1, PIPE_MTE3>(10);
        CrossCoreWaitFlag<1, PIPE_S>(10);
    }
}

int main() {
    return harness::RunRanks(1, [](int, aclrtStream s) {
        float* src = harness::Upload(std::vector<float>(64, 3.0f));
        void* buf = aclshmem_malloc(256);
        HPMOE_EMU_LAUNCH(k, 1, s, (GM_ADDR)src, (GM_ADDR)buf, harness::SyncAddr());
        return aclrtSynchronizeStream(s);
    });
}
