/* Violation: AIV 0 overwrites the source of an aclshmem_putmem_nbi (a DataCopy into it) before
 * its aclshmem_quiet -> nbi_source_modified (at the copy; a change by a raw store is caught at the quiet). */
#include "kernel_operator.h"
#include "shmem.h"
#include "harness.h"

using namespace AscendC;

extern "C" __global__ __aicore__ void k(GM_ADDR src, GM_ADDR dst) {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    if (!ASCEND_IS_AIV || GetBlockIdx() != 0) {
        return;
    }
    aclshmem_putmem_nbi(dst, src, 256, 1 - aclshmem_my_pe());
    TPipe pipe;
    TQue<TPosition::VECOUT, 1> out;
    pipe.InitBuffer(out, 1, 256);
    GlobalTensor<float> g;
    g.SetGlobalBuffer((__gm__ float*)src, 64);
    LocalTensor<float> b = out.AllocTensor<float>();
    Duplicate(b, 9.0f, 64);
    out.EnQue(b);
    b = out.DeQue<float>();
    DataCopy(g, b, 64);
    out.FreeTensor(b);
    PipeBarrier<PIPE_ALL>();
    aclshmem_quiet();
}

int main() {
    return harness::RunRanks(2, [](int, aclrtStream s) {
        float* src = harness::Upload(std::vector<float>(64, 1.0f));
        void* dst = aclshmem_malloc(256);
        HPMOE_EMU_LAUNCH(k, 1, s, (GM_ADDR)src, (GM_ADDR)dst);
        return aclrtSynchronizeStream(s);
    });
}
