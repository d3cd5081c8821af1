/* hpmoe AscendC emulator: the interface between the device-API headers (kernel_operator.h,
 * shmem.h, lib/...) and the machine in src/. The headers are thin: they map element types to
 * kinds and forward every API call here; every check and every effect happens in src/.
 *
 * Nothing here is the CANN toolkit's code; semantics come from the public AscendC / SHMEM
 * documentation (see ../../README.md for what is emulated and the assumptions). */
#ifndef HPMOE_EMU_CORE_H
#define HPMOE_EMU_CORE_H

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace hpmoe_emu {

/* Element kinds of the device's scalar types. */
enum Kind : uint8_t { K_F32, K_F16, K_BF16, K_I8, K_U8, K_I16, K_U16, K_I32, K_U32, K_I64, K_U64 };
const char* KindName(int kind);
uint32_t KindBytes(int kind);

/* IEEE binary16 and bfloat16 conversions (float -> narrow: round to nearest, ties to even). */
uint16_t FloatToHalfBits(float f);
float HalfBitsToFloat(uint16_t h);
uint16_t FloatToBf16Bits(float f);
float Bf16BitsToFloat(uint16_t h);

/* Emulator pipe indices (PIPE_FIX = 10 on the device maps to 6). */
enum Pipe : uint8_t { EP_S = 0, EP_V, EP_M, EP_MTE1, EP_MTE2, EP_MTE3, EP_FIX, EP_COUNT };
int PipeFromDevice(int device_pipe);

struct Slot; /* one buffer of a TQue / TBuf in a core's local memory (src/) */
struct Queue;

/* What a LocalTensor refers to: `bytes` bytes at `addr` in the core's local memory, inside
 * buffer `slot` (generation `gen`: FreeTensor bumps it, so stale tensors are caught). */
struct LocalRef {
    uint8_t* addr = nullptr;
    uint32_t bytes = 0;
    Slot* slot = nullptr;
    uint32_t gen = 0;
};

/* What a GlobalTensor refers to; `bytes` is UINT64_MAX when SetGlobalBuffer had no size. */
struct GlobalRef {
    uint8_t* addr = nullptr;
    uint64_t bytes = UINT64_MAX;
};

/* ---- identity and time ---- */
bool IsAic();
bool IsAiv();
int64_t BlockIdx();
int64_t BlockNum();
int64_t SubBlockIdx();
int64_t TaskRation();
void NoteKernelType(int type);
int64_t SystemCycle();
void SetSysWorkspace(uint8_t* p);
uint8_t* SysWorkspace();
/* kind < 0: SetAtomicNone. */
void SetAtomic(int kind, const char* call);

/* ---- in-core synchronisation ---- */
void PipeBarrier(int device_pipe);
void SetFlag(int event, int32_t id);
void WaitFlag(int event, int32_t id);
/* The lowest id of `event` with no SetFlag pending (TPipe::FetchEventID). */
int FetchEventID(int event);

/* ---- cross-core ---- */
void CrossCoreSet(int mode, int device_pipe, uint16_t id);
void CrossCoreWait(int mode, int device_pipe, uint16_t id);
void SyncAll(bool aiv_only);
/* AscendC::SetSyncBaseAddr: must be given the value the host's aclrtGetHardwareSyncAddr points at,
 * before the core's first cross-core flag. */
void SetSyncBase(uint64_t config);

/* ---- local memory: pipe, queues, buffers, tensors ---- */
/* TPosition values as in kernel_operator.h. */
Queue* QueInit(int position, int depth, int num, uint32_t len);
LocalRef QueAlloc(Queue* q, const char* call);
bool QueEnQue(Queue* q, const LocalRef& t);
LocalRef QueDeQue(Queue* q);
void QueFree(Queue* q, const LocalRef& t);
LocalRef BufInit(int position, uint32_t len);
LocalRef BufGet(const LocalRef& buf, uint64_t bytes, const char* call);
void PipeReset();
LocalRef LocalSub(const LocalRef& t, uint64_t byte_offset, uint32_t elem_bytes, const char* call);
void LocalScalar(const LocalRef& t, uint64_t byte_offset, void* value, uint32_t n, bool write, const char* call);
void CheckLocal(const LocalRef& t, const char* call);

/* ---- global memory ---- */
void GmScalar(const GlobalRef& g, uint64_t byte_offset, void* value, uint32_t n, bool write, const char* call);
void GmCheckRange(const void* p, uint64_t n, const char* call);
void DataCacheCleanAndInvalid(const void* p, bool entire, int dst);
void DataCacheLocal(const LocalRef& t);

/* ---- data movement ---- */
struct CopyDesc {
    bool pad_api = false;      /* DataCopyPad (byte lengths) rather than DataCopy (32-byte blocks) */
    bool counted = false;      /* DataCopy(dst, src, count) form */
    uint32_t count = 0;        /* elements, counted form */
    uint16_t block_count = 1;
    uint32_t block_len = 0;
    uint32_t src_stride = 0;
    uint32_t dst_stride = 0;
    uint32_t rsv = 0;
    bool is_pad = false;
    uint8_t left_pad = 0;
    uint8_t right_pad = 0;
    uint64_t pad_bits = 0;
    uint32_t elem = 1;
};
void CopyGmToLocal(const LocalRef& dst, const GlobalRef& src, const CopyDesc& d, const char* call);
void CopyLocalToGm(const GlobalRef& dst, const LocalRef& src, const CopyDesc& d, const char* call);
void CopyLocalToLocal(const LocalRef& dst, const LocalRef& src, const CopyDesc& d, const char* call);

/* ---- vector ---- */
enum VecOpKind : uint8_t {
    VO_ADD, VO_SUB, VO_MUL, VO_DIV, VO_MAX, VO_MIN,
    VO_EXP, VO_ABS, VO_RECIP, VO_SQRT,
    VO_MULS, VO_ADDS, VO_MAXS, VO_MINS,
    VO_REDUCE_MAX, VO_REDUCE_SUM,
};
void VecBinary(int op, int kind, const LocalRef& d, const LocalRef& a, const LocalRef& b, int32_t n, const char* call);
void VecUnary(int op, int kind, const LocalRef& d, const LocalRef& s, int32_t n, const char* call);
void VecScalar(int op, int kind, const LocalRef& d, const LocalRef& s, const void* scalar, int32_t n, const char* call);
void VecDuplicate(int kind, const LocalRef& d, const void* scalar, int32_t n, const char* call);
void VecReduce(int op, int kind, const LocalRef& d, const LocalRef& s, const LocalRef& work, int32_t n, bool index,
               const char* call);
void VecCast(int dkind, int skind, const LocalRef& d, const LocalRef& s, int mode, uint32_t n, const char* call);
void VecSwiGlu(int kind, const LocalRef& d, const LocalRef& a, const LocalRef& b, float beta, const LocalRef* work,
               uint32_t n, const char* call);

/* ---- matmul ---- */
struct MatmulDesc {
    const void* tiling = nullptr; /* TCubeTiling* */
    int akind = 0, bkind = 0, ckind = 0;
    bool trans_a = false, trans_b = false;         /* SetTensorA/B's isTranspose */
    bool may_trans_a = false, may_trans_b = false; /* the MatmulTypes' isTrans */
    bool a_set = false, b_set = false;
    const uint8_t* a = nullptr;
    const uint8_t* b = nullptr;
    int org_m = -1, org_n = -1, org_ka = -1, org_kb = -1, org_kc = 0;
    int single_m = -1, single_n = -1, single_k = -1;
    int tail_m = -1, tail_n = -1, tail_k = -1;
    bool inited = false;
    bool ended = false;
    bool org_set = false; /* SetOrgShape was called (it must precede SetTensorA/B) */
    /* Iterate/GetTensorC: the one base block this object's CO1 holds (FP32 accumulators,
     * l0c_m x l0c_n, row-major), whether it holds one not yet fetched by GetTensorC, and whether
     * Iterate already computed the block of the current SetTensorA/B (one block per Iterate). */
    std::vector<float> l0c;
    int l0c_m = 0, l0c_n = 0;
    bool l0c_valid = false;
    bool block_done = false;
};
void MatmulInit(MatmulDesc& mm, const void* tiling, bool cube_only, const char* call);
void MatmulCheckShape(MatmulDesc& mm, const char* call);
/* enAtomic: 0 overwrites C, 1 adds into an FP32 C (IterateAll's AtomicAdd). */
void MatmulIterateAll(MatmulDesc& mm, uint8_t* c, uint64_t c_bytes, uint8_t atomic, const char* call);
/* Iterate(enPartialSum) of a single shape equal to the tiling's base block: the product into
 * CO1, continuing CO1's accumulators when partial (see lib/matmul_intf.h). Returns true. */
bool MatmulIterate(MatmulDesc& mm, bool partial, const char* call);
/* GetTensorC to GM: CO1's block, rounded once to C's type, written (enAtomic 0) or added into an
 * FP32 C (1) by FIX, rows orgKc apart; CO1 is released. */
void MatmulGetTensorC(MatmulDesc& mm, uint8_t* c, uint64_t c_bytes, uint8_t atomic, bool sequential, const char* call);
void MatmulEnd(MatmulDesc& mm);
/* Reports a use of an API feature the emulator does not model (an error, never a silent skip). */
void Unsupported(const char* call, const char* what);

/* ---- SHMEM device side (called by the inline functions of shmem.h) ---- */
void* ShmemPtr(void* p, int pe);
void ShmemPut(void* dst, const void* src, uint64_t n, int pe, bool nbi, int32_t* sig, int32_t sig_value, int sig_op,
              const char* call);
void ShmemSignalOp(int32_t* sig, int32_t value, int op, int pe);
int32_t ShmemSignalWaitUntil(int32_t* sig, int cmp, int32_t value);
void ShmemAtomicAdd(void* dst, int kind, const void* value, int pe, const char* call);
void ShmemQuiet(const char* call);
void ShmemBarrierAll();

/* ---- launch (host side) ---- */
int LaunchKernel(const char* name, uint32_t block_dim, void* stream, std::function<void()> body);
/* One line per finding of the last finished launch (empty when it passed). */
std::vector<std::string> Report();

}  // namespace hpmoe_emu

#endif /* HPMOE_EMU_CORE_H */
