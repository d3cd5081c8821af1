/* Declaration-only stand-in for the host side of the CANN SHMEM library (`aclshmem.h`: init,
 * symmetric heap, host-side barrier) that hpmoe's host launcher calls, written from the library's
 * public headers and API documentation (hicann/shmem; the attribute fields vary between releases:
 * these follow the newest headers). For `g++ -fsyntax-only` checks of the
 * launcher's NPU build only. The device side is `shmem.h` beside this file. */
#ifndef HPMOE_DECL_ACLSHMEM_HOST_H
#define HPMOE_DECL_ACLSHMEM_HOST_H

#include <cstddef>
#include <cstdint>

#include "acl/acl.h"

#define ACLSHMEM_MAX_IP_PORT_LEN 64

/* How the PEs find each other at initialisation. */
typedef enum { ACLSHMEMX_INIT_WITH_DEFAULT = 0, ACLSHMEMX_INIT_WITH_UNIQUEID = 1 } aclshmemx_bootstrap_t;

/* Optional initialisation attributes (data engine, time-outs in seconds). */
typedef struct {
    int32_t version;
    int data_op_engine_type;
    uint32_t shm_init_timeout;
    uint32_t shm_create_timeout;
    uint32_t control_operation_timeout;
    int32_t sockFd;
} aclshmem_init_optional_attr_t;

/* Initialisation attributes: this process's rank, the number of ranks, the bootstrap address, and
 * the size of the rank's symmetric heap. */
typedef struct {
    int my_pe;
    int n_pes;
    char ip_port[ACLSHMEM_MAX_IP_PORT_LEN];
    uint64_t local_mem_size;
    aclshmem_init_optional_attr_t option_attr;
} aclshmemx_init_attr_t;

extern "C" {
int aclshmemx_init_attr(aclshmemx_bootstrap_t bootstrap_flags, aclshmemx_init_attr_t* attributes);
int aclshmem_finalize(void);
/* Collective: every PE allocates the same sizes in the same order; the result is symmetric. */
void* aclshmem_malloc(size_t size);
void aclshmem_free(void* ptr);
/* Host-side barrier of all PEs, ordered on `stream`. */
void aclshmemx_barrier_all_on_stream(aclrtStream stream);
}

#endif /* HPMOE_DECL_ACLSHMEM_HOST_H */
