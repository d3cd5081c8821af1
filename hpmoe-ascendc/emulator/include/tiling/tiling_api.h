/* hpmoe AscendC emulator: the host-side Matmul tiling API subset (`tiling/tiling_api.h`,
 * namespace matmul_tiling) a launcher uses to fill the kernel's TCubeTiling.
 *
 * The emulator's MultiCoreMatmulTiling computes a tiling the emulated Matmul accepts: the whole
 * SetShape problem on one core (usedCoreNum = 1; the hpmoe kernels set each tile's single shape
 * themselves), base blocks of at most 128 x 256 x 64 shrunk until L0A/L0B (64 KiB, double
 * buffered), L0C (128 KiB) and L1 (two stages of A and B) fit the buffer space (baseM/baseN as
 * SetFixSplit fixed them, only baseK shrinking). It is not CANN's
 * algorithm: a tiling from the real API may differ in base sizes and core split. */
#ifndef HPMOE_EMU_TILING_API_H
#define HPMOE_EMU_TILING_API_H

#include <cstdint>

#include "../kernel_tiling/kernel_tiling.h"

namespace matmul_tiling {

enum class TPosition : int32_t { GM, A1, A2, B1, B2, C1, C2, CO1, CO2, VECIN, VECOUT, VECCALC, LCM = VECCALC, SPM, SHM = SPM, TSCM, MAX };
enum class CubeFormat : int32_t { ND = 0, NZ, ZN, ZZ, NN, ND_ALIGN, SCALAR, VECTOR };
enum class DataType : int32_t {
    DT_FLOAT = 0,
    DT_FLOAT16 = 1,
    DT_INT8 = 2,
    DT_INT32 = 3,
    DT_UINT8 = 4,
    DT_INT16 = 6,
    DT_BF16 = 27,
};

class MultiCoreMatmulTiling {
public:
    MultiCoreMatmulTiling() = default;
    /* The real constructor takes the platform information; any argument is accepted here. */
    template <typename Platform>
    explicit MultiCoreMatmulTiling(const Platform&) {}

    int32_t SetDim(int32_t dim);
    int32_t SetAType(TPosition pos, CubeFormat format, DataType type, bool isTrans = false);
    int32_t SetBType(TPosition pos, CubeFormat format, DataType type, bool isTrans = false);
    int32_t SetCType(TPosition pos, CubeFormat format, DataType type);
    int32_t SetBiasType(TPosition pos, CubeFormat format, DataType type);
    int32_t SetShape(int32_t m, int32_t n, int32_t k);
    int32_t SetOrgShape(int32_t m, int32_t n, int32_t k);
    int32_t SetOrgShape(int32_t m, int32_t n, int32_t ka, int32_t kb);
    int32_t SetSingleShape(int32_t m = -1, int32_t n = -1, int32_t k = -1);
    int32_t SetBias(bool bias = false);
    int32_t SetBufferSpace(int32_t l1 = -1, int32_t l0c = -1, int32_t ub = -1, int32_t bt = -1);
    /* Fixes baseM and baseN (elements; -1: computed). The SetFixSplit page: baseK can only be -1
     * (else -1 is returned); GetTiling fails when baseM * baseN FP32 accumulators exceed L0C,
     * baseM exceeds the single M rounded up to 16, baseN the single N rounded up to C0 (16 for
     * half/bf16 C, 8 for float, 32 for int8), or a fixed size is not a multiple of 16 (fractal
     * alignment; for baseN the emulator's strict choice). What an on-chip sum needs: base block
     * == single shape. */
    int32_t SetFixSplit(int32_t baseM = -1, int32_t baseN = -1, int32_t baseK = -1);
    /* Fills `tiling`; -1 if the shape or types are unset or nothing fits. */
    int64_t GetTiling(AscendC::tiling::TCubeTiling& tiling);

private:
    int32_t dim_ = 1;
    DataType a_ = DataType::DT_FLOAT16, b_ = DataType::DT_FLOAT16, c_ = DataType::DT_FLOAT;
    bool types_ = false;
    bool trans_a_ = false, trans_b_ = false;
    int32_t m_ = -1, n_ = -1, k_ = -1;
    int32_t org_m_ = -1, org_n_ = -1, org_ka_ = -1, org_kb_ = -1;
    int32_t single_m_ = -1, single_n_ = -1, single_k_ = -1;
    bool bias_ = false;
    int32_t l1_ = 512 * 1024, l0c_ = 128 * 1024;
    int32_t fix_m_ = -1, fix_n_ = -1;
};

}  // namespace matmul_tiling

#endif /* HPMOE_EMU_TILING_API_H */
