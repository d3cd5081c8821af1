/* Wrong: SetTensorB(b, true) on a Matmul whose B MatmulType has isTrans = false (the SetTensorB
 * page: transposing needs isTrans in the type). Expect matmul_mode. */
#define ASCENDC_CUBE_ONLY
#include "kernel_operator.h"
#include "lib/matmul_intf.h"
#include "tiling/tiling_api.h"
#include "harness.h"

using namespace AscendC;
using F32 = MatmulType<TPosition::GM, CubeFormat::ND, float>;

extern "C" __global__ __aicore__ void k(GM_ADDR a, GM_ADDR b, GM_ADDR c, GM_ADDR tiling) {
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
        ga.SetGlobalBuffer((__gm__ float*)a, 16 * 16);
        gb.SetGlobalBuffer((__gm__ float*)b, 16 * 16);
        gc.SetGlobalBuffer((__gm__ float*)c, 16 * 16);
        mm.SetOrgShape(16, 16, 16);
        mm.SetSingleShape(16, 16, 16);
        mm.SetTensorA(ga);
        mm.SetTensorB(gb, true);
        mm.IterateAll(gc);
        mm.End();
        PipeBarrier<PIPE_ALL>();
    }
}

int main() {
    return harness::RunRanks(1, [&](int, aclrtStream s) {
        matmul_tiling::MultiCoreMatmulTiling mt;
        mt.SetDim(1);
        mt.SetAType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT);
        mt.SetBType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT);
        mt.SetCType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT);
        mt.SetShape(16, 16, 16);
        TCubeTiling t;
        mt.GetTiling(t);
        auto* da = harness::Upload(std::vector<float>(16 * 16, 1.0f));
        auto* db = harness::Upload(std::vector<float>(16 * 16, 1.0f));
        auto* dc = harness::Upload(std::vector<float>(16 * 16, 0.0f));
        auto* dt = harness::Upload(std::vector<TCubeTiling>{t});
        HPMOE_EMU_LAUNCH(k, 1, s, (GM_ADDR)da, (GM_ADDR)db, (GM_ADDR)dc, (GM_ADDR)dt);
        return aclrtSynchronizeStream(s);
    });
}
