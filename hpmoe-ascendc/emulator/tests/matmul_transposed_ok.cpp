/* Correct: transposed operands (MatmulType isTrans, SetTensorA/B(tensor, true)), read as the
 * README's assumption 19 says: C1[16 x 24] = A[16 x 32] * B^T with B stored 24 x 32, its rows 40
 * elements apart (orgKb = 40); C2[16 x 24] = At^T * B2 with At stored 32 x 16, its rows 20 apart
 * (orgM = 20). Both in f32 from +0.0 over k ascending, as the untransposed product. */
#define ASCENDC_CUBE_ONLY
#include "kernel_operator.h"
#include "lib/matmul_intf.h"
#include "tiling/tiling_api.h"
#include "harness.h"

using namespace AscendC;
using F32 = MatmulType<TPosition::GM, CubeFormat::ND, float>;
using F32T = MatmulType<TPosition::GM, CubeFormat::ND, float, true>;

constexpr int M = 16, N = 24, K = 32, LDB = 40, LDA = 20;

extern "C" __global__ __aicore__ void k(GM_ADDR a, GM_ADDR bt, GM_ADDR at, GM_ADDR b, GM_ADDR c1, GM_ADDR c2,
                                        GM_ADDR tiling) {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    if ASCEND_IS_AIC {
        TPipe pipe;
        TCubeTiling t;
        const __gm__ int32_t* src = (const __gm__ int32_t*)tiling;
        int32_t* dst = (int32_t*)&t;
        for (size_t i = 0; i < sizeof(t) / 4; ++i) {
            dst[i] = src[i];
        }
        Matmul<F32, F32T, F32> nt;
        Matmul<F32T, F32, F32> tn;
        REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), nt, &t, tn, &t);
        GlobalTensor<float> ga, gbt, gat, gb, gc1, gc2;
        ga.SetGlobalBuffer((__gm__ float*)a, M * K);
        gbt.SetGlobalBuffer((__gm__ float*)bt, N * LDB);
        gat.SetGlobalBuffer((__gm__ float*)at, K * LDA);
        gb.SetGlobalBuffer((__gm__ float*)b, K * N);
        gc1.SetGlobalBuffer((__gm__ float*)c1, M * N);
        gc2.SetGlobalBuffer((__gm__ float*)c2, M * N);
        nt.SetOrgShape(M, N, K, LDB, N);
        nt.SetSingleShape(M, N, K);
        nt.SetTensorA(ga);
        nt.SetTensorB(gbt, true);
        nt.IterateAll(gc1);
        tn.SetOrgShape(LDA, N, K, K, N);
        tn.SetSingleShape(M, N, K);
        tn.SetTensorA(gat, true);
        tn.SetTensorB(gb);
        tn.IterateAll(gc2);
        nt.End();
        tn.End();
        PipeBarrier<PIPE_ALL>();
    }
}

int main() {
    std::vector<float> a(M * K), bt(N * LDB, 0.0f), at(K * LDA, 0.0f), b(K * N), want1(M * N), want2(M * N);
    for (int i = 0; i < M; ++i) {
        for (int p = 0; p < K; ++p) {
            a[i * K + p] = static_cast<float>((i * 37 + p * 5) % 23) / 7.0f - 1.5f;
            at[p * LDA + i] = static_cast<float>((i * 13 + p * 3) % 19) / 3.0f - 2.75f;
        }
    }
    for (int j = 0; j < N; ++j) {
        for (int p = 0; p < K; ++p) {
            bt[j * LDB + p] = static_cast<float>((j * 11 + p * 7) % 17) / 5.0f - 1.25f;
            b[p * N + j] = static_cast<float>((j * 29 + p) % 13) / 9.0f - 0.5f;
        }
    }
    for (int i = 0; i < M; ++i) {
        for (int j = 0; j < N; ++j) {
            float acc1 = 0.0f, acc2 = 0.0f;
            for (int p = 0; p < K; ++p) {
                const float p1 = a[i * K + p] * bt[j * LDB + p];
                acc1 = acc1 + p1;
                const float p2 = at[p * LDA + i] * b[p * N + j];
                acc2 = acc2 + p2;
            }
            want1[i * N + j] = acc1;
            want2[i * N + j] = acc2;
        }
    }
    return harness::RunRanks(1, [&](int, aclrtStream s) {
        matmul_tiling::MultiCoreMatmulTiling mt;
        mt.SetDim(1);
        mt.SetAType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT, true);
        mt.SetBType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT, true);
        mt.SetCType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT);
        mt.SetShape(M, N, K);
        mt.SetOrgShape(M, N, K);
        TCubeTiling t;
        if (mt.GetTiling(t) != 0) {
            std::printf("check tiling FAILED\n");
        }
        auto* da = harness::Upload(a);
        auto* dbt = harness::Upload(bt);
        auto* dat = harness::Upload(at);
        auto* db = harness::Upload(b);
        auto* dc1 = harness::Upload(std::vector<float>(M * N, 0.0f));
        auto* dc2 = harness::Upload(std::vector<float>(M * N, 0.0f));
        auto* dt = harness::Upload(std::vector<TCubeTiling>{t});
        HPMOE_EMU_LAUNCH(k, 1, s, (GM_ADDR)da, (GM_ADDR)dbt, (GM_ADDR)dat, (GM_ADDR)db, (GM_ADDR)dc1, (GM_ADDR)dc2,
                         (GM_ADDR)dt);
        const int st = aclrtSynchronizeStream(s);
        harness::Check("c1", harness::Download(dc1, M * N), want1);
        harness::Check("c2", harness::Download(dc2, M * N), want2);
        return st;
    });
}
