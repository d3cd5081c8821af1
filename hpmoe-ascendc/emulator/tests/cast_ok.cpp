/* Correct: Cast's rounding, bit for bit, against values worked out by hand (ties to even for
 * RINT; FLOOR/CEIL/ROUND/TRUNC; saturation of float -> int8/int32). */
#include "kernel_operator.h"
#include "harness.h"

using namespace AscendC;

template <typename D>
__aicore__ inline void CastOut(TBuf<TPosition::VECCALC>& src, TBuf<TPosition::VECCALC>& dst, GM_ADDR out,
                               RoundMode mode) {
    LocalTensor<float> s = src.Get<float>();
    LocalTensor<D> d = dst.Get<D>();
    Cast(d, s, mode, 16);
    PipeBarrier<PIPE_ALL>();
    GlobalTensor<D> g;
    g.SetGlobalBuffer((__gm__ D*)out, 16);
    DataCopyPad(g, d, DataCopyExtParams(1, 16 * sizeof(D), 0, 0, 0));
    PipeBarrier<PIPE_ALL>();
}

extern "C" __global__ __aicore__ void k(GM_ADDR in, GM_ADDR bf, GM_ADDR hf, GM_ADDR rint, GM_ADDR fl, GM_ADDR ce,
                                        GM_ADDR ro, GM_ADDR tr, GM_ADDR ff, GM_ADDR i8) {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    if (!ASCEND_IS_AIV || GetBlockIdx() != 0) {
        return;
    }
    TPipe pipe;
    TBuf<TPosition::VECCALC> src, dst, h;
    pipe.InitBuffer(src, 64);
    pipe.InitBuffer(dst, 64);
    pipe.InitBuffer(h, 64);
    GlobalTensor<float> g;
    g.SetGlobalBuffer((__gm__ float*)in, 16);
    DataCopy(src.Get<float>(), g, 16);
    PipeBarrier<PIPE_ALL>();
    CastOut<bfloat16_t>(src, dst, bf, RoundMode::CAST_RINT);
    CastOut<half>(src, dst, hf, RoundMode::CAST_NONE);
    CastOut<int32_t>(src, dst, rint, RoundMode::CAST_RINT);
    CastOut<int32_t>(src, dst, fl, RoundMode::CAST_FLOOR);
    CastOut<int32_t>(src, dst, ce, RoundMode::CAST_CEIL);
    CastOut<int32_t>(src, dst, ro, RoundMode::CAST_ROUND);
    CastOut<int32_t>(src, dst, tr, RoundMode::CAST_TRUNC);
    CastOut<float>(src, dst, ff, RoundMode::CAST_RINT);
    /* float -> half -> int8 (TRUNC), as hpmoe's FromFloat<int8_t> does after rounding. */
    LocalTensor<half> hh = h.Get<half>();
    Cast(hh, src.Get<float>(), RoundMode::CAST_NONE, 16);
    PipeBarrier<PIPE_V>();
    LocalTensor<int8_t> q = dst.Get<int8_t>();
    Cast(q, hh, RoundMode::CAST_TRUNC, 16);
    PipeBarrier<PIPE_ALL>();
    GlobalTensor<int8_t> gq;
    gq.SetGlobalBuffer((__gm__ int8_t*)i8, 16);
    DataCopyPad(gq, q, DataCopyExtParams(1, 16, 0, 0, 0));
    PipeBarrier<PIPE_ALL>();
}

int main() {
    const float in[16] = {1.00390625f, 1.01171875f, 2.5f, -2.5f, 3.5f, 4.5f, -2.7f, 2.1f,
                          1.00048828125f, 1.00146484375f, 65520.0f, 200.0f, -3.9f, 0.0f, -0.0f, 1e-8f};
    /* bf16 (RINT): ties to even at 2^-8 steps near 1. */
    const uint16_t bf[16] = {0x3F80, 0x3F82, 0x4020, 0xC020, 0x4060, 0x4090, 0xC02D, 0x4006,
                             0x3F80, 0x3F80, 0x4780, 0x4348, 0xC07A, 0x0000, 0x8000, 0x322C};
    /* half (CAST_NONE = round to nearest even): 65520 overflows to inf; 1e-8 underflows to 0. */
    const uint16_t hf[16] = {0x3C04, 0x3C0C, 0x4100, 0xC100, 0x4300, 0x4480, 0xC166, 0x4033,
                             0x3C00, 0x3C02, 0x7C00, 0x5A40, 0xC3CD, 0x0000, 0x8000, 0x0000};
    const int32_t rint[16] = {1, 1, 2, -2, 4, 4, -3, 2, 1, 1, 65520, 200, -4, 0, 0, 0};
    const int32_t fl[16] = {1, 1, 2, -3, 3, 4, -3, 2, 1, 1, 65520, 200, -4, 0, 0, 0};
    const int32_t ce[16] = {2, 2, 3, -2, 4, 5, -2, 3, 2, 2, 65520, 200, -3, 0, 0, 1};
    const int32_t ro[16] = {1, 1, 3, -3, 4, 5, -3, 2, 1, 1, 65520, 200, -4, 0, 0, 0};
    const int32_t tr[16] = {1, 1, 2, -2, 3, 4, -2, 2, 1, 1, 65520, 200, -3, 0, 0, 0};
    const float ff[16] = {1, 1, 2, -2, 4, 4, -3, 2, 1, 1, 65520, 200, -4, 0, -0.0f, 0};
    /* int8 via half, TRUNC, saturating: inf and 200 -> 127. */
    const int8_t i8[16] = {1, 1, 2, -2, 3, 4, -2, 2, 1, 1, 127, 127, -3, 0, 0, 0};
    return harness::RunRanks(1, [&](int, aclrtStream s) {
        float* din = harness::Upload(std::vector<float>(in, in + 16));
        auto* dbf = harness::Upload(std::vector<uint16_t>(16));
        auto* dhf = harness::Upload(std::vector<uint16_t>(16));
        std::vector<int32_t*> di;
        for (int i = 0; i < 5; ++i) {
            di.push_back(harness::Upload(std::vector<int32_t>(16)));
        }
        float* dff = harness::Upload(std::vector<float>(16));
        int8_t* di8 = harness::Upload(std::vector<int8_t>(16));
        HPMOE_EMU_LAUNCH(k, 1, s, (GM_ADDR)din, (GM_ADDR)dbf, (GM_ADDR)dhf, (GM_ADDR)di[0], (GM_ADDR)di[1], (GM_ADDR)di[2],
                         (GM_ADDR)di[3], (GM_ADDR)di[4], (GM_ADDR)dff, (GM_ADDR)di8);
        const int st = aclrtSynchronizeStream(s);
        harness::Check("bf16_rint", harness::Download(dbf, 16), std::vector<uint16_t>(bf, bf + 16));
        harness::Check("half_none", harness::Download(dhf, 16), std::vector<uint16_t>(hf, hf + 16));
        harness::Check("i32_rint", harness::Download(di[0], 16), std::vector<int32_t>(rint, rint + 16));
        harness::Check("i32_floor", harness::Download(di[1], 16), std::vector<int32_t>(fl, fl + 16));
        harness::Check("i32_ceil", harness::Download(di[2], 16), std::vector<int32_t>(ce, ce + 16));
        harness::Check("i32_round", harness::Download(di[3], 16), std::vector<int32_t>(ro, ro + 16));
        harness::Check("i32_trunc", harness::Download(di[4], 16), std::vector<int32_t>(tr, tr + 16));
        harness::Check("f32_rint", harness::Download(dff, 16), std::vector<float>(ff, ff + 16));
        harness::Check("i8_trunc", harness::Download(di8, 16), std::vector<int8_t>(i8, i8 + 16));
        return st;
    });
}
