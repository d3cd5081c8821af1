/* Declaration-only stand-in for `lib/activation/swiglu.h` (see ../../kernel_operator.h).
 * dst = src0 * Swish(src1), Swish(x) = x / (1 + e^(-beta * x)); half and float only. The form
 * without a count or a temporary buffer takes non-const source tensors. */
#ifndef HPMOE_DECL_SWIGLU_H
#define HPMOE_DECL_SWIGLU_H

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
__aicore__ inline void SwiGLU(LocalTensor<T>&, LocalTensor<T>&, LocalTensor<T>&, const float&) {
    static_assert(decl_detail::IsSwiGluType<T>(), "SwiGLU supports half and float");
}
template <typename T, bool isReuseSource = false>
__aicore__ inline void SwiGLU(LocalTensor<T>&, const LocalTensor<T>&, const LocalTensor<T>&, const float&,
                              const LocalTensor<uint8_t>&) {
    static_assert(decl_detail::IsSwiGluType<T>(), "SwiGLU supports half and float");
}
template <typename T, bool isReuseSource = false>
__aicore__ inline void SwiGLU(LocalTensor<T>&, const LocalTensor<T>&, const LocalTensor<T>&, const float&,
                              const uint32_t) {
    static_assert(decl_detail::IsSwiGluType<T>(), "SwiGLU supports half and float");
}
template <typename T, bool isReuseSource = false>
__aicore__ inline void SwiGLU(LocalTensor<T>&, const LocalTensor<T>&, const LocalTensor<T>&, const float&,
                              const LocalTensor<uint8_t>&, const uint32_t) {
    static_assert(decl_detail::IsSwiGluType<T>(), "SwiGLU supports half and float");
}
}  // namespace AscendC

#endif /* HPMOE_DECL_SWIGLU_H */
