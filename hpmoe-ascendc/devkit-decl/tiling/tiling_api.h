/* Declaration-only stand-in for CANN's host matmul tiling API (`tiling/tiling_api.h`), the subset
 * hpmoe's host launcher calls: MultiCoreMatmulTiling for A, B, C in global memory (ND), filling the
 * kernel's own TCubeTiling struct (kernel_tiling/kernel_tiling.h), whose bytes the launcher uploads.
 * Written from the public Matmul tiling documentation and samples. Syntax checks only. */
#ifndef HPMOE_DECL_TILING_API_H
#define HPMOE_DECL_TILING_API_H

#include <cstddef>
#include <cstdint>

#include "../kernel_tiling/kernel_tiling.h"
#include "platform/platform_ascendc.h"

namespace matmul_tiling {
enum class TPosition : int32_t { GM, A1, A2, B1, B2, C1, C2, CO1, CO2, VECIN, VECOUT, VECCALC, LCM = VECCALC, SPM, SHM = SPM, TSCM, MAX };
enum class CubeFormat : int32_t { ND = 0, NZ, ZN, ZZ, NN, ND_ALIGN, SCALAR, VECTOR };
enum class DataType : int32_t { DT_FLOAT = 0, DT_FLOAT16 = 1, DT_INT8 = 2, DT_INT32 = 3, DT_BF16 = 27 };

/* Tiling of one matmul over `SetDim` cores (hpmoe uses one: each tile sets its own shapes). */
class MultiCoreMatmulTiling {
public:
    explicit MultiCoreMatmulTiling(const platform_ascendc::PlatformAscendC& ascendcPlatform);
    int32_t SetDim(int32_t dim);
    int32_t SetAType(TPosition pos, CubeFormat type, DataType dataType, bool isTrans = false);
    int32_t SetBType(TPosition pos, CubeFormat type, DataType dataType, bool isTrans = false);
    int32_t SetCType(TPosition pos, CubeFormat type, DataType dataType);
    int32_t SetShape(int32_t m, int32_t n, int32_t k);
    int32_t SetOrgShape(int32_t orgMIn, int32_t orgNIn, int32_t orgKIn);
    int32_t SetBias(bool isBiasIn = false);
    int32_t SetBufferSpace(int32_t l1Size = -1, int32_t l0CSize = -1, int32_t ubSize = -1);
    /* Fixed baseM and baseN (-1: computed); baseK only -1 (the SetFixSplit page). */
    int32_t SetFixSplit(int32_t baseMIn = -1, int32_t baseNIn = -1, int32_t baseKIn = -1);
    /* Fills the kernel-side TCubeTiling; 0 on success, -1 when no tiling fits. */
    int64_t GetTiling(TCubeTiling& tiling);
};
}  // namespace matmul_tiling

#endif /* HPMOE_DECL_TILING_API_H */
