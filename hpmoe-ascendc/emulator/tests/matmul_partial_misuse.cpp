/* Violations of the on-chip sum's pairing rules (lib/matmul_intf.h), one per argument:
 *   no_start     Iterate(enPartialSum = true) with nothing in CO1           -> matmul_misuse
 *   fetch_twice  GetTensorC twice after one Iterate                         -> matmul_misuse
 *   unfetched    Iterate(false) over a block no GetTensorC fetched          -> matmul_misuse
 *   over_base    a single shape wider than the tiling's base block          -> matmul_shape
 *   unaligned    GetTensorC to a C 4 bytes past a 32-byte boundary          -> matmul_unaligned */
#define ASCENDC_CUBE_ONLY
#include <string>

#include "kernel_operator.h"
#include "lib/matmul_intf.h"
#include "tiling/tiling_api.h"
#include "harness.h"

using namespace AscendC;
using F32 = MatmulType<TPosition::GM, CubeFormat::ND, float>;

constexpr int M = 16, N = 32, K = 8;

extern "C" __global__ __aicore__ void k(GM_ADDR a, GM_ADDR b, GM_ADDR c, GM_ADDR tiling, int32_t mode) {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    if ASCEND_IS_AIC {
        TPipe pipe;
        TCubeTiling t;
        const __gm__ int32_t* src = (const __gm__ int32_t*)tiling;
        int32_t* dst = (int32_t*)&t;
        for (size_t i = 0; i < sizeof(t) / 4; ++i) {
            dst[i] = src[i];
        }
        Matmul<F32, F32, F32> mm;
        REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &t);
        GlobalTensor<float> ga, gb, gc;
        ga.SetGlobalBuffer((__gm__ float*)a, M * K);
        gb.SetGlobalBuffer((__gm__ float*)b, K * 2 * N);
        gc.SetGlobalBuffer((__gm__ float*)c + (mode == 4 ? 1 : 0), M * 2 * N);
        mm.SetOrgShape(M, 2 * N, K, K, 2 * N);
        mm.SetSingleShape(M, mode == 3 ? 2 * N : N, K);
        mm.SetTensorA(ga);
        mm.SetTensorB(gb);
        mm.Iterate(mode == 0);
        mm.GetTensorC(gc);
        if (mode == 1) {
            mm.GetTensorC(gc);
        }
        if (mode == 2) {
            mm.SetTensorA(ga);
            mm.SetTensorB(gb);
            mm.Iterate(false);
            mm.SetTensorA(ga);
            mm.SetTensorB(gb);
            mm.Iterate(false);
            mm.GetTensorC(gc);
        }
        mm.End();
        PipeBarrier<PIPE_ALL>();
    }
}

int main(int argc, char** argv) {
    const std::string arg = argc > 1 ? argv[1] : "";
    const int32_t mode = arg == "no_start" ? 0 : arg == "fetch_twice" ? 1 : arg == "unfetched" ? 2 : arg == "over_base" ? 3 : 4;
    return harness::RunRanks(1, [&](int, aclrtStream s) {
        matmul_tiling::MultiCoreMatmulTiling mt;
        mt.SetDim(1);
        mt.SetAType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT);
        mt.SetBType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT);
        mt.SetCType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT);
        mt.SetShape(M, 2 * N, K);
        mt.SetOrgShape(M, 2 * N, K);
        mt.SetFixSplit(M, N, -1); /* the base block of the accumulation: one 16 x 32 block, half of N */
        TCubeTiling t;
        if (mt.GetTiling(t) != 0 || t.baseM != M || t.baseN != N) {
            std::printf("check tiling FAILED\n");
        }
        auto* da = harness::Upload(std::vector<float>(M * K, 1.0f));
        auto* db = harness::Upload(std::vector<float>(K * 2 * N, 1.0f));
        auto* dc = harness::Upload(std::vector<float>(M * 2 * N + 8, 0.0f));
        auto* dt = harness::Upload(std::vector<TCubeTiling>{t});
        HPMOE_EMU_LAUNCH(k, 1, s, (GM_ADDR)da, (GM_ADDR)db, (GM_ADDR)dc, (GM_ADDR)dt, mode);
        return aclrtSynchronizeStream(s);
    });
}
