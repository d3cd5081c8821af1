/* Violation: SetSingleShape(32, ..) with a tiling computed for 16 rows -> matmul_shape. */
#define ASCENDC_CUBE_ONLY
#include "kernel_operator.h"
#include "lib/matmul_intf.h"
#include "tiling/tiling_api.h"
#include "harness.h"

using namespace AscendC;
using F16 = MatmulType<TPosition::GM, CubeFormat::ND, half>;
using F32 = MatmulType<TPosition::GM, CubeFormat::ND, float>;

extern "C" __global__ __aicore__ void k(GM_ADDR tiling) {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    if ASCEND_IS_AIC {
        TPipe pipe;
        TCubeTiling t = *(const __gm__ TCubeTiling*)tiling;
        Matmul<F16, F16, F32> mm;
        REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &t);
        mm.SetOrgShape(32, 32, 32);
        mm.SetSingleShape(32, 32, 32);
        mm.End();
    }
}

int main() {
    return harness::RunRanks(1, [](int, aclrtStream s) {
        matmul_tiling::MultiCoreMatmulTiling mt;
        mt.SetAType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT16);
        mt.SetBType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT16);
        mt.SetCType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT);
        mt.SetShape(16, 32, 32);
        TCubeTiling t;
        mt.GetTiling(t);
        auto* dt = harness::Upload(std::vector<TCubeTiling>{t});
        HPMOE_EMU_LAUNCH(k, 1, s, (GM_ADDR)dt);
        return aclrtSynchronizeStream(s);
    });
}
