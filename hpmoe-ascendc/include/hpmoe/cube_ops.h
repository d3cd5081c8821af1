/* hpmoe device runtime: matmul tiles on the AIC, through the Matmul high-level API.
 *
 * The kernel drives one Matmul object per combination of element types (compiled with
 * ASCENDC_CUBE_ONLY, so the AIC runs its own matmuls rather than a server loop for AIV
 * clients). Each group's TCubeTiling is computed on the host for the group's largest tile and
 * passed in the kernel's `tiling` argument, one after the other in group order; every tile then
 * sets its own original and single-core shapes, so a tile may be smaller than the tiling's. */
#ifndef HPMOE_CUBE_OPS_H
#define HPMOE_CUBE_OPS_H

#include "config.h"
#include "view.h"

namespace hpmoe {

/* Copies tiling number `index` of the `tiling` argument into `dst`. */
template <typename TilingT>
HPMOE_FN void LoadTiling(TilingT& dst, GM_ADDR tiling, uint32_t index) {
    static_assert(sizeof(TilingT) % sizeof(int32_t) == 0, "a tiling struct is made of 32-bit words");
    __gm__ const int32_t* src = reinterpret_cast<__gm__ const int32_t*>(tiling + index * sizeof(TilingT));
    int32_t* out = reinterpret_cast<int32_t*>(&dst);
    for (uint32_t i = 0; i < sizeof(TilingT) / sizeof(int32_t); ++i) {
        out[i] = src[i];
    }
}

/* c[M, N] = a[M, K] * b[K, N], FP32 accumulation, rounded once into c's type. The regions are
 * strided matrices: the original shapes tell the API each one's row stride. */
template <class MM, typename A, typename B, typename C>
HPMOE_FN void MatmulTile(MM& mm, const View<A>& a, const View<B>& b, const View<C>& c) {
    /* orgM, orgN (B's row stride), orgKa (A's row stride), orgKb (B's rows), orgKc (C's row stride). */
    mm.SetOrgShape(static_cast<int>(a.rows), static_cast<int>(b.ld), static_cast<int>(a.ld), static_cast<int>(b.rows),
                   static_cast<int>(c.ld));
    mm.SetSingleShape(static_cast<int>(c.rows), static_cast<int>(c.cols), static_cast<int>(a.cols));
    AscendC::GlobalTensor<A> ga;
    ga.SetGlobalBuffer(a.At(0, 0));
    AscendC::GlobalTensor<B> gb;
    gb.SetGlobalBuffer(b.At(0, 0));
    AscendC::GlobalTensor<C> gc;
    gc.SetGlobalBuffer(c.At(0, 0));
    mm.SetTensorA(ga);
    mm.SetTensorB(gb);
    mm.IterateAll(gc);
}

}  // namespace hpmoe

#endif /* HPMOE_CUBE_OPS_H */
