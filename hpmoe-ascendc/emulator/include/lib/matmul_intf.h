/* hpmoe AscendC emulator: the Matmul high-level API (`lib/matmul_intf.h`) as hpmoe uses it.
 *
 * Only the mode where the AIC drives its own matmuls (ASCENDC_CUBE_ONLY defined before this
 * header) is emulated; REGIST_MATMUL_OBJ without it (the AIC server loop for AIV clients) is
 * reported as an error. IterateAll computes C[i, j] = sum over p = 0..K-1, ascending, of
 * float(A[i, p]) * float(B[p, j]) in fp32 from +0.0 without FMA, rounded once to C's type
 * (round to nearest, ties to even): the emulator's fixed order (the device's is not documented).
 * A transposed operand (SetTensorA/B's isTranspose, allowed when its MatmulType has isTrans) is stored
 * as the transpose of its original shape: A K x M with rows orgM apart, B N x K with rows orgKb apart.
 * enAtomic = 1 (AtomicAdd) adds the FP32 sum into an FP32 C (C = C + sum, one FP32 addition); other
 * atomic modes and atomic adds into other C types are reported as not emulated.
 * Iterate(enPartialSum) + GetTensorC (the Iterate and GetTensorC pages): only for a single shape
 * equal to the tiling's base block (the pages' condition for accumulating in L0C: singleCoreM ==
 * baseM and singleCoreN == baseN), one block per Iterate. Iterate(false) starts CO1's FP32
 * accumulators at +0.0, Iterate(true) continues them: every product A[i, p] * B[p, j], p
 * ascending, is added to CO1[i, j] in turn, so a chain of Iterates equals one IterateAll over the
 * concatenated K (the emulator's fixed order, as IterateAll's). GetTensorC rounds CO1 once to C's
 * type and writes it (or adds it into an FP32 C, enAtomic = 1) by FIX; CO1 is then released.
 * Strict (the emulator's side where the pages are silent): Iterate(true) with no CO1 block, or of
 * another shape, Iterate(false) or IterateAll over a block never fetched, GetTensorC without a
 * block, End() with a block never fetched, a C row not a whole number of 32-byte blocks or a C
 * address not 32-byte aligned are errors; enSequentialWrite is not emulated.
 * C's writes are FIX-pipe writes, pending until ordered with the scalar pipe. Rules kept from
 * devkit-decl as static_asserts: A and B of one type, C float or A's type; object/tiling pairs. */
#ifndef HPMOE_EMU_MATMUL_INTF_H
#define HPMOE_EMU_MATMUL_INTF_H

#include <type_traits>

#include "../kernel_operator.h"
#include "../kernel_tiling/kernel_tiling.h"

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
inline constexpr MatmulConfig CFG_NORM = {true, false, false, 0, 0, 0, false, false, false, false, 0};
inline constexpr MatmulConfig CFG_MDL = {false, false, true, 0, 0, 0, false, false, false, false, 0};

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
    static_assert(A_TYPE::pos == TPosition::GM && B_TYPE::pos == TPosition::GM && C_TYPE::pos == TPosition::GM &&
                      A_TYPE::format == CubeFormat::ND && B_TYPE::format == CubeFormat::ND &&
                      C_TYPE::format == CubeFormat::ND,
                  "hpmoe emulator: only GM, ND-format Matmul operands are emulated");

public:
    __aicore__ MatmulImpl() {
        d_.akind = hpmoe_emu::KindOf<SrcAT>::value;
        d_.bkind = hpmoe_emu::KindOf<SrcBT>::value;
        d_.ckind = hpmoe_emu::KindOf<DstT>::value;
        d_.may_trans_a = A_TYPE::isTrans;
        d_.may_trans_b = B_TYPE::isTrans;
    }
    __aicore__ void Init(const TCubeTiling* tiling, TPipe* = nullptr) {
#ifdef ASCENDC_CUBE_ONLY
        hpmoe_emu::MatmulInit(d_, tiling, true, "Matmul::Init");
#else
        hpmoe_emu::MatmulInit(d_, tiling, false, "Matmul::Init");
#endif
    }
    __aicore__ void SetOrgShape(int m, int n, int k) { SetOrgShape(m, n, k, k, 0); }
    /* orgKc: C's row length (0: B's N). Documented to come before SetTensorA/SetTensorB (and
     * SetSingleShape): the tensors set before it are forgotten, so IterateAll asks for them again. */
    __aicore__ void SetOrgShape(int m, int n, int ka, int kb, int kc = 0) {
        d_.a_set = false;
        d_.b_set = false;
        d_.org_set = true;
        d_.org_m = m;
        d_.org_n = n;
        d_.org_ka = ka;
        d_.org_kb = kb;
        d_.org_kc = kc;
        hpmoe_emu::MatmulCheckShape(d_, "Matmul::SetOrgShape");
    }
    __aicore__ void SetSingleShape(int m, int n, int k) {
        d_.single_m = m;
        d_.single_n = n;
        d_.single_k = k;
        hpmoe_emu::MatmulCheckShape(d_, "Matmul::SetSingleShape");
    }
    __aicore__ void SetTail(int m = -1, int n = -1, int k = -1) {
        d_.tail_m = m;
        d_.tail_n = n;
        d_.tail_k = k;
        hpmoe_emu::MatmulCheckShape(d_, "Matmul::SetTail");
    }
    __aicore__ void SetTensorA(const GlobalTensor<SrcAT>& a, bool isTransposeA = false) {
        d_.a = a.EmuRef().addr;
        d_.a_set = true;
        d_.block_done = false;
        d_.trans_a = isTransposeA;
    }
    __aicore__ void SetTensorB(const GlobalTensor<SrcBT>& b, bool isTransposeB = false) {
        d_.b = b.EmuRef().addr;
        d_.b_set = true;
        d_.block_done = false;
        d_.trans_b = isTransposeB;
    }
    __aicore__ void SetBias(const GlobalTensor<BiasT>&) { hpmoe_emu::Unsupported("Matmul::SetBias", "a Matmul bias"); }
    __aicore__ void ClearBias() {}
    /* One base block per call (the single shape must equal the tiling's baseM x baseN): computed
     * into CO1, or added to CO1's accumulators when enPartialSum; returns true (a block was
     * computed). A second call before new SetTensorA/B is an error, not the documented `false`. */
    template <bool sync = true>
    __aicore__ bool Iterate(bool enPartialSum = false) {
        static_assert(sync, "hpmoe emulator: only the synchronous Iterate is emulated");
        return hpmoe_emu::MatmulIterate(d_, enPartialSum, "Matmul::Iterate");
    }
    /* CO1's block to GM after Iterate (enAtomic 1: added into an FP32 C); CO1 is released. */
    template <bool sync = true>
    __aicore__ void GetTensorC(const GlobalTensor<DstT>& c, uint8_t enAtomic = 0, bool enSequentialWrite = false) {
        static_assert(sync, "hpmoe emulator: only the synchronous GetTensorC is emulated");
        hpmoe_emu::MatmulGetTensorC(d_, c.EmuRef().addr, c.EmuRef().bytes, enAtomic, enSequentialWrite,
                                    "Matmul::GetTensorC");
    }
    template <bool sync = true>
    __aicore__ void IterateAll(const GlobalTensor<DstT>& c, uint8_t enAtomic = 0, bool = false, bool = false,
                               bool = false) {
        static_assert(sync, "hpmoe emulator: only the synchronous IterateAll is emulated");
        hpmoe_emu::MatmulIterateAll(d_, c.EmuRef().addr, c.EmuRef().bytes, enAtomic, "Matmul::IterateAll");
    }
    __aicore__ void End() { hpmoe_emu::MatmulEnd(d_); }

private:
    hpmoe_emu::MatmulDesc d_;
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
__aicore__ inline void RegistPairs(M& mm, const TCubeTiling* tiling, Rest&&... rest) {
    static_assert(IsMatmul<M>::value, "REGIST_MATMUL_OBJ: expected a Matmul object before each tiling pointer");
    mm.Init(tiling);
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

#endif /* HPMOE_EMU_MATMUL_INTF_H */
