/* Correct: each rank's AIV 0 puts its row to the other rank with putmem_signal (data, then an
 * ADD of 1 to the signal word), quiets, waits for the peer's signal and copies the received row
 * to its output with DataCopy (MTE2 in, MTE3 out, ordered by SetFlag/WaitFlag<MTE2_MTE3>). */
#include "kernel_operator.h"
#include "shmem.h"
#include "harness.h"

using namespace AscendC;

extern "C" __global__ __aicore__ void k(GM_ADDR src, GM_ADDR recv, GM_ADDR sig, GM_ADDR out) {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    if (!ASCEND_IS_AIV || GetBlockIdx() != 0) {
        return;
    }
    const int peer = 1 - aclshmem_my_pe();
    aclshmem_putmem_signal(recv, src, 64 * sizeof(float), (__gm__ int32_t*)sig, 1, ACLSHMEM_SIGNAL_ADD, peer);
    aclshmem_quiet();
    aclshmem_signal_wait_until((__gm__ int32_t*)sig, ACLSHMEM_CMP_GE, 1);
    TPipe pipe;
    TQue<TPosition::VECIN, 1> in;
    pipe.InitBuffer(in, 1, 256);
    GlobalTensor<float> g, o;
    g.SetGlobalBuffer((__gm__ float*)recv, 64);
    o.SetGlobalBuffer((__gm__ float*)out, 64);
    LocalTensor<float> a = in.AllocTensor<float>();
    DataCopy(a, g, 64);
    SetFlag<HardEvent::MTE2_MTE3>(0); /* the copy-out reads what the copy-in wrote */
    WaitFlag<HardEvent::MTE2_MTE3>(0);
    DataCopy(o, a, 64);
    PipeBarrier<PIPE_ALL>();
    in.FreeTensor(a);
}

int main() {
    return harness::RunRanks(2, [](int r, aclrtStream s) {
        std::vector<float> mine(64), theirs(64);
        for (int i = 0; i < 64; ++i) {
            mine[i] = r * 100.0f + i;
            theirs[i] = (1 - r) * 100.0f + i;
        }
        float* src = harness::Upload(mine);
        void* recv = aclshmem_malloc(256);
        void* sig = aclshmem_malloc(32);
        aclrtMemset(sig, 32, 0, 32);
        float* out = harness::Upload(std::vector<float>(64, 0.0f));
        HPMOE_EMU_LAUNCH(k, 1, s, (GM_ADDR)src, (GM_ADDR)recv, (GM_ADDR)sig, (GM_ADDR)out);
        const int st = aclrtSynchronizeStream(s);
        harness::Check(r == 0 ? "rank0" : "rank1", harness::Download(out, 64), theirs);
        return st;
    });
}
