/* hpmoe AscendC emulator: the CANN SHMEM device API (`shmem.h`, `aclshmem_*` / `aclshmemx_*`)
 * on the emulator's symmetric heaps. Same signatures as devkit-decl/shmem.h; semantics from
 * hicann/shmem's public headers and ascendc-api.md, modelled strictly (README.md): puts and
 * atomics land at the issuing core's aclshmem_quiet (fence = quiet), put-with-signal delivers
 * its data and then its signal when issued. */
#ifndef HPMOE_EMU_SHMEM_H
#define HPMOE_EMU_SHMEM_H

#include <cstddef>
#include <cstdint>

#include "kernel_operator.h"

#define ACLSHMEM_DEVICE __aicore__ inline

/* Signal operations and comparisons (host_device/aclshmem_common_types.h). */
enum { ACLSHMEM_SIGNAL_SET, ACLSHMEM_SIGNAL_ADD };
enum { ACLSHMEM_CMP_EQ = 0, ACLSHMEM_CMP_NE, ACLSHMEM_CMP_GT, ACLSHMEM_CMP_GE, ACLSHMEM_CMP_LT, ACLSHMEM_CMP_LE };

struct non_contiguous_copy_param {
    uint32_t repeat;
    uint32_t length;
    uint32_t src_ld;
    uint32_t dst_ld;
};

extern "C" {
/* Host and device share these two: on a core thread they give the core's PE, on a host thread
 * the PE aclshmemx_init_attr recorded for it (src/shmem_host.cpp). */
int aclshmem_my_pe(void);
int aclshmem_n_pes(void);

ACLSHMEM_DEVICE __gm__ void* aclshmem_ptr(__gm__ void* p, int pe) { return hpmoe_emu::ShmemPtr(p, pe); }

ACLSHMEM_DEVICE void aclshmem_putmem(__gm__ void* dst, __gm__ void* src, uint32_t n, int32_t pe) {
    hpmoe_emu::ShmemPut(dst, src, n, pe, false, nullptr, 0, 0, "aclshmem_putmem");
}
ACLSHMEM_DEVICE void aclshmem_putmem_nbi(__gm__ void* dst, __gm__ void* src, uint32_t n, int32_t pe) {
    hpmoe_emu::ShmemPut(dst, src, n, pe, true, nullptr, 0, 0, "aclshmem_putmem_nbi");
}
ACLSHMEM_DEVICE void aclshmem_putmem_signal(__gm__ void* dst, __gm__ void* src, size_t n, __gm__ int32_t* sig,
                                            int32_t value, int op, int pe) {
    hpmoe_emu::ShmemPut(dst, src, n, pe, false, sig, value, op, "aclshmem_putmem_signal");
}
ACLSHMEM_DEVICE void aclshmem_putmem_signal_nbi(__gm__ void* dst, __gm__ void* src, size_t n, __gm__ int32_t* sig,
                                                int32_t value, int op, int pe) {
    hpmoe_emu::ShmemPut(dst, src, n, pe, true, sig, value, op, "aclshmem_putmem_signal_nbi");
}

ACLSHMEM_DEVICE void aclshmemx_signal_op(__gm__ int32_t* sig, int32_t value, int op, int pe) {
    hpmoe_emu::ShmemSignalOp(sig, value, op, pe);
}
ACLSHMEM_DEVICE int32_t aclshmem_signal_wait_until(__gm__ int32_t* sig, int cmp, int32_t value) {
    return hpmoe_emu::ShmemSignalWaitUntil(sig, cmp, value);
}

ACLSHMEM_DEVICE void aclshmem_quiet() { hpmoe_emu::ShmemQuiet("aclshmem_quiet"); }
ACLSHMEM_DEVICE void aclshmem_fence() { hpmoe_emu::ShmemQuiet("aclshmem_fence"); }
ACLSHMEM_DEVICE void aclshmem_barrier_all() { hpmoe_emu::ShmemBarrierAll(); }
}  // extern "C"

/* Atomics: asynchronous; the add lands at the target when the issuing core calls aclshmem_quiet. */
ACLSHMEM_DEVICE void aclshmem_int32_atomic_add(__gm__ int32_t* dst, int32_t value, int32_t pe) {
    hpmoe_emu::ShmemAtomicAdd(dst, hpmoe_emu::K_I32, &value, pe, "aclshmem_int32_atomic_add");
}
ACLSHMEM_DEVICE void aclshmem_float_atomic_add(__gm__ float* dst, float value, int32_t pe) {
    hpmoe_emu::ShmemAtomicAdd(dst, hpmoe_emu::K_F32, &value, pe, "aclshmem_float_atomic_add");
}

#endif /* HPMOE_EMU_SHMEM_H */
