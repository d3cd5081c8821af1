/* hpmoe AscendC emulator: the AscendC basic API (`kernel_operator.h`) implemented on the CPU.
 *
 * Same names, namespaces, template parameters and parameter types as hpmoe's declaration-only
 * header (devkit-decl/kernel_operator.h), which lists every API the generated kernels and the
 * hpmoe runtime use; the compile-time rules it states as static_asserts are kept here. Every
 * call forwards to the machine (hpmoe_emu/core.h, src/), which executes it on the calling core
 * thread and checks it (README.md). Not the toolkit's header; no toolkit code. */
#ifndef HPMOE_EMU_KERNEL_OPERATOR_H
#define HPMOE_EMU_KERNEL_OPERATOR_H

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "hpmoe_emu/core.h"

#ifndef HPMOE_EMULATOR
#define HPMOE_EMULATOR 1
#endif

/* ---- Address spaces and function qualifiers (empty on the host). ---- */
#define __aicore__
#define __global__
#define __gm__
#define __ubuf__
using GM_ADDR = __gm__ uint8_t*;

/* ---- Scalar element types of the device: IEEE binary16 and bfloat16, stored as bits. ---- */
struct half {
    uint16_t bits = 0;
    half() = default;
    /* Round to nearest, ties to even. */
    explicit half(float f) : bits(hpmoe_emu::FloatToHalfBits(f)) {}
    explicit operator float() const { return hpmoe_emu::HalfBitsToFloat(bits); }
};
struct bfloat16_t {
    uint16_t bits = 0;
    bfloat16_t() = default;
    /* Round to nearest, ties to even. */
    explicit bfloat16_t(float f) : bits(hpmoe_emu::FloatToBf16Bits(f)) {}
    explicit operator float() const { return hpmoe_emu::Bf16BitsToFloat(bits); }
};

namespace hpmoe_emu {
template <typename T>
struct KindOf;
template <> struct KindOf<float> { static constexpr int value = K_F32; };
template <> struct KindOf<half> { static constexpr int value = K_F16; };
template <> struct KindOf<bfloat16_t> { static constexpr int value = K_BF16; };
template <> struct KindOf<int8_t> { static constexpr int value = K_I8; };
template <> struct KindOf<uint8_t> { static constexpr int value = K_U8; };
template <> struct KindOf<int16_t> { static constexpr int value = K_I16; };
template <> struct KindOf<uint16_t> { static constexpr int value = K_U16; };
template <> struct KindOf<int32_t> { static constexpr int value = K_I32; };
template <> struct KindOf<uint32_t> { static constexpr int value = K_U32; };
template <> struct KindOf<int64_t> { static constexpr int value = K_I64; };
template <> struct KindOf<uint64_t> { static constexpr int value = K_U64; };
}  // namespace hpmoe_emu

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
/* Checks the argument is a kernel type (compile time) and records it (run time: the emulator
 * launches MIX_AIC_1_2 and reports any other type). */
#define KERNEL_TASK_TYPE_DEFAULT(type)                                                            \
    static_assert(std::is_same<decltype(type), KernelMetaType>::value,                           \
                  "KERNEL_TASK_TYPE_DEFAULT takes a KERNEL_TYPE_* value");                       \
    ::hpmoe_emu::NoteKernelType(static_cast<int>(type))

namespace AscendC {
enum CoreType : int32_t { AIC = 1, AIV = 2, MIX = 3 };
}  // namespace AscendC
/* The kernel is compiled once and run by every core thread: the branches test the calling
 * thread's core kind at run time (on the device they are compile-time per core kind). */
#define ASCEND_IS_AIC (::hpmoe_emu::IsAic())
#define ASCEND_IS_AIV (::hpmoe_emu::IsAiv())

/* ---- System workspace (global namespace). ---- */
__aicore__ inline __gm__ uint8_t* __gm__ GetSysWorkSpacePtr() { return hpmoe_emu::SysWorkspace(); }

namespace AscendC {

/* ---- Block indices and timing. ---- */
__aicore__ inline int64_t GetBlockIdx() { return hpmoe_emu::BlockIdx(); }
__aicore__ inline int64_t GetBlockNum() { return hpmoe_emu::BlockNum(); }
__aicore__ inline int64_t GetSubBlockIdx() { return hpmoe_emu::SubBlockIdx(); }
__aicore__ inline int64_t GetTaskRation() { return hpmoe_emu::TaskRation(); }
/* Cycles of a 50 MHz system counter (virtual: see README.md). */
__aicore__ inline int64_t GetSystemCycle() { return hpmoe_emu::SystemCycle(); }
__aicore__ inline void SetSysWorkspace(GM_ADDR p) { hpmoe_emu::SetSysWorkspace(p); }
__aicore__ inline void SetAtomicNone() { hpmoe_emu::SetAtomic(-1, "SetAtomicNone"); }
template <typename T>
__aicore__ inline void SetAtomicAdd() {
    static_assert(std::is_same<T, float>::value || std::is_same<T, half>::value || std::is_same<T, int16_t>::value ||
                      std::is_same<T, int32_t>::value || std::is_same<T, int8_t>::value ||
                      std::is_same<T, bfloat16_t>::value,
                  "SetAtomicAdd supports int8, int16, int32, half, bfloat16 and float");
    hpmoe_emu::SetAtomic(hpmoe_emu::KindOf<T>::value, "SetAtomicAdd");
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
__aicore__ inline void PipeBarrier() {
    hpmoe_emu::PipeBarrier(static_cast<int>(pipe));
}
template <HardEvent event>
__aicore__ inline void SetFlag(int32_t id) {
    hpmoe_emu::SetFlag(static_cast<int>(event), id);
}
template <HardEvent event>
__aicore__ inline void WaitFlag(int32_t id) {
    hpmoe_emu::WaitFlag(static_cast<int>(event), id);
}

/* ---- Cross-core flags (documented rules as static_asserts; ids and counts checked at run time). ---- */
namespace decl_detail {
constexpr bool IsCrossCoreSetPipe(pipe_t p) {
    return p == PIPE_V || p == PIPE_M || p == PIPE_MTE1 || p == PIPE_MTE2 || p == PIPE_MTE3 || p == PIPE_FIX;
}
}  // namespace decl_detail

template <uint8_t modeId, pipe_t pipe>
__aicore__ inline void CrossCoreSetFlag(uint16_t id) {
    static_assert(modeId <= 2, "CrossCoreSetFlag: modeId must be 0, 1 or 2");
    static_assert(decl_detail::IsCrossCoreSetPipe(pipe),
                  "CrossCoreSetFlag: the set pipe must be PIPE_V, PIPE_M, PIPE_MTE1, PIPE_MTE2, PIPE_MTE3 or PIPE_FIX");
    hpmoe_emu::CrossCoreSet(modeId, static_cast<int>(pipe), id);
}
template <uint8_t modeId = 0, pipe_t pipe = PIPE_S>
__aicore__ inline void CrossCoreWaitFlag(uint16_t id) {
    static_assert(modeId <= 2, "CrossCoreWaitFlag: modeId must be 0, 1 or 2");
    hpmoe_emu::CrossCoreWait(modeId, static_cast<int>(pipe), id);
}
/* The base address of the cross-core synchronisation registers (read by the kernel from where the
 * host's aclrtGetHardwareSyncAddr said), set before the first cross-core flag. */
__aicore__ inline void SetSyncBaseAddr(uint64_t config) { hpmoe_emu::SetSyncBase(config); }
/* isAIVOnly (the documented default): a barrier of all AIV cores of the launch; false: of all
 * AIC and AIV cores. */
template <bool isAIVOnly = true>
__aicore__ inline void SyncAll() {
    hpmoe_emu::SyncAll(isAIVOnly);
}

/* ---- Tensors. ---- */
template <typename T>
class LocalTensor {
public:
    using PrimType = T;
    __aicore__ LocalTensor() {}
    __aicore__ T GetValue(const uint32_t i) const {
        T v{};
        hpmoe_emu::LocalScalar(ref_, uint64_t(i) * sizeof(T), &v, sizeof(T), false, "LocalTensor::GetValue");
        return v;
    }
    __aicore__ void SetValue(const uint32_t i, const T& v) const {
        T copy = v;
        hpmoe_emu::LocalScalar(ref_, uint64_t(i) * sizeof(T), &copy, sizeof(T), true, "LocalTensor::SetValue");
    }
    __aicore__ LocalTensor operator[](const uint32_t off) const {
        LocalTensor r;
        r.ref_ = hpmoe_emu::LocalSub(ref_, uint64_t(off) * sizeof(T), sizeof(T), "LocalTensor::operator[]");
        return r;
    }
    template <typename U>
    __aicore__ LocalTensor<U> ReinterpretCast() const {
        LocalTensor<U> r;
        r.EmuRef() = ref_;
        return r;
    }
    __aicore__ uint32_t GetSize() const { return ref_.bytes / sizeof(T); }

    /* Emulator access to the reference (not part of the AscendC API). */
    hpmoe_emu::LocalRef& EmuRef() { return ref_; }
    const hpmoe_emu::LocalRef& EmuRef() const { return ref_; }

private:
    hpmoe_emu::LocalRef ref_;
};

template <typename T>
class GlobalTensor {
public:
    using PrimType = T;
    __aicore__ GlobalTensor() {}
    __aicore__ void SetGlobalBuffer(__gm__ T* p, uint64_t n) {
        ref_.addr = reinterpret_cast<uint8_t*>(p);
        ref_.bytes = n * sizeof(T);
    }
    __aicore__ void SetGlobalBuffer(__gm__ T* p) {
        ref_.addr = reinterpret_cast<uint8_t*>(p);
        ref_.bytes = UINT64_MAX;
    }
    __aicore__ const __gm__ T* GetPhyAddr() const { return reinterpret_cast<const T*>(ref_.addr); }
    __aicore__ __gm__ T* GetPhyAddr(const uint64_t off) const { return reinterpret_cast<T*>(ref_.addr) + off; }
    /* Scalar read through the core's data cache. */
    __aicore__ T GetValue(const uint64_t i) const {
        T v{};
        hpmoe_emu::GmScalar(ref_, i * sizeof(T), &v, sizeof(T), false, "GlobalTensor::GetValue");
        return v;
    }
    /* Scalar write into the core's data cache (reaches GM at DataCacheCleanAndInvalid). */
    __aicore__ void SetValue(const uint64_t i, const T& v) {
        T copy = v;
        hpmoe_emu::GmScalar(ref_, i * sizeof(T), &copy, sizeof(T), true, "GlobalTensor::SetValue");
    }
    __aicore__ GlobalTensor operator[](const uint64_t off) const {
        GlobalTensor r;
        r.ref_.addr = ref_.addr + off * sizeof(T);
        r.ref_.bytes = ref_.bytes == UINT64_MAX ? UINT64_MAX : (off * sizeof(T) <= ref_.bytes ? ref_.bytes - off * sizeof(T) : 0);
        return r;
    }
    __aicore__ uint64_t GetSize() const { return ref_.bytes == UINT64_MAX ? 0 : ref_.bytes / sizeof(T); }

    const hpmoe_emu::GlobalRef& EmuRef() const { return ref_; }

private:
    hpmoe_emu::GlobalRef ref_;
};

template <typename T, CacheLine entireType, DcciDst dcciDst>
__aicore__ inline void DataCacheCleanAndInvalid(const GlobalTensor<T>& g) {
    hpmoe_emu::DataCacheCleanAndInvalid(g.EmuRef().addr, entireType == CacheLine::ENTIRE_DATA_CACHE,
                                        static_cast<int>(dcciDst));
}
template <typename T, CacheLine entireType, DcciDst dcciDst>
__aicore__ inline void DataCacheCleanAndInvalid(const LocalTensor<T>& t) {
    hpmoe_emu::DataCacheLocal(t.EmuRef());
}
template <typename T, CacheLine entireType>
__aicore__ inline void DataCacheCleanAndInvalid(const GlobalTensor<T>& g) {
    hpmoe_emu::DataCacheCleanAndInvalid(g.EmuRef().addr, entireType == CacheLine::ENTIRE_DATA_CACHE,
                                        static_cast<int>(DcciDst::CACHELINE_OUT));
}

/* ---- Pipe, queues, buffers. ---- */
template <TPosition pos, int32_t depth>
class TQue {
public:
    template <typename T>
    __aicore__ LocalTensor<T> AllocTensor() {
        LocalTensor<T> t;
        t.EmuRef() = hpmoe_emu::QueAlloc(q_, "TQue::AllocTensor");
        return t;
    }
    template <typename T>
    __aicore__ bool EnQue(const LocalTensor<T>& t) {
        return hpmoe_emu::QueEnQue(q_, t.EmuRef());
    }
    template <typename T>
    __aicore__ LocalTensor<T> DeQue() {
        LocalTensor<T> t;
        t.EmuRef() = hpmoe_emu::QueDeQue(q_);
        return t;
    }
    template <typename T>
    __aicore__ void FreeTensor(LocalTensor<T>& t) {
        hpmoe_emu::QueFree(q_, t.EmuRef());
    }

    hpmoe_emu::Queue*& EmuQueue() { return q_; }

private:
    hpmoe_emu::Queue* q_ = nullptr;
};

template <TPosition pos = TPosition::LCM>
class TBuf {
public:
    template <typename T>
    __aicore__ LocalTensor<T> Get() {
        LocalTensor<T> t;
        t.EmuRef() = hpmoe_emu::BufGet(buf_, UINT64_MAX, "TBuf::Get");
        return t;
    }
    template <typename T>
    __aicore__ LocalTensor<T> Get(uint32_t n) {
        LocalTensor<T> t;
        t.EmuRef() = hpmoe_emu::BufGet(buf_, uint64_t(n) * sizeof(T), "TBuf::Get");
        return t;
    }

    hpmoe_emu::LocalRef& EmuBuf() { return buf_; }

private:
    hpmoe_emu::LocalRef buf_;
};

class TPipe {
public:
    __aicore__ TPipe() {}
    template <TPosition pos, int32_t depth>
    __aicore__ bool InitBuffer(TQue<pos, depth>& q, uint8_t num, uint32_t len) {
        static_assert(depth >= 1, "a TQue holds at least one buffer");
        q.EmuQueue() = hpmoe_emu::QueInit(static_cast<int>(pos), depth, num, len);
        return true;
    }
    template <TPosition pos>
    __aicore__ bool InitBuffer(TBuf<pos>& b, uint32_t len) {
        b.EmuBuf() = hpmoe_emu::BufInit(static_cast<int>(pos), len);
        return true;
    }
    /* An id of `evt` with no SetFlag pending, for a SetFlag/WaitFlag pair issued right away. */
    __aicore__ TEventID FetchEventID(HardEvent evt) {
        return static_cast<TEventID>(hpmoe_emu::FetchEventID(static_cast<int>(evt)));
    }
    __aicore__ void Reset() { hpmoe_emu::PipeReset(); }
    __aicore__ void Destroy() { hpmoe_emu::PipeReset(); }
};

/* ---- Data movement. ---- */
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

namespace emu_detail {
template <typename T>
inline hpmoe_emu::CopyDesc Counted(uint32_t n) {
    hpmoe_emu::CopyDesc d;
    d.counted = true;
    d.count = n;
    d.elem = sizeof(T);
    return d;
}
template <typename T>
inline hpmoe_emu::CopyDesc Blocks(const DataCopyParams& p) {
    hpmoe_emu::CopyDesc d;
    d.block_count = p.blockCount;
    d.block_len = p.blockLen;
    d.src_stride = p.srcStride;
    d.dst_stride = p.dstStride;
    d.elem = sizeof(T);
    return d;
}
template <typename T>
inline hpmoe_emu::CopyDesc Ext(const DataCopyExtParams& p) {
    hpmoe_emu::CopyDesc d;
    d.pad_api = true;
    d.block_count = p.blockCount;
    d.block_len = p.blockLen;
    d.src_stride = p.srcStride;
    d.dst_stride = p.dstStride;
    d.rsv = p.rsv;
    d.elem = sizeof(T);
    return d;
}
}  // namespace emu_detail

template <typename T>
__aicore__ inline void DataCopy(const LocalTensor<T>& d, const GlobalTensor<T>& s, const uint32_t n) {
    hpmoe_emu::CopyGmToLocal(d.EmuRef(), s.EmuRef(), emu_detail::Counted<T>(n), "DataCopy");
}
template <typename T>
__aicore__ inline void DataCopy(const GlobalTensor<T>& d, const LocalTensor<T>& s, const uint32_t n) {
    hpmoe_emu::CopyLocalToGm(d.EmuRef(), s.EmuRef(), emu_detail::Counted<T>(n), "DataCopy");
}
template <typename T>
__aicore__ inline void DataCopy(const LocalTensor<T>& d, const LocalTensor<T>& s, const uint32_t n) {
    hpmoe_emu::CopyLocalToLocal(d.EmuRef(), s.EmuRef(), emu_detail::Counted<T>(n), "DataCopy");
}
template <typename T>
__aicore__ inline void DataCopy(const LocalTensor<T>& d, const GlobalTensor<T>& s, const DataCopyParams& p) {
    hpmoe_emu::CopyGmToLocal(d.EmuRef(), s.EmuRef(), emu_detail::Blocks<T>(p), "DataCopy");
}
template <typename T>
__aicore__ inline void DataCopy(const GlobalTensor<T>& d, const LocalTensor<T>& s, const DataCopyParams& p) {
    hpmoe_emu::CopyLocalToGm(d.EmuRef(), s.EmuRef(), emu_detail::Blocks<T>(p), "DataCopy");
}
template <typename T>
__aicore__ inline void DataCopyPad(const LocalTensor<T>& d, const GlobalTensor<T>& s, const DataCopyExtParams& p,
                                   const DataCopyPadExtParams<T>& pad) {
    hpmoe_emu::CopyDesc desc = emu_detail::Ext<T>(p);
    desc.is_pad = pad.isPad;
    desc.left_pad = pad.leftPadding;
    desc.right_pad = pad.rightPadding;
    std::memcpy(&desc.pad_bits, &pad.paddingValue, sizeof(T));
    hpmoe_emu::CopyGmToLocal(d.EmuRef(), s.EmuRef(), desc, "DataCopyPad");
}
template <typename T>
__aicore__ inline void DataCopyPad(const GlobalTensor<T>& d, const LocalTensor<T>& s, const DataCopyExtParams& p) {
    hpmoe_emu::CopyLocalToGm(d.EmuRef(), s.EmuRef(), emu_detail::Ext<T>(p), "DataCopyPad");
}

/* ---- Vector computation (level-2 interfaces: a count of elements). ---- */
#define HPMOE_EMU_BINARY(NAME, OP)                                                                    \
    template <typename T>                                                                            \
    __aicore__ inline void NAME(const LocalTensor<T>& d, const LocalTensor<T>& a, const LocalTensor<T>& b, \
                                const int32_t& n) {                                                  \
        hpmoe_emu::VecBinary(hpmoe_emu::OP, hpmoe_emu::KindOf<T>::value, d.EmuRef(), a.EmuRef(), b.EmuRef(), n, #NAME); \
    }
HPMOE_EMU_BINARY(Add, VO_ADD)
HPMOE_EMU_BINARY(Sub, VO_SUB)
HPMOE_EMU_BINARY(Mul, VO_MUL)
HPMOE_EMU_BINARY(Div, VO_DIV)
HPMOE_EMU_BINARY(Max, VO_MAX)
HPMOE_EMU_BINARY(Min, VO_MIN)
#undef HPMOE_EMU_BINARY

#define HPMOE_EMU_UNARY(NAME, OP)                                                                     \
    template <typename T, bool isReuseSource = false>                                                \
    __aicore__ inline void NAME(const LocalTensor<T>& d, const LocalTensor<T>& s, const int32_t& n) { \
        hpmoe_emu::VecUnary(hpmoe_emu::OP, hpmoe_emu::KindOf<T>::value, d.EmuRef(), s.EmuRef(), n, #NAME); \
    }
HPMOE_EMU_UNARY(Exp, VO_EXP)
HPMOE_EMU_UNARY(Abs, VO_ABS)
HPMOE_EMU_UNARY(Reciprocal, VO_RECIP)
HPMOE_EMU_UNARY(Sqrt, VO_SQRT)
#undef HPMOE_EMU_UNARY

/* Tensor-scalar ops: the scalar is a `const T&` of the tensor's element type; a scalar of another
 * type is a compile-time error, as in the declaration header. */
#define HPMOE_EMU_SCALAR(NAME, OP)                                                                    \
    template <typename T, bool isSetMask = true>                                                     \
    __aicore__ inline void NAME(const LocalTensor<T>& d, const LocalTensor<T>& s, const T& x, const int32_t& n) { \
        hpmoe_emu::VecScalar(hpmoe_emu::OP, hpmoe_emu::KindOf<T>::value, d.EmuRef(), s.EmuRef(), &x, n, #NAME); \
    }                                                                                                \
    template <typename T, bool isSetMask = true, typename U>                                         \
    __aicore__ inline void NAME(const LocalTensor<T>&, const LocalTensor<T>&, const U&, const int32_t&) { \
        static_assert(std::is_same<T, U>::value,                                                     \
                      #NAME ": the scalar must have exactly the tensor's element type");              \
    }
HPMOE_EMU_SCALAR(Muls, VO_MULS)
HPMOE_EMU_SCALAR(Adds, VO_ADDS)
HPMOE_EMU_SCALAR(Maxs, VO_MAXS)
HPMOE_EMU_SCALAR(Mins, VO_MINS)
#undef HPMOE_EMU_SCALAR

template <typename T>
__aicore__ inline void Duplicate(const LocalTensor<T>& d, const T& x, const int32_t& n) {
    hpmoe_emu::VecDuplicate(hpmoe_emu::KindOf<T>::value, d.EmuRef(), &x, n, "Duplicate");
}
template <typename T, typename U>
__aicore__ inline void Duplicate(const LocalTensor<T>&, const U&, const int32_t&) {
    static_assert(std::is_same<T, U>::value, "Duplicate: the scalar must have exactly the tensor's element type");
}

template <typename T>
__aicore__ inline void ReduceMax(const LocalTensor<T>& d, const LocalTensor<T>& s, const LocalTensor<T>& work,
                                 const int32_t n, bool calIndex = false) {
    static_assert(std::is_same<T, float>::value || std::is_same<T, half>::value,
                  "ReduceMax supports half and float");
    hpmoe_emu::VecReduce(hpmoe_emu::VO_REDUCE_MAX, hpmoe_emu::KindOf<T>::value, d.EmuRef(), s.EmuRef(), work.EmuRef(), n,
                         calIndex, "ReduceMax");
}
template <typename T>
__aicore__ inline void ReduceSum(const LocalTensor<T>& d, const LocalTensor<T>& s, const LocalTensor<T>& work,
                                 const int32_t n) {
    static_assert(std::is_same<T, float>::value || std::is_same<T, half>::value,
                  "ReduceSum supports half and float");
    hpmoe_emu::VecReduce(hpmoe_emu::VO_REDUCE_SUM, hpmoe_emu::KindOf<T>::value, d.EmuRef(), s.EmuRef(), work.EmuRef(), n,
                         false, "ReduceSum");
}

template <typename T1, typename T2>
__aicore__ inline void Cast(const LocalTensor<T1>& d, const LocalTensor<T2>& s, const RoundMode& mode, const uint32_t n) {
    static_assert(!std::is_same<T1, T2>::value || std::is_same<T1, float>::value || std::is_same<T1, half>::value,
                  "Cast between equal integer types is not a conversion");
    hpmoe_emu::VecCast(hpmoe_emu::KindOf<T1>::value, hpmoe_emu::KindOf<T2>::value, d.EmuRef(), s.EmuRef(),
                       static_cast<int>(mode), n, "Cast");
}

}  // namespace AscendC

#endif /* HPMOE_EMU_KERNEL_OPERATOR_H */
