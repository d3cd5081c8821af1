/* Correct: the AIC multiplies bf16 A[16 x 32] by B[32 x 48] into bf16 C, whose rows are 64
 * elements apart (SetOrgShape's 5-argument form), with a tiling from matmul_tiling; the bytes
 * must equal the documented fixed order: fp32 products summed over k ascending from +0.0, one
 * round to nearest even at the end. */
#define ASCENDC_CUBE_ONLY
#include "kernel_operator.h"
#include "lib/matmul_intf.h"
#include "tiling/tiling_api.h"
#include "harness.h"

using namespace AscendC;
using Bf16 = MatmulType<TPosition::GM, CubeFormat::ND, bfloat16_t>;

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
        Matmul<Bf16, Bf16, Bf16> mm;
        REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &t);
        mm.SetOrgShape(16, 48, 32, 32, 64);
        mm.SetSingleShape(16, 48, 32);
        GlobalTensor<bfloat16_t> ga, gb, gc;
        ga.SetGlobalBuffer((__gm__ bfloat16_t*)a, 16 * 32);
        gb.SetGlobalBuffer((__gm__ bfloat16_t*)b, 32 * 48);
        gc.SetGlobalBuffer((__gm__ bfloat16_t*)c, 16 * 64);
        mm.SetTensorA(ga);
        mm.SetTensorB(gb);
        mm.IterateAll(gc);
        mm.End();
        PipeBarrier<PIPE_ALL>();
    }
}

static uint16_t Bf16Of(float f) { /* round to nearest even; inputs here are finite */
    uint32_t b;
    std::memcpy(&b, &f, 4);
    return static_cast<uint16_t>((b + 0x7FFF + ((b >> 16) & 1)) >> 16);
}
static float FloatOf(uint16_t h) {
    const uint32_t b = static_cast<uint32_t>(h) << 16;
    float f;
    std::memcpy(&f, &b, 4);
    return f;
}

int main() {
    std::vector<uint16_t> a(16 * 32), b(32 * 48), want(16 * 64, 0);
    for (size_t i = 0; i < a.size(); ++i) {
        a[i] = Bf16Of(static_cast<float>((i * 37) % 23) / 7.0f - 1.5f);
    }
    for (size_t i = 0; i < b.size(); ++i) {
        b[i] = Bf16Of(static_cast<float>((i * 11) % 17) / 5.0f - 1.25f);
    }
    for (int i = 0; i < 16; ++i) {
        for (int j = 0; j < 48; ++j) {
            float acc = 0.0f;
            for (int p = 0; p < 32; ++p) {
                const float prod = FloatOf(a[i * 32 + p]) * FloatOf(b[p * 48 + j]);
                acc = acc + prod;
            }
            want[i * 64 + j] = Bf16Of(acc);
        }
    }
    return harness::RunRanks(1, [&](int, aclrtStream s) {
        matmul_tiling::MultiCoreMatmulTiling mt;
        mt.SetDim(1);
        mt.SetAType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, matmul_tiling::DataType::DT_BF16);
        mt.SetBType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, matmul_tiling::DataType::DT_BF16);
        mt.SetCType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, matmul_tiling::DataType::DT_BF16);
        mt.SetShape(16, 48, 32);
        mt.SetOrgShape(16, 48, 32);
        TCubeTiling t;
        if (mt.GetTiling(t) != 0) {
            std::printf("check tiling FAILED\n");
        }
        auto* da = harness::Upload(a);
        auto* db = harness::Upload(b);
        auto* dc = harness::Upload(std::vector<uint16_t>(16 * 64, 0));
        auto* dt = harness::Upload(std::vector<TCubeTiling>{t});
        HPMOE_EMU_LAUNCH(k, 1, s, (GM_ADDR)da, (GM_ADDR)db, (GM_ADDR)dc, (GM_ADDR)dt);
        const int st = aclrtSynchronizeStream(s);
        harness::Check("c", harness::Download(dc, 16 * 64), want);
        return st;
    });
}
