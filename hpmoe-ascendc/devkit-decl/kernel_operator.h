/* Declaration-only stand-in for the AscendC basic API (`kernel_operator.h`), written by hpmoe
 * from the public AscendC documentation for one purpose: checking generated kernels and the
 * hpmoe runtime headers with `g++ -std=c++17 -fsyntax-only -Wall -Werror` on a machine without
 * a CANN toolkit. It is NOT the toolkit's header and cannot build a kernel: function bodies are
 * empty or hold only `static_assert`s that encode rules the documentation states.
 *
 * What it checks:
 *  - names, namespaces, template parameters and parameter types of every API hpmoe calls;
 *  - CrossCoreSetFlag / CrossCoreWaitFlag: mode 0..2 only, set pipes only PIPE_V, PIPE_M,
 *    PIPE_MTE1, PIPE_MTE2, PIPE_MTE3, PIPE_FIX (never PIPE_S or PIPE_ALL);
 *  - Muls / Adds / Maxs / Mins / Duplicate: the scalar has exactly the tensor's element type;
 *  - Cast: source and destination element types differ or a rounding mode is meaningful;
 *  - `if ASCEND_IS_AIC { .. }` / `if ASCEND_IS_AIV { .. }` spelled as the devkit expects (the
 *    macro supplies `constexpr (...)`, so both branches are type-checked here);
 *  - GM_ADDR, __gm__, __aicore__, __global__ exist (address spaces are empty on the host, so a
 *    host check cannot see a missing `__gm__`; the real compiler does).
 * What it cannot check: anything that depends on values at run time (flag ids, counts, 32-byte
 * alignment of DataCopy lengths), code generation, and the device's memory model.
 */
#ifndef HPMOE_DECL_KERNEL_OPERATOR_H
#define HPMOE_DECL_KERNEL_OPERATOR_H

#include <cstddef>
#include <cstdint>
#include <type_traits>

/* ---- Address spaces and function qualifiers (empty on the host). ---- */
#define __aicore__
#define __global__
#define __gm__
#define __ubuf__
using GM_ADDR = __gm__ uint8_t*;

/* ---- Scalar element types of the device. ---- */
struct half {
    half() = default;
    explicit half(float) {}
    explicit operator float() const { return 0.0f; }
};
struct bfloat16_t {
    bfloat16_t() = default;
    explicit bfloat16_t(float) {}
    explicit operator float() const { return 0.0f; }
};

/* ---- Pipes and events (global namespace on the device). ---- */
enum pipe_t : uint8_t {
    PIPE_S = 0,
    PIPE_V,
    PIPE_M,
    PIPE_MTE1,
    PIPE_MTE2,
    PIPE_MTE3,
    PIPE_ALL,
    PIPE_FIX = 10,
};
using event_t = int32_t;
using TEventID = int8_t;

/* ---- Kernel type and core-kind branches. ---- */
enum KernelMetaType : int32_t {
    KERNEL_TYPE_AIV_ONLY,
    KERNEL_TYPE_AIC_ONLY,
    KERNEL_TYPE_MIX_AIV_1_0,
    KERNEL_TYPE_MIX_AIC_1_0,
    KERNEL_TYPE_MIX_AIC_1_1,
    KERNEL_TYPE_MIX_AIC_1_2,
};
/* The devkit's macro records the kernel type; here it checks the argument is one. */
#define KERNEL_TASK_TYPE_DEFAULT(type)                                                            \
    static_assert(std::is_same<decltype(type), KernelMetaType>::value,                           \
                  "KERNEL_TASK_TYPE_DEFAULT takes a KERNEL_TYPE_* value")

namespace AscendC {
enum CoreType : int32_t { AIC = 1, AIV = 2, MIX = 3 };
}  // namespace AscendC
/* The kernel is compiled once per core kind; the devkit sets g_coreType for each pass. Here it
 * is a constant the branches compare with at compile time, as `if constexpr` does on device. */
#ifndef HPMOE_DECL_CORE_TYPE
#define HPMOE_DECL_CORE_TYPE AscendC::AIV
#endif
constexpr AscendC::CoreType g_coreType = HPMOE_DECL_CORE_TYPE;
#define ASCEND_IS_AIC constexpr (g_coreType == AscendC::AIC)
#define ASCEND_IS_AIV constexpr (g_coreType == AscendC::AIV)

/* ---- System workspace (global namespace). ---- */
__aicore__ inline __gm__ uint8_t* __gm__ GetSysWorkSpacePtr() { return nullptr; }

namespace AscendC {

/* ---- Block indices and timing. ---- */
__aicore__ inline int64_t GetBlockIdx() { return 0; }
__aicore__ inline int64_t GetBlockNum() { return 1; }
__aicore__ inline int64_t GetSubBlockIdx() { return 0; }
__aicore__ inline int64_t GetTaskRation() { return 1; }
/* Cycles of a 50 MHz system counter. */
__aicore__ inline int64_t GetSystemCycle() { return 0; }
__aicore__ inline void SetSysWorkspace(GM_ADDR) {}
__aicore__ inline void SetAtomicNone() {}
template <typename T>
__aicore__ inline void SetAtomicAdd() {
    static_assert(std::is_same<T, float>::value || std::is_same<T, half>::value || std::is_same<T, int16_t>::value ||
                      std::is_same<T, int32_t>::value || std::is_same<T, int8_t>::value ||
                      std::is_same<T, bfloat16_t>::value,
                  "SetAtomicAdd supports int8, int16, int32, half, bfloat16 and float");
}

/* ---- Positions, hardware events, cache maintenance, rounding. ---- */
enum class TPosition : uint8_t {
    GM,
    A1,
    A2,
    B1,
    B2,
    C1,
    C2,
    CO1,
    CO2,
    VECIN,
    VECOUT,
    VECCALC,
    LCM = VECCALC,
    SPM,
    SHM = SPM,
    TSCM,
    C2PIPE2GM,
    MAX,
};
enum class HardEvent : uint8_t {
    MTE2_MTE1,
    MTE1_MTE2,
    MTE1_M,
    M_MTE1,
    MTE2_V,
    V_MTE2,
    MTE3_V,
    V_MTE3,
    M_V,
    V_M,
    V_V,
    MTE3_MTE1,
    MTE1_MTE3,
    MTE1_V,
    MTE2_M,
    M_MTE2,
    V_MTE1,
    M_FIX,
    FIX_M,
    MTE3_MTE2,
    MTE2_MTE3,
    S_V,
    V_S,
    S_MTE2,
    MTE2_S,
    S_MTE3,
    MTE3_S,
    MTE2_FIX,
    FIX_MTE2,
    FIX_S,
    M_S,
    FIX_MTE3,
    MAX,
};
enum class CacheLine : uint8_t { SINGLE_CACHE_LINE = 0, ENTIRE_DATA_CACHE };
enum class DcciDst : uint8_t { CACHELINE_ALL = 0, CACHELINE_UB, CACHELINE_OUT, CACHELINE_ATOMIC };
enum class RoundMode : uint8_t { CAST_NONE = 0, CAST_RINT, CAST_FLOOR, CAST_CEIL, CAST_ROUND, CAST_TRUNC, CAST_ODD };

template <pipe_t pipe>
__aicore__ inline void PipeBarrier() {}
template <HardEvent event>
__aicore__ inline void SetFlag(int32_t) {}
template <HardEvent event>
__aicore__ inline void WaitFlag(int32_t) {}

/* ---- Cross-core flags (documented rules as static_asserts). ---- */
namespace decl_detail {
constexpr bool IsCrossCoreSetPipe(pipe_t p) {
    return p == PIPE_V || p == PIPE_M || p == PIPE_MTE1 || p == PIPE_MTE2 || p == PIPE_MTE3 || p == PIPE_FIX;
}
}  // namespace decl_detail

/* modeId 0: all AIC (or all AIV) of the launch; 1: the two AIVs of one AI core; 2: one AIC with its
 * two AIVs. Flag ids are 0..15 per core, each a counter 0..15 (a checked rule of the caller). */
template <uint8_t modeId, pipe_t pipe>
__aicore__ inline void CrossCoreSetFlag(uint16_t) {
    static_assert(modeId <= 2, "CrossCoreSetFlag: modeId must be 0, 1 or 2");
    static_assert(decl_detail::IsCrossCoreSetPipe(pipe),
                  "CrossCoreSetFlag: the set pipe must be PIPE_V, PIPE_M, PIPE_MTE1, PIPE_MTE2, PIPE_MTE3 or PIPE_FIX");
}
template <uint8_t modeId = 0, pipe_t pipe = PIPE_S>
__aicore__ inline void CrossCoreWaitFlag(uint16_t) {
    static_assert(modeId <= 2, "CrossCoreWaitFlag: modeId must be 0, 1 or 2");
}
__aicore__ inline void SyncAll() {}
/* The base address of the cross-core synchronisation registers (from the host's
 * aclrtGetHardwareSyncAddr), set before the first cross-core flag of a kernel. */
__aicore__ inline void SetSyncBaseAddr(uint64_t) {}

/* ---- Tensors. ---- */
template <typename T>
class LocalTensor {
public:
    using PrimType = T;
    __aicore__ LocalTensor() {}
    __aicore__ T GetValue(const uint32_t) const { return T(); }
    __aicore__ void SetValue(const uint32_t, const T&) const {}
    __aicore__ LocalTensor operator[](const uint32_t) const { return *this; }
    template <typename U>
    __aicore__ LocalTensor<U> ReinterpretCast() const {
        return LocalTensor<U>();
    }
    __aicore__ uint32_t GetSize() const { return 0; }
};

template <typename T>
class GlobalTensor {
public:
    using PrimType = T;
    __aicore__ GlobalTensor() {}
    __aicore__ void SetGlobalBuffer(__gm__ T*, uint64_t) {}
    __aicore__ void SetGlobalBuffer(__gm__ T*) {}
    __aicore__ const __gm__ T* GetPhyAddr() const { return nullptr; }
    __aicore__ __gm__ T* GetPhyAddr(const uint64_t) const { return nullptr; }
    __aicore__ T GetValue(const uint64_t) const { return T(); }
    __aicore__ void SetValue(const uint64_t, const T&) {}
    __aicore__ GlobalTensor operator[](const uint64_t) const { return *this; }
    __aicore__ uint64_t GetSize() const { return 0; }
};

template <typename T, CacheLine entireType, DcciDst dcciDst>
__aicore__ inline void DataCacheCleanAndInvalid(const GlobalTensor<T>&) {}
template <typename T, CacheLine entireType, DcciDst dcciDst>
__aicore__ inline void DataCacheCleanAndInvalid(const LocalTensor<T>&) {}
template <typename T, CacheLine entireType>
__aicore__ inline void DataCacheCleanAndInvalid(const GlobalTensor<T>&) {}

/* ---- Pipe, queues, buffers. ---- */
template <TPosition pos, int32_t depth>
class TQue {
public:
    template <typename T>
    __aicore__ LocalTensor<T> AllocTensor() {
        return LocalTensor<T>();
    }
    template <typename T>
    __aicore__ bool EnQue(const LocalTensor<T>&) {
        return true;
    }
    template <typename T>
    __aicore__ LocalTensor<T> DeQue() {
        return LocalTensor<T>();
    }
    template <typename T>
    __aicore__ void FreeTensor(LocalTensor<T>&) {}
};

template <TPosition pos = TPosition::LCM>
class TBuf {
public:
    template <typename T>
    __aicore__ LocalTensor<T> Get() {
        return LocalTensor<T>();
    }
    template <typename T>
    __aicore__ LocalTensor<T> Get(uint32_t) {
        return LocalTensor<T>();
    }
};

class TPipe {
public:
    __aicore__ TPipe() {}
    template <TPosition pos, int32_t depth>
    __aicore__ bool InitBuffer(TQue<pos, depth>&, uint8_t, uint32_t) {
        static_assert(depth >= 1, "a TQue holds at least one buffer");
        return true;
    }
    template <TPosition pos>
    __aicore__ bool InitBuffer(TBuf<pos>&, uint32_t) {
        return true;
    }
    /* An event id of `evt` free right now, for a SetFlag/WaitFlag pair issued right away (the
     * queues hold event ids of their own; a fixed id could collide with theirs). */
    __aicore__ TEventID FetchEventID(HardEvent evt);
    __aicore__ void Reset() {}
    __aicore__ void Destroy() {}
};

/* ---- Data movement. DataCopy lengths must be multiples of 32 bytes; DataCopyPad has no such
 * rule. Strides of DataCopyPad count bytes on the GM side and 32-byte blocks on the UB side. ---- */
struct DataCopyParams {
    __aicore__ DataCopyParams() {}
    __aicore__ DataCopyParams(const uint16_t count, const uint16_t len, const uint16_t srcStrideIn,
                              const uint16_t dstStrideIn)
        : blockCount(count), blockLen(len), srcStride(srcStrideIn), dstStride(dstStrideIn) {}
    uint16_t blockCount = 1;
    uint16_t blockLen = 0;
    uint16_t srcStride = 0;
    uint16_t dstStride = 0;
};
struct DataCopyExtParams {
    __aicore__ DataCopyExtParams() {}
    __aicore__ DataCopyExtParams(const uint16_t count, const uint32_t len, const uint32_t srcStrideIn,
                                 const uint32_t dstStrideIn, const uint32_t rsvIn)
        : blockCount(count), blockLen(len), srcStride(srcStrideIn), dstStride(dstStrideIn), rsv(rsvIn) {}
    uint16_t blockCount = 1;
    uint32_t blockLen = 0;
    uint32_t srcStride = 0;
    uint32_t dstStride = 0;
    uint32_t rsv = 0;
};
template <typename T>
struct DataCopyPadExtParams {
    __aicore__ DataCopyPadExtParams() {}
    __aicore__ DataCopyPadExtParams(const bool isPadIn, const uint8_t leftPadIn, const uint8_t rightPadIn,
                                    T padValue)
        : isPad(isPadIn), leftPadding(leftPadIn), rightPadding(rightPadIn), paddingValue(padValue) {}
    bool isPad = false;
    uint8_t leftPadding = 0;
    uint8_t rightPadding = 0;
    T paddingValue = T();
};

template <typename T>
__aicore__ inline void DataCopy(const LocalTensor<T>&, const GlobalTensor<T>&, const uint32_t) {}
template <typename T>
__aicore__ inline void DataCopy(const GlobalTensor<T>&, const LocalTensor<T>&, const uint32_t) {}
template <typename T>
__aicore__ inline void DataCopy(const LocalTensor<T>&, const LocalTensor<T>&, const uint32_t) {}
template <typename T>
__aicore__ inline void DataCopy(const LocalTensor<T>&, const GlobalTensor<T>&, const DataCopyParams&) {}
template <typename T>
__aicore__ inline void DataCopy(const GlobalTensor<T>&, const LocalTensor<T>&, const DataCopyParams&) {}
template <typename T>
__aicore__ inline void DataCopyPad(const LocalTensor<T>&, const GlobalTensor<T>&, const DataCopyExtParams&,
                                   const DataCopyPadExtParams<T>&) {}
template <typename T>
__aicore__ inline void DataCopyPad(const GlobalTensor<T>&, const LocalTensor<T>&, const DataCopyExtParams&) {}

/* ---- Vector computation (level-2 interfaces: a count of elements). ---- */
#define HPMOE_DECL_BINARY(NAME)                                                                      \
    template <typename T>                                                                            \
    __aicore__ inline void NAME(const LocalTensor<T>&, const LocalTensor<T>&, const LocalTensor<T>&, \
                                const int32_t&) {}
HPMOE_DECL_BINARY(Add)
HPMOE_DECL_BINARY(Sub)
HPMOE_DECL_BINARY(Mul)
HPMOE_DECL_BINARY(Div)
HPMOE_DECL_BINARY(Max)
HPMOE_DECL_BINARY(Min)
#undef HPMOE_DECL_BINARY

#define HPMOE_DECL_UNARY(NAME)                                                                       \
    template <typename T, bool isReuseSource = false>                                                \
    __aicore__ inline void NAME(const LocalTensor<T>&, const LocalTensor<T>&, const int32_t&) {}
HPMOE_DECL_UNARY(Exp)
HPMOE_DECL_UNARY(Abs)
HPMOE_DECL_UNARY(Reciprocal)
HPMOE_DECL_UNARY(Sqrt)
#undef HPMOE_DECL_UNARY

/* Tensor-scalar ops, with the documented signature: the scalar is a `const T&` of the tensor's
 * element type. A second, catch-all template turns a scalar of another type (`2.0` for a float
 * tensor, or an explicit `Muls<float>(.., 2.0, ..)`) into a readable error instead of a silent
 * conversion. */
#define HPMOE_DECL_SCALAR(NAME)                                                                      \
    template <typename T, bool isSetMask = true>                                                     \
    __aicore__ inline void NAME(const LocalTensor<T>&, const LocalTensor<T>&, const T&, const int32_t&) {} \
    template <typename T, bool isSetMask = true, typename U>                                         \
    __aicore__ inline void NAME(const LocalTensor<T>&, const LocalTensor<T>&, const U&, const int32_t&) { \
        static_assert(std::is_same<T, U>::value,                                                     \
                      #NAME ": the scalar must have exactly the tensor's element type");              \
    }
HPMOE_DECL_SCALAR(Muls)
HPMOE_DECL_SCALAR(Adds)
HPMOE_DECL_SCALAR(Maxs)
HPMOE_DECL_SCALAR(Mins)
#undef HPMOE_DECL_SCALAR

template <typename T>
__aicore__ inline void Duplicate(const LocalTensor<T>&, const T&, const int32_t&) {}
template <typename T, typename U>
__aicore__ inline void Duplicate(const LocalTensor<T>&, const U&, const int32_t&) {
    static_assert(std::is_same<T, U>::value, "Duplicate: the scalar must have exactly the tensor's element type");
}

template <typename T>
__aicore__ inline void ReduceMax(const LocalTensor<T>&, const LocalTensor<T>&, const LocalTensor<T>&, const int32_t,
                                 bool = false) {
    static_assert(std::is_same<T, float>::value || std::is_same<T, half>::value,
                  "ReduceMax supports half and float");
}
template <typename T>
__aicore__ inline void ReduceSum(const LocalTensor<T>&, const LocalTensor<T>&, const LocalTensor<T>&, const int32_t) {
    static_assert(std::is_same<T, float>::value || std::is_same<T, half>::value,
                  "ReduceSum supports half and float");
}

/* Conversion between element types. Supported pairs on dav-2201 include bf16<->f32, f16<->f32,
 * f16<->int8, f32<->int32 and f32->f32 with rounding; a same-type Cast other than f32->f32 or
 * f16->f16 rounding is a mistake. */
template <typename T1, typename T2>
__aicore__ inline void Cast(const LocalTensor<T1>&, const LocalTensor<T2>&, const RoundMode&, const uint32_t) {
    static_assert(!std::is_same<T1, T2>::value || std::is_same<T1, float>::value || std::is_same<T1, half>::value,
                  "Cast between equal integer types is not a conversion");
}

}  // namespace AscendC

#endif /* HPMOE_DECL_KERNEL_OPERATOR_H */
