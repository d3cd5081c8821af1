/* hpmoe AscendC emulator: the SHMEM host subset (hicann/shmem `include/host/`), names as there.
 * One process emulates every PE: each host thread calls aclshmemx_init_attr with its own my_pe
 * (recorded for that thread) and the common n_pes; each PE has its own heap. aclshmem_malloc is
 * collective (same sizes in the same order on every PE) and returns this PE's copy of the
 * object; object i of every PE is "the same symmetric object" (aclshmem_ptr, puts, signals and
 * atomics translate between them). */
#ifndef HPMOE_EMU_ACLSHMEM_H
#define HPMOE_EMU_ACLSHMEM_H

#include <cstddef>
#include <cstdint>

#define ACLSHMEM_MAX_IP_PORT_LEN 64
#define ACLSHMEM_SUCCESS 0
#define ACLSHMEM_INVALID_VALUE (-1)
#define ACLSHMEM_INVALID_PARAM (-2)

enum data_op_engine_type_t { ACLSHMEM_DATA_OP_MTE = 1, ACLSHMEM_DATA_OP_SDMA = 2, ACLSHMEM_DATA_OP_ROCE = 4 };
enum aclshmemx_bootstrap_t { ACLSHMEMX_INIT_WITH_DEFAULT = 0, ACLSHMEMX_INIT_WITH_UNIQUEID = 1 };

typedef struct {
    int32_t version;
    data_op_engine_type_t data_op_engine_type;
    uint32_t shm_init_timeout;
    uint32_t shm_create_timeout;
    uint32_t control_operation_timeout;
    int32_t sockFd;
} aclshmem_init_optional_attr_t;

typedef struct aclshmemx_init_attr_t {
    int my_pe = 0;
    int n_pes = 1;
    char ip_port[ACLSHMEM_MAX_IP_PORT_LEN] = {};
    uint64_t local_mem_size = 0;
    aclshmem_init_optional_attr_t option_attr = {(1 << 16) + static_cast<int32_t>(sizeof(aclshmem_init_optional_attr_t)),
                                                 ACLSHMEM_DATA_OP_MTE, 120, 120, 120, -1};
    void* comm_args = nullptr;
    uint64_t instance_id = 0;
} aclshmemx_init_attr_t;

/* Initialises this host thread's PE (attr->my_pe of attr->n_pes). local_mem_size bounds the
 * sum of this PE's aclshmem_malloc sizes. */
int aclshmemx_init_attr(aclshmemx_bootstrap_t flags, aclshmemx_init_attr_t* attr);
/* The older one-argument form. */
int aclshmemx_init_attr(aclshmemx_init_attr_t* attr);
extern "C" {
void* aclshmem_malloc(size_t size);
void aclshmem_free(void* ptr);
int aclshmem_finalize(void);
int aclshmem_my_pe(void);
int aclshmem_n_pes(void);
/* Host-side barrier of every PE (every PE's host thread calls it), ordered on `stream`. */
void aclshmemx_barrier_all_on_stream(void* stream);
}

#endif /* HPMOE_EMU_ACLSHMEM_H */
