/* Violation: rank 0's AIV puts (nbi) into rank 1's buffer and signals rank 1 before a quiet or
 * fence: the signal could arrive before the data -> signal_before_quiet. */
#include "kernel_operator.h"
#include "shmem.h"
#include "harness.h"

using namespace AscendC;

extern "C" __global__ __aicore__ void k(GM_ADDR src, GM_ADDR buf, GM_ADDR sig) {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    if (!ASCEND_IS_AIV || GetBlockIdx() != 0) {
        return;
    }
    if (aclshmem_my_pe() == 0) {
        aclshmem_putmem_nbi(buf, src, 256, 1);
        aclshmemx_signal_op((__gm__ int32_t*)sig, 1, ACLSHMEM_SIGNAL_SET, 1);
        aclshmem_quiet();
    } else {
        aclshmem_signal_wait_until((__gm__ int32_t*)sig, ACLSHMEM_CMP_EQ, 1);
    }
}

int main() {
    return harness::RunRanks(2, [](int, aclrtStream s) {
        float* src = harness::Upload(std::vector<float>(64, 3.0f));
        void* buf = aclshmem_malloc(256);
        void* sig = aclshmem_malloc(32);
        aclrtMemset(sig, 32, 0, 32);
        HPMOE_EMU_LAUNCH(k, 1, s, (GM_ADDR)src, (GM_ADDR)buf, (GM_ADDR)sig);
        return aclrtSynchronizeStream(s);
    });
}
