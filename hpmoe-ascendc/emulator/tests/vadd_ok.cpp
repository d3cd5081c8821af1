/* A correct AIV kernel: z = x + y (float), 2 blocks, tiles through TQue in/out with DataCopy. */
#include "kernel_operator.h"
#include "harness.h"

using namespace AscendC;

constexpr int32_t kTile = 256;

extern "C" __global__ __aicore__ void vadd(GM_ADDR x, GM_ADDR y, GM_ADDR z, int32_t n) {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    if ASCEND_IS_AIC {
        return;
    }
    TPipe pipe;
    TQue<TPosition::VECIN, 2> in;
    TQue<TPosition::VECOUT, 1> out;
    pipe.InitBuffer(in, 2, kTile * sizeof(float));
    pipe.InitBuffer(out, 1, kTile * sizeof(float));
    GlobalTensor<float> gx, gy, gz;
    gx.SetGlobalBuffer((__gm__ float*)x, n);
    gy.SetGlobalBuffer((__gm__ float*)y, n);
    gz.SetGlobalBuffer((__gm__ float*)z, n);
    const int32_t cores = GetBlockNum() * 2;
    for (int32_t t = GetBlockIdx(); t * kTile < n; t += cores) {
        LocalTensor<float> a = in.AllocTensor<float>();
        LocalTensor<float> b = in.AllocTensor<float>();
        DataCopy(a, gx[t * kTile], kTile);
        DataCopy(b, gy[t * kTile], kTile);
        in.EnQue(a);
        in.EnQue(b);
        a = in.DeQue<float>();
        b = in.DeQue<float>();
        LocalTensor<float> c = out.AllocTensor<float>();
        Add(c, a, b, kTile);
        in.FreeTensor(a);
        in.FreeTensor(b);
        out.EnQue(c);
        c = out.DeQue<float>();
        DataCopy(gz[t * kTile], c, kTile);
        out.FreeTensor(c);
    }
    PipeBarrier<PIPE_ALL>();
}

int main() {
    const int32_t n = 8 * kTile;
    std::vector<float> x(n), y(n), want(n);
    for (int32_t i = 0; i < n; ++i) {
        x[i] = 0.5f * i;
        y[i] = 1.0f / (i + 1);
        want[i] = x[i] + y[i];
    }
    return harness::RunRanks(1, [&](int, aclrtStream s) {
        float* dx = harness::Upload(x);
        float* dy = harness::Upload(y);
        float* dz = harness::Upload(std::vector<float>(n, 0.0f));
        HPMOE_EMU_LAUNCH(vadd, 2, s, (GM_ADDR)dx, (GM_ADDR)dy, (GM_ADDR)dz, n);
        const int st = aclrtSynchronizeStream(s);
        harness::Check("z", harness::Download(dz, n), want);
        return st;
    });
}
