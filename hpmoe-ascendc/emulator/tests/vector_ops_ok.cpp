/* Correct: every level-2 vector op on 64 floats against the same fp32 operation on the host
 * (each op's own result, so a swapped or mis-wired op fails), and half arithmetic rounded once. */
#include <cmath>

#include "kernel_operator.h"
#include "harness.h"

using namespace AscendC;

constexpr int N = 64;
constexpr int kOps = 16;

extern "C" __global__ __aicore__ void k(GM_ADDR x, GM_ADDR y, GM_ADDR out, GM_ADDR hx, GM_ADDR hout) {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    if (!ASCEND_IS_AIV || GetBlockIdx() != 0) {
        return;
    }
    TPipe pipe;
    TBuf<TPosition::VECCALC> bx, by, bo, bw, bh, bho;
    pipe.InitBuffer(bx, N * 4);
    pipe.InitBuffer(by, N * 4);
    pipe.InitBuffer(bo, kOps * N * 4);
    pipe.InitBuffer(bw, 256);
    pipe.InitBuffer(bh, N * 2);
    pipe.InitBuffer(bho, N * 2);
    GlobalTensor<float> gx, gy, go;
    gx.SetGlobalBuffer((__gm__ float*)x, N);
    gy.SetGlobalBuffer((__gm__ float*)y, N);
    go.SetGlobalBuffer((__gm__ float*)out, kOps * N);
    LocalTensor<float> a = bx.Get<float>(), b = by.Get<float>(), o = bo.Get<float>(), w = bw.Get<float>();
    DataCopy(a, gx, N);
    DataCopy(b, gy, N);
    GlobalTensor<half> ghx, gho;
    ghx.SetGlobalBuffer((__gm__ half*)hx, N);
    gho.SetGlobalBuffer((__gm__ half*)hout, N);
    LocalTensor<half> h = bh.Get<half>(), ho = bho.Get<half>();
    DataCopy(h, ghx, N);
    PipeBarrier<PIPE_ALL>();
    Add(o[0 * N], a, b, N);
    Sub(o[1 * N], a, b, N);
    Mul(o[2 * N], a, b, N);
    Div(o[3 * N], a, b, N);
    Max(o[4 * N], a, b, N);
    Min(o[5 * N], a, b, N);
    Exp(o[6 * N], a, N);
    Abs(o[7 * N], a, N);
    Reciprocal(o[8 * N], b, N);
    Sqrt(o[9 * N], b, N);
    Muls(o[10 * N], a, 1.5f, N);
    Adds(o[11 * N], a, -0.25f, N);
    Maxs(o[12 * N], a, 0.0f, N);
    Mins(o[13 * N], a, 0.5f, N);
    Duplicate(o[14 * N], 0.0f, N);
    Duplicate(o[15 * N], 0.0f, N);
    PipeBarrier<PIPE_V>();
    ReduceMax(o[14 * N], a, w, N);
    ReduceSum(o[15 * N], a, w, N);
    Mul(ho, h, h, N);
    PipeBarrier<PIPE_ALL>();
    DataCopy(go, o, kOps * N);
    DataCopy(gho, ho, N);
    PipeBarrier<PIPE_ALL>();
}

static uint16_t HalfBits(float f) { return half(f).bits; }

int main() {
    std::vector<float> x(N), y(N), want(kOps * N, 0.0f);
    std::vector<half> hx(N);
    std::vector<uint16_t> hwant(N);
    for (int i = 0; i < N; ++i) {
        x[i] = std::sin(0.37f * i) * 3.0f;
        y[i] = 0.5f + std::cos(0.11f * i) * 0.25f + i / 16.0f;
        hx[i] = half(x[i]);
        const float hv = static_cast<float>(hx[i]);
        hwant[i] = HalfBits(hv * hv);
    }
    float mx = x[0], sum = 0.0f;
    for (int i = 0; i < N; ++i) {
        want[0 * N + i] = x[i] + y[i];
        want[1 * N + i] = x[i] - y[i];
        want[2 * N + i] = x[i] * y[i];
        want[3 * N + i] = x[i] / y[i];
        want[4 * N + i] = x[i] > y[i] ? x[i] : y[i];
        want[5 * N + i] = x[i] < y[i] ? x[i] : y[i];
        want[6 * N + i] = std::exp(x[i]);
        want[7 * N + i] = std::fabs(x[i]);
        want[8 * N + i] = 1.0f / y[i];
        want[9 * N + i] = std::sqrt(y[i]);
        want[10 * N + i] = x[i] * 1.5f;
        want[11 * N + i] = x[i] + -0.25f;
        want[12 * N + i] = x[i] > 0.0f ? x[i] : 0.0f;
        want[13 * N + i] = x[i] < 0.5f ? x[i] : 0.5f;
        mx = x[i] > mx ? x[i] : mx;
        sum = sum + x[i];
    }
    want[14 * N] = mx; /* the rest of the row keeps Duplicate's 0 */
    want[15 * N] = sum;
    return harness::RunRanks(1, [&](int, aclrtStream s) {
        auto* dx = harness::Upload(x);
        auto* dy = harness::Upload(y);
        auto* dout = harness::Upload(std::vector<float>(kOps * N, 0.0f));
        auto* dhx = harness::Upload(hx);
        auto* dho = harness::Upload(std::vector<uint16_t>(N, 0));
        HPMOE_EMU_LAUNCH(k, 1, s, (GM_ADDR)dx, (GM_ADDR)dy, (GM_ADDR)dout, (GM_ADDR)dhx, (GM_ADDR)dho);
        const int st = aclrtSynchronizeStream(s);
        std::vector<float> got = harness::Download(dout, kOps * N);
        for (int op = 0; op < kOps; ++op) {
            std::vector<float> g(got.begin() + op * N, got.begin() + (op + 1) * N);
            std::vector<float> w(want.begin() + op * N, want.begin() + (op + 1) * N);
            if (op == 15) {
                g.resize(1);
                w.resize(1);
            }
            const std::string name = "op" + std::to_string(op);
            harness::Check(name.c_str(), g, w);
        }
        harness::Check("half_mul", harness::Download(dho, N), hwant);
        return st;
    });
}
