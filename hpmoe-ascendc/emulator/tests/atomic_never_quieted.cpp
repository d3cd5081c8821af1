/* Violation: AIV 0 adds 1 to a counter AIV 1 waits for, but never quiets, then waits for AIV 1's
 * answer: the add never lands, both wait forever -> deadlock, with each core's state. */
#include "kernel_operator.h"
#include "shmem.h"
#include "harness.h"

using namespace AscendC;

extern "C" __global__ __aicore__ void k(GM_ADDR counters) {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    if (!ASCEND_IS_AIV) {
        return;
    }
    __gm__ int32_t* c = (__gm__ int32_t*)counters;
    if (GetBlockIdx() == 0) {
        aclshmem_int32_atomic_add(c, 1, aclshmem_my_pe());
        aclshmem_signal_wait_until(c + 8, ACLSHMEM_CMP_GE, 1);
        aclshmem_quiet();
    } else {
        aclshmem_signal_wait_until(c, ACLSHMEM_CMP_GE, 1);
        aclshmemx_signal_op(c + 8, 1, ACLSHMEM_SIGNAL_SET, aclshmem_my_pe());
    }
}

int main() {
    return harness::RunRanks(1, [](int, aclrtStream s) {
        void* c = aclshmem_malloc(64);
        aclrtMemset(c, 64, 0, 64);
        HPMOE_EMU_LAUNCH(k, 1, s, (GM_ADDR)c);
        return aclrtSynchronizeStream(s);
    });
}
