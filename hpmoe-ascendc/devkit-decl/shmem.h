/* Declaration-only stand-in for the CANN SHMEM device API (`shmem.h`, names `aclshmem_*` /
 * `aclshmemx_*`), written from the library's public headers; see kernel_operator.h for what these
 * stand-ins are and are not. Signatures as published: note that putmem takes a uint32_t byte
 * count and putmem_signal a size_t, and that signal words are int32_t in global memory. */
#ifndef HPMOE_DECL_SHMEM_H
#define HPMOE_DECL_SHMEM_H

#include <cstddef>
#include <cstdint>

#include "kernel_operator.h"

#define ACLSHMEM_DEVICE __aicore__ inline

/* Signal operations and comparisons (host_device/aclshmem_common_types.h). */
enum { ACLSHMEM_SIGNAL_SET, ACLSHMEM_SIGNAL_ADD };
enum { ACLSHMEM_CMP_EQ = 0, ACLSHMEM_CMP_NE, ACLSHMEM_CMP_GT, ACLSHMEM_CMP_GE, ACLSHMEM_CMP_LT, ACLSHMEM_CMP_LE };

/* Strided copy: `repeat` blocks of `length` elements, block heads `src_ld` / `dst_ld` apart. */
struct non_contiguous_copy_param {
    uint32_t repeat;
    uint32_t length;
    uint32_t src_ld;
    uint32_t dst_ld;
};

extern "C" {
/* Team. */
ACLSHMEM_DEVICE int aclshmem_my_pe(void) { return 0; }
ACLSHMEM_DEVICE int aclshmem_n_pes(void) { return 1; }
/* Address of a symmetric object on another PE, or null when it cannot be reached by load/store. */
ACLSHMEM_DEVICE __gm__ void* aclshmem_ptr(__gm__ void*, int) { return nullptr; }

/* RMA: contiguous puts of `elem_size` bytes from local src to symmetric dst on `pe`. */
ACLSHMEM_DEVICE void aclshmem_putmem(__gm__ void*, __gm__ void*, uint32_t, int32_t) {}
ACLSHMEM_DEVICE void aclshmem_putmem_nbi(__gm__ void*, __gm__ void*, uint32_t, int32_t) {}
/* Put, then update the signal word `sig_addr` on `pe` with `signal` (SET or ADD) after the data. */
ACLSHMEM_DEVICE void aclshmem_putmem_signal(__gm__ void*, __gm__ void*, size_t, __gm__ int32_t*, int32_t, int, int) {}
ACLSHMEM_DEVICE void aclshmem_putmem_signal_nbi(__gm__ void*, __gm__ void*, size_t, __gm__ int32_t*, int32_t, int,
                                                int) {}

/* Signals and point-to-point synchronisation. */
ACLSHMEM_DEVICE void aclshmemx_signal_op(__gm__ int32_t*, int32_t, int, int) {}
ACLSHMEM_DEVICE int32_t aclshmem_signal_wait_until(__gm__ int32_t*, int, int32_t) { return 0; }

/* Memory ordering: quiet completes every put issued by this PE; fence orders them (the library
 * implements fence as quiet). */
ACLSHMEM_DEVICE void aclshmem_quiet() {}
ACLSHMEM_DEVICE void aclshmem_fence() {}
ACLSHMEM_DEVICE void aclshmem_barrier_all() {}
}  // extern "C"

/* Atomics: scalar read-modify-write on symmetric memory of `pe`, usable from AIC and AIV cores. */
ACLSHMEM_DEVICE void aclshmem_int32_atomic_add(__gm__ int32_t*, int32_t, int32_t) {}

#endif /* HPMOE_DECL_SHMEM_H */
