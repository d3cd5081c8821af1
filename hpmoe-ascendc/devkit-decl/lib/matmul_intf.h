/* Declaration-only stand-in for the Matmul high-level API (`lib/matmul_intf.h`); see
 * ../kernel_operator.h for what these headers are and are not.
 *
 * Rules encoded as static_asserts:
 *  - A and B have the same element type (half, bfloat16_t, float or int8_t), and C is wider or
 *    equal (the cube accumulates in FP32 / INT32 and Fixpipe converts on the way out);
 *  - REGIST_MATMUL_OBJ takes a TPipe*, the system workspace, then (Matmul object, TCubeTiling*)
 *    pairs.
 * In a mixed kernel, REGIST_MATMUL_OBJ on the AIC runs the matmul server loop unless the cube
 * side is compiled with ASCENDC_CUBE_ONLY, in which case the AIC drives its own matmuls. */
#ifndef HPMOE_DECL_MATMUL_INTF_H
#define HPMOE_DECL_MATMUL_INTF_H

#include <type_traits>

#include "../kernel_operator.h"
#include "../kernel_tiling/kernel_tiling.h"

/* Global namespace, as in the devkit. */
enum class CubeFormat : uint8_t { ND = 0, NZ, ZN, ZZ, NN, ND_ALIGN, SCALAR, VECTOR };
enum class LayoutMode : uint8_t { NONE = 0, BSNGD, SBNGD, BNGS1S2, NORMAL };
struct MatmulConfig {
    bool doNorm;
    bool doBasicBlock;
    bool doMultiDataLoad;
    uint32_t basicM;
    uint32_t basicN;
    uint32_t basicK;
    bool intrinsicsCheck;
    bool isNBatch;
    bool enVecND2NZ;
    bool doSpecialBasicBlock;
    uint32_t doMTE2Preload;
};
constexpr MatmulConfig CFG_NORM = {true, false, false, 0, 0, 0, false, false, false, false, 0};
constexpr MatmulConfig CFG_MDL = {false, false, true, 0, 0, 0, false, false, false, false, 0};

namespace AscendC {

template <TPosition POSITION, CubeFormat FORMAT, typename TYPE, bool ISTRANS = false,
          LayoutMode LAYOUT = LayoutMode::NONE, bool IBSHARE = false>
struct MatmulType {
    constexpr static TPosition pos = POSITION;
    constexpr static CubeFormat format = FORMAT;
    using T = TYPE;
    constexpr static bool isTrans = ISTRANS;
    constexpr static LayoutMode layout = LAYOUT;
    constexpr static bool ibShare = IBSHARE;
};

template <auto DataCopyOut = nullptr, auto CopyA1 = nullptr, auto CopyB1 = nullptr>
struct MatmulCallBackFunc {};

namespace decl_detail {
template <typename T>
constexpr bool IsCubeInput() {
    return std::is_same<T, half>::value || std::is_same<T, bfloat16_t>::value || std::is_same<T, float>::value ||
           std::is_same<T, int8_t>::value;
}
}  // namespace decl_detail

template <class A_TYPE, class B_TYPE, class C_TYPE, class BIAS_TYPE = C_TYPE, const auto& MM_CFG = CFG_NORM,
          class MM_CB = MatmulCallBackFunc<nullptr, nullptr, nullptr>>
class MatmulImpl {
    using SrcAT = typename A_TYPE::T;
    using SrcBT = typename B_TYPE::T;
    using DstT = typename C_TYPE::T;
    using BiasT = typename BIAS_TYPE::T;
    static_assert(decl_detail::IsCubeInput<SrcAT>(), "Matmul: A must be half, bfloat16_t, float or int8_t");
    static_assert(std::is_same<SrcAT, SrcBT>::value, "Matmul: A and B must have the same element type");
    static_assert(std::is_same<SrcAT, int8_t>::value ? (std::is_same<DstT, int32_t>::value || std::is_same<DstT, half>::value ||
                                                        std::is_same<DstT, int8_t>::value)
                                                     : (std::is_same<DstT, float>::value || std::is_same<DstT, SrcAT>::value),
                  "Matmul: C must be float or A's type (int32, half or int8 for int8 inputs)");

public:
    __aicore__ MatmulImpl() {}
    __aicore__ void Init(const TCubeTiling*, TPipe* = nullptr) {}
    __aicore__ void SetOrgShape(int, int, int) {}
    __aicore__ void SetOrgShape(int, int, int, int, int = 0) {}
    __aicore__ void SetSingleShape(int, int, int) {}
    __aicore__ void SetTail(int = -1, int = -1, int = -1) {}
    __aicore__ void SetTensorA(const GlobalTensor<SrcAT>&, bool = false) {}
    __aicore__ void SetTensorB(const GlobalTensor<SrcBT>&, bool = false) {}
    __aicore__ void SetBias(const GlobalTensor<BiasT>&) {}
    __aicore__ void ClearBias() {}
    template <bool sync = true>
    __aicore__ bool Iterate(bool = false) {
        return false;
    }
    template <bool sync = true>
    __aicore__ void IterateAll(const GlobalTensor<DstT>&, uint8_t = 0, bool = false, bool = false, bool = false) {}
    template <bool sync = true>
    __aicore__ void GetTensorC(const GlobalTensor<DstT>&, uint8_t = 0, bool = false) {}
    __aicore__ void End() {}
};

template <class A_TYPE, class B_TYPE, class C_TYPE, class BIAS_TYPE = C_TYPE, const auto& MM_CFG = CFG_NORM,
          class MM_CB = MatmulCallBackFunc<nullptr, nullptr, nullptr>>
using Matmul = MatmulImpl<A_TYPE, B_TYPE, C_TYPE, BIAS_TYPE, MM_CFG, MM_CB>;

namespace decl_detail {
template <typename T>
struct IsMatmul : std::false_type {};
template <class A, class B, class C, class Bias, const auto& CFG, class CB>
struct IsMatmul<MatmulImpl<A, B, C, Bias, CFG, CB>> : std::true_type {};

__aicore__ inline void RegistPairs() {}
template <typename M, typename... Rest>
__aicore__ inline void RegistPairs(M&, const TCubeTiling*, Rest&&... rest) {
    static_assert(IsMatmul<M>::value, "REGIST_MATMUL_OBJ: expected a Matmul object before each tiling pointer");
    RegistPairs(rest...);
}
template <typename... Pairs>
__aicore__ inline void RegistMatmulObj(TPipe*, __gm__ uint8_t*, Pairs&&... pairs) {
    static_assert(sizeof...(Pairs) % 2 == 0, "REGIST_MATMUL_OBJ: Matmul objects and tilings come in pairs");
    RegistPairs(pairs...);
}
}  // namespace decl_detail

#define REGIST_MATMUL_OBJ(tpipe, workspace, ...) \
    ::AscendC::decl_detail::RegistMatmulObj(tpipe, workspace, __VA_ARGS__)

}  // namespace AscendC

#endif /* HPMOE_DECL_MATMUL_INTF_H */
