/* hpmoe AscendC emulator: `lib/activation/swiglu.h`. dst = src0 * Swish(src1),
 * Swish(x) = x / (1 + e^(-beta * x)), as devkit-decl states it (half and float only; the form
 * without a count or a temporary buffer takes non-const sources). Computed in fp32, rounded
 * once to T. */
#ifndef HPMOE_EMU_SWIGLU_H
#define HPMOE_EMU_SWIGLU_H

#include <type_traits>

#include "../../kernel_operator.h"

namespace AscendC {
namespace decl_detail {
template <typename T>
constexpr bool IsSwiGluType() {
    return std::is_same<T, half>::value || std::is_same<T, float>::value;
}
}  // namespace decl_detail

template <typename T, bool isReuseSource = false>
__aicore__ inline void SwiGLU(LocalTensor<T>& d, LocalTensor<T>& a, LocalTensor<T>& b, const float& beta) {
    static_assert(decl_detail::IsSwiGluType<T>(), "SwiGLU supports half and float");
    hpmoe_emu::VecSwiGlu(hpmoe_emu::KindOf<T>::value, d.EmuRef(), a.EmuRef(), b.EmuRef(), beta, nullptr, UINT32_MAX,
                         "SwiGLU");
}
template <typename T, bool isReuseSource = false>
__aicore__ inline void SwiGLU(LocalTensor<T>& d, const LocalTensor<T>& a, const LocalTensor<T>& b, const float& beta,
                              const LocalTensor<uint8_t>& work) {
    static_assert(decl_detail::IsSwiGluType<T>(), "SwiGLU supports half and float");
    hpmoe_emu::VecSwiGlu(hpmoe_emu::KindOf<T>::value, d.EmuRef(), a.EmuRef(), b.EmuRef(), beta, &work.EmuRef(),
                         UINT32_MAX, "SwiGLU");
}
template <typename T, bool isReuseSource = false>
__aicore__ inline void SwiGLU(LocalTensor<T>& d, const LocalTensor<T>& a, const LocalTensor<T>& b, const float& beta,
                              const uint32_t n) {
    static_assert(decl_detail::IsSwiGluType<T>(), "SwiGLU supports half and float");
    hpmoe_emu::VecSwiGlu(hpmoe_emu::KindOf<T>::value, d.EmuRef(), a.EmuRef(), b.EmuRef(), beta, nullptr, n, "SwiGLU");
}
template <typename T, bool isReuseSource = false>
__aicore__ inline void SwiGLU(LocalTensor<T>& d, const LocalTensor<T>& a, const LocalTensor<T>& b, const float& beta,
                              const LocalTensor<uint8_t>& work, const uint32_t n) {
    static_assert(decl_detail::IsSwiGluType<T>(), "SwiGLU supports half and float");
    hpmoe_emu::VecSwiGlu(hpmoe_emu::KindOf<T>::value, d.EmuRef(), a.EmuRef(), b.EmuRef(), beta, &work.EmuRef(), n,
                         "SwiGLU");
}
}  // namespace AscendC

#endif /* HPMOE_EMU_SWIGLU_H */
