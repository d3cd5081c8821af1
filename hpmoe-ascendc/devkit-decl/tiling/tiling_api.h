/* Declaration-only stand-in for CANN's host matmul tiling API (`tiling/tiling_api.h`), the subset
 * hpmoe's host launcher calls: a single-core MatmulApiTiling for A, B, C in global memory (ND), and
 * the host form of TCubeTiling, which is saved as the bytes of the kernel's TCubeTiling argument.
 * Written from the public Matmul tiling documentation and samples. Syntax checks only. */
#ifndef HPMOE_DECL_TILING_API_H
#define HPMOE_DECL_TILING_API_H

#include <cstddef>
#include <cstdint>

#include "platform/platform_ascendc.h"

namespace optiling {
/* Host-side tiling data; SaveToBuffer writes the layout the kernel's TCubeTiling reads. */
class TCubeTiling {
public:
    size_t GetDataSize() const;
    void SaveToBuffer(void* buffer, size_t size);
};
}  // namespace optiling

namespace matmul_tiling {
enum class TPosition : int32_t { GM, A1, A2, B1, B2, C1, C2, CO1, CO2, VECIN, VECOUT, VECCALC, LCM = VECCALC, SPM, SHM = SPM, TSCM, MAX };
enum class CubeFormat : int32_t { ND = 0, NZ, ZN, ZZ, NN, ND_ALIGN, SCALAR, VECTOR };
enum class DataType : int32_t { DT_FLOAT = 0, DT_FLOAT16 = 1, DT_INT8 = 2, DT_INT32 = 3, DT_BF16 = 27 };

/* Tiling of one matmul on one core. */
class MatmulApiTiling {
public:
    explicit MatmulApiTiling(const platform_ascendc::PlatformAscendC& ascendcPlatform);
    int32_t SetAType(TPosition pos, CubeFormat type, DataType dataType, bool isTrans = false);
    int32_t SetBType(TPosition pos, CubeFormat type, DataType dataType, bool isTrans = false);
    int32_t SetCType(TPosition pos, CubeFormat type, DataType dataType);
    int32_t SetShape(int32_t m, int32_t n, int32_t k);
    int32_t SetOrgShape(int32_t orgMIn, int32_t orgNIn, int32_t orgKIn);
    int32_t SetBias(bool isBiasIn = false);
    int32_t SetBufferSpace(int32_t l1Size = -1, int32_t l0CSize = -1, int32_t ubSize = -1);
    /* 0 on success, -1 when no tiling fits. */
    int64_t GetTiling(optiling::TCubeTiling& tiling);
};
}  // namespace matmul_tiling

#endif /* HPMOE_DECL_TILING_API_H */
