/* Correct: one gradient block summed on chip over guarded row blocks, written once.
 * C[M x N] (16 x 32) += sum over the blocks r with count > r * B of A_r^T * B_r, where A_r is rows
 * r*B .. of A (stored K x M, isTrans) and B_r the same rows of B: Iterate(false) for the first
 * block that runs, Iterate(true) for each later one, then GetTensorC(c, 1) once (AtomicAdd into
 * an FP32 C that starts at 0.5). With count = 2*B + 3 blocks 0, 1, 2 run and block 3 is skipped.
 * The expected value continues one fp32 accumulator over the blocks' products, rows ascending
 * (lib/matmul_intf.h), then adds it to C once. A second C, written with enAtomic = 0 from a
 * chain of one block, checks the plain write. */
#define ASCENDC_CUBE_ONLY
#include "kernel_operator.h"
#include "lib/matmul_intf.h"
#include "tiling/tiling_api.h"
#include "harness.h"

using namespace AscendC;
using F32 = MatmulType<TPosition::GM, CubeFormat::ND, float>;
using F32T = MatmulType<TPosition::GM, CubeFormat::ND, float, true>;

constexpr int M = 16, N = 32, B = 8, BLOCKS = 4, ROWS = B * BLOCKS, COUNT = 2 * B + 3;

extern "C" __global__ __aicore__ void k(GM_ADDR a, GM_ADDR b, GM_ADDR c, GM_ADDR c1, GM_ADDR tiling) {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    if ASCEND_IS_AIC {
        TPipe pipe;
        TCubeTiling t;
        const __gm__ int32_t* src = (const __gm__ int32_t*)tiling;
        int32_t* dst = (int32_t*)&t;
        for (size_t i = 0; i < sizeof(t) / 4; ++i) {
            dst[i] = src[i];
        }
        Matmul<F32T, F32, F32> tn;
        REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), tn, &t);
        GlobalTensor<float> gc, gc1;
        gc.SetGlobalBuffer((__gm__ float*)c, M * N);
        gc1.SetGlobalBuffer((__gm__ float*)c1, M * N);
        bool started = false;
        for (int r = 0; r < BLOCKS; ++r) {
            if (!(COUNT > r * B)) {
                continue;
            }
            GlobalTensor<float> ga, gb;
            ga.SetGlobalBuffer((__gm__ float*)a + r * B * M, B * M);
            gb.SetGlobalBuffer((__gm__ float*)b + r * B * N, B * N);
            tn.SetOrgShape(M, N, B, B, N);
            tn.SetSingleShape(M, N, B);
            tn.SetTensorA(ga, true);
            tn.SetTensorB(gb);
            tn.Iterate(started);
            started = true;
        }
        if (started) {
            tn.GetTensorC(gc, 1);
        }
        GlobalTensor<float> ga, gb;
        ga.SetGlobalBuffer((__gm__ float*)a, B * M);
        gb.SetGlobalBuffer((__gm__ float*)b, B * N);
        tn.SetOrgShape(M, N, B, B, N);
        tn.SetSingleShape(M, N, B);
        tn.SetTensorA(ga, true);
        tn.SetTensorB(gb);
        tn.Iterate(false);
        tn.GetTensorC(gc1);
        tn.End();
        PipeBarrier<PIPE_ALL>();
    }
}

int main() {
    std::vector<float> a(ROWS * M), b(ROWS * N), c(M * N, 0.5f), want(M * N), want1(M * N);
    for (int p = 0; p < ROWS; ++p) {
        for (int i = 0; i < M; ++i) {
            a[p * M + i] = static_cast<float>((i * 13 + p * 3) % 19) / 3.0f - 2.75f;
        }
        for (int j = 0; j < N; ++j) {
            b[p * N + j] = static_cast<float>((j * 29 + p * 7) % 13) / 9.0f - 0.5f;
        }
    }
    const int run_rows = ((COUNT + B - 1) / B) * B;
    for (int i = 0; i < M; ++i) {
        for (int j = 0; j < N; ++j) {
            float acc = 0.0f, acc1 = 0.0f;
            for (int p = 0; p < run_rows; ++p) {
                const float prod = a[p * M + i] * b[p * N + j];
                acc = acc + prod;
                if (p < B) {
                    acc1 = acc1 + prod;
                }
            }
            want[i * N + j] = c[i * N + j] + acc;
            want1[i * N + j] = acc1;
        }
    }
    return harness::RunRanks(1, [&](int, aclrtStream s) {
        matmul_tiling::MultiCoreMatmulTiling mt;
        mt.SetDim(1);
        mt.SetAType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT, true);
        mt.SetBType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT);
        mt.SetCType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT);
        mt.SetShape(M, N, B);
        mt.SetOrgShape(M, N, B);
        TCubeTiling t;
        if (mt.GetTiling(t) != 0 || t.baseM != M || t.baseN != N) {
            std::printf("check tiling FAILED (base %d x %d)\n", t.baseM, t.baseN);
        }
        auto* da = harness::Upload(a);
        auto* db = harness::Upload(b);
        auto* dc = harness::Upload(c);
        auto* dc1 = harness::Upload(std::vector<float>(M * N, 7.0f));
        auto* dt = harness::Upload(std::vector<TCubeTiling>{t});
        HPMOE_EMU_LAUNCH(k, 1, s, (GM_ADDR)da, (GM_ADDR)db, (GM_ADDR)dc, (GM_ADDR)dc1, (GM_ADDR)dt);
        const int st = aclrtSynchronizeStream(s);
        harness::Check("c", harness::Download(dc, M * N), want);
        harness::Check("c1", harness::Download(dc1, M * N), want1);
        return st;
    });
}
