/* hpmoe AscendC emulator: `kernel_tiling/kernel_tiling.h`, the same struct as hpmoe's declaration
 * header (devkit-decl/kernel_tiling) so a tiling written by either is read the same; the emulator
 * reads M/N/Ka/Kb, singleCore*, base*, depth*, step* and dbL0* (src/matmul.cpp). */
#ifndef HPMOE_EMU_KERNEL_TILING_H
#define HPMOE_EMU_KERNEL_TILING_H

#include <cstdint>

namespace AscendC {
namespace tiling {
/* Matmul tiling, computed on the host (matmul_tiling::MatmulApiTiling::GetTiling) and read by
 * the kernel. */
struct TCubeTiling {
    int32_t usedCoreNum;
    int32_t M;
    int32_t N;
    int32_t Ka;
    int32_t Kb;
    int32_t singleCoreM;
    int32_t singleCoreN;
    int32_t singleCoreK;
    int32_t baseM;
    int32_t baseN;
    int32_t baseK;
    int32_t depthA1;
    int32_t depthB1;
    int32_t stepM;
    int32_t stepN;
    int32_t isBias;
    int32_t transLength;
    int32_t iterateOrder;
    int32_t shareMode;
    int32_t shareL1Size;
    int32_t shareL0CSize;
    int32_t shareUbSize;
    int32_t batchM;
    int32_t batchN;
    int32_t singleBatchM;
    int32_t singleBatchN;
    int32_t stepKa;
    int32_t stepKb;
    int32_t depthAL1CacheUB;
    int32_t depthBL1CacheUB;
    int32_t dbL0A;
    int32_t dbL0B;
    int32_t dbL0C;
    int32_t ALayoutInfoB;
    int32_t ALayoutInfoS;
    int32_t ALayoutInfoN;
    int32_t ALayoutInfoG;
    int32_t ALayoutInfoD;
    int32_t BLayoutInfoB;
    int32_t BLayoutInfoS;
    int32_t BLayoutInfoN;
    int32_t BLayoutInfoG;
    int32_t BLayoutInfoD;
    int32_t CLayoutInfoB;
    int32_t CLayoutInfoS1;
    int32_t CLayoutInfoN;
    int32_t CLayoutInfoG;
    int32_t CLayoutInfoS2;
    int32_t BatchNum;
    int32_t reserved;
};
}  // namespace tiling
}  // namespace AscendC
/* Also reachable without the namespaces. */
using TCubeTiling = AscendC::tiling::TCubeTiling;

#endif /* HPMOE_EMU_KERNEL_TILING_H */
