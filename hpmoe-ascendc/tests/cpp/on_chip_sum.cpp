/* hpmoe's on-chip sum (cube_ops.h: MatmulTnSumStep, MatmulSumAddInto) on the strict emulator, in
 * the shape the natural backward's weight gradient has: an expert's rows are R slots of C rows,
 * slot s holding counts[s] valid rows; one gradient block grad[M x N] (columns n0.. of a wider
 * F32 gradient, zeroed before) gets the sum over the slots' B-row blocks that hold a valid row,
 * in (slot, block) order, of x_blockᵀ · g_block (bf16 x stored rows x M, g rows x N), summed in
 * L0C and added once. The expected value: one fp32 accumulator from +0.0 continued over the
 * blocks that run, rows ascending, added to the zero gradient once (lib/matmul_intf.h's order).
 * Run with `wide`, the block is twice the tiling's base block and the emulator must stop it
 * (matmul_shape: accumulating in L0C needs the single shape to be the base block). */
#define ASCENDC_CUBE_ONLY
#include <string>

#include "kernel_operator.h"
#include "lib/matmul_intf.h"
#include "tiling/tiling_api.h"
#include "harness.h"
#include "hpmoe/cube_ops.h"

using namespace AscendC;
using Bf16T = MatmulType<TPosition::GM, CubeFormat::ND, bfloat16_t, true>;
using Bf16 = MatmulType<TPosition::GM, CubeFormat::ND, bfloat16_t>;
using F32 = MatmulType<TPosition::GM, CubeFormat::ND, float>;

/* x: [R*C, LDX] (gradient rows M of LDX), g: [R*C, LDG], grad: [M, LDG] F32. */
constexpr int R = 3, C = 16, B = 8, M = 16, N = 32, LDX = 48, LDG = 64, N0 = 32;
constexpr int32_t kCounts[R] = {11, 0, 16}; /* blocks run: (0,0) (0,1) (2,0) (2,1) */

extern "C" __global__ __aicore__ void k(GM_ADDR x, GM_ADDR g, GM_ADDR grad, GM_ADDR counts, GM_ADDR tiling,
                                        int32_t wide) {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    if ASCEND_IS_AIC {
        TPipe pipe;
        TCubeTiling t;
        hpmoe::LoadTiling(t, tiling, 0);
        Matmul<Bf16T, Bf16, F32> mm;
        REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &t);
        const uint32_t n = wide ? 2 * N : N, n0 = wide ? 0 : N0;
        const hpmoe::View<float> c(grad, n0, M, n, LDG);
        GlobalTensor<int32_t> gcounts;
        gcounts.SetGlobalBuffer((__gm__ int32_t*)counts, R);
        bool started = false;
        for (uint32_t s = 0; s < R; ++s) {
            const int32_t count = gcounts.GetValue(s);
            for (uint32_t b = 0; b < C / B; ++b) {
                if (!(count > static_cast<int32_t>(b * B))) {
                    continue;
                }
                const int64_t row = static_cast<int64_t>(s) * C + b * B;
                hpmoe::MatmulTnSumStep(mm, hpmoe::View<bfloat16_t>(x, row * LDX, B, M, LDX),
                                       hpmoe::View<bfloat16_t>(g, row * LDG + n0, B, n, LDG), c, started);
                started = true;
            }
        }
        if (started) {
            hpmoe::MatmulSumAddInto(mm, c);
        }
        mm.End();
        PipeBarrier<PIPE_ALL>();
    }
}

int main(int argc, char** argv) {
    const int32_t wide = argc > 1 && std::string(argv[1]) == "wide";
    std::vector<bfloat16_t> x(R * C * LDX), g(R * C * LDG);
    std::vector<float> xf(x.size()), gf(g.size());
    for (size_t i = 0; i < x.size(); ++i) {
        xf[i] = static_cast<float>((i * 37) % 23) / 7.0f - 1.5f;
        x[i] = bfloat16_t(xf[i]);
        xf[i] = static_cast<float>(x[i]);
    }
    for (size_t i = 0; i < g.size(); ++i) {
        gf[i] = static_cast<float>((i * 11) % 17) / 5.0f - 1.25f;
        g[i] = bfloat16_t(gf[i]);
        gf[i] = static_cast<float>(g[i]);
    }
    std::vector<float> want(M * LDG, 0.0f);
    for (int i = 0; i < M; ++i) {
        for (int j = 0; j < N; ++j) {
            float acc = 0.0f;
            for (int s = 0; s < R; ++s) {
                for (int b = 0; b < C / B; ++b) {
                    if (!(kCounts[s] > b * B)) {
                        continue;
                    }
                    for (int p = s * C + b * B; p < s * C + b * B + B; ++p) {
                        const float prod = xf[p * LDX + i] * gf[p * LDG + N0 + j];
                        acc = acc + prod;
                    }
                }
            }
            want[i * LDG + N0 + j] = 0.0f + acc;
        }
    }
    return harness::RunRanks(1, [&](int, aclrtStream s) {
        matmul_tiling::MultiCoreMatmulTiling mt;
        mt.SetDim(1);
        mt.SetAType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, matmul_tiling::DataType::DT_BF16, true);
        mt.SetBType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, matmul_tiling::DataType::DT_BF16);
        mt.SetCType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT);
        mt.SetShape(M, N, B);
        mt.SetOrgShape(M, N, B);
        mt.SetFixSplit(M, N, -1); /* the on-chip sum's base block: the whole gradient block */
        TCubeTiling t;
        if (mt.GetTiling(t) != 0 || t.baseM != M || t.baseN != N) {
            std::printf("check tiling FAILED (base %d x %d)\n", t.baseM, t.baseN);
        }
        if (wide) { /* a tiling whose single shape may be 2N wide, its base block still N */
            t.N = 2 * N;
            t.singleCoreN = 2 * N;
        }
        { /* SetFixSplit's documented refusals: a fixed baseK, and a base block past L0C (256 x 256
           * FP32 accumulators are 256 KiB), past the single shape, or not fractal-aligned. */
            auto refuses = [](int32_t bm, int32_t bn, int32_t bk, int32_t sm, int32_t sn) {
                matmul_tiling::MultiCoreMatmulTiling big;
                big.SetAType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, matmul_tiling::DataType::DT_BF16, true);
                big.SetBType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, matmul_tiling::DataType::DT_BF16);
                big.SetCType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT);
                big.SetShape(sm, sn, 64);
                TCubeTiling bt;
                return big.SetFixSplit(bm, bn, bk) != 0 || big.GetTiling(bt) != 0;
            };
            const bool ok = refuses(16, 32, 16, 16, 32) && refuses(256, 256, -1, 256, 256) && refuses(32, 32, -1, 16, 32) &&
                            refuses(16, 24, -1, 16, 32) && !refuses(128, 256, -1, 128, 256);
            std::printf("check fixsplit %s\n", ok ? "ok" : "FAILED");
        }
        auto* dx = harness::Upload(x);
        auto* dg = harness::Upload(g);
        auto* dgrad = harness::Upload(std::vector<float>(M * LDG, 0.0f));
        auto* dcounts = harness::Upload(std::vector<int32_t>(kCounts, kCounts + R));
        auto* dt = harness::Upload(std::vector<TCubeTiling>{t});
        HPMOE_EMU_LAUNCH(k, 1, s, (GM_ADDR)dx, (GM_ADDR)dg, (GM_ADDR)dgrad, (GM_ADDR)dcounts, (GM_ADDR)dt, wide);
        const int st = aclrtSynchronizeStream(s);
        harness::Check("grad", harness::Download(dgrad, M * LDG), want);
        return st;
    });
}
