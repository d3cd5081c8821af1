/* hpmoe device runtime: layouts shared by the kernel and the host program that launches it.
 *
 * Plain C-compatible structs with fixed sizes; include this header from host code to read the
 * diagnostics area after a launch and to check the flag plan blob. Little-endian throughout. */
#ifndef HPMOE_ABI_H
#define HPMOE_ABI_H

#include <stdint.h>

/* ---- Diagnostics area (one per rank, `diag` kernel argument, zeroed by the host before each
 * launch, 64-byte aligned): a 64-byte header, then one 64-byte record per core of the rank,
 * indexed by local core id (AIC 0..aic_per_rank-1, then AIV). Each core writes only its own
 * record (one cache line), and the header's `abort` word when it stops early. ---- */
#define HPMOE_DIAG_HEADER_BYTES 64u
#define HPMOE_DIAG_RECORD_BYTES 64u
#define HPMOE_DIAG_BYTES(cores_per_rank) (HPMOE_DIAG_HEADER_BYTES + HPMOE_DIAG_RECORD_BYTES * (cores_per_rank))

/* hpmoe_diag_record.status */
#define HPMOE_STATUS_NOT_RUN 0u      /* zero from the host: the core never started */
#define HPMOE_STATUS_RUNNING 1u      /* started; still running, or killed without a record */
#define HPMOE_STATUS_DONE 2u         /* ran every entry of its list */
#define HPMOE_STATUS_WAIT_TIMEOUT 3u /* a counter wait timed out: counter, expected, seen say which */
#define HPMOE_STATUS_FLAG_TIMEOUT 4u /* its AIVs did not consume hardware flags in time */
#define HPMOE_STATUS_ABORTED 5u      /* stopped because another core of the rank failed */
#define HPMOE_STATUS_BAD_TABLE 6u    /* table or flag plan rejected at start; detail = HPMOE_TABLE_* */
#define HPMOE_STATUS_BAD_LAUNCH 7u   /* block count or PE count differ from the table's machine */
#define HPMOE_STATUS_BAD_TILE 8u     /* an entry names an instance this core kind cannot run */

/* hpmoe_diag_record.detail for HPMOE_STATUS_BAD_TABLE */
#define HPMOE_TABLE_OK 0u
#define HPMOE_TABLE_BAD_MAGIC 1u
#define HPMOE_TABLE_BAD_VERSION 2u
#define HPMOE_TABLE_WRONG_SIZE 3u
#define HPMOE_TABLE_WRONG_CHECKSUM 4u /* a valid table, but not the one this kernel was generated with */
#define HPMOE_TABLE_WRONG_SHAPE 5u
#define HPMOE_TABLE_CORRUPT 6u        /* CRC-32 of the bytes differs from the checksum field */
#define HPMOE_FLAGS_BAD_MAGIC 11u
#define HPMOE_FLAGS_BAD_VERSION 12u
#define HPMOE_FLAGS_WRONG_SIZE 13u
#define HPMOE_FLAGS_WRONG_CHECKSUM 14u
#define HPMOE_FLAGS_WRONG_TABLE 15u
#define HPMOE_FLAGS_CORRUPT 16u

/* hpmoe_diag_record.counter when the failed wait was on a hardware flag, not a counter. */
#define HPMOE_DIAG_FLAG_COUNTER 0x80000000u

typedef struct hpmoe_diag_header {
    uint32_t abort;        /* non-zero once a core of the rank stopped early */
    uint32_t reserved[15];
} hpmoe_diag_header;

typedef struct hpmoe_diag_record {
    uint32_t status;        /* HPMOE_STATUS_* */
    uint32_t core;          /* global core id: rank * cores_per_rank + local core */
    uint32_t entry;         /* position in the core's list of the entry being run or waited for */
    uint32_t instance;      /* its local tile instance id */
    uint32_t counter;       /* counter waited on (or HPMOE_DIAG_FLAG_COUNTER | flag id) */
    int32_t expected;       /* value the wait needed */
    int32_t seen;           /* value it last read */
    uint32_t tiles_done;    /* entries completed */
    uint32_t flag_consumed; /* AIV: hardware flag waits completed (its AIC reads it for back-pressure) */
    uint32_t flag_set;      /* AIC: hardware flags set */
    uint32_t detail;        /* HPMOE_TABLE_* for HPMOE_STATUS_BAD_TABLE, else 0 */
    uint32_t reserved[5];
} hpmoe_diag_record;

/* ---- Flag plan blob (`flags` kernel argument, NAME_flags.bin): which entries use the hardware
 * cross-core flag between an AIC and its own two AIVs instead of a global-memory counter.
 *   hpmoe_flags_header, then uint32_t totals[cores], then uint8_t ops[entries], zero-padded to 4.
 * totals: per global core, the flag sets (AIC) or flag waits (AIV) of its whole list.
 * ops: per table entry; on an AIC, 1 = set the flag after the tile; on an AIV, the number of flag
 * waits to do before the tile. The CRC-32 covers bytes 16 .. total_bytes. ---- */
#define HPMOE_FLAGS_MAGIC "HPMOEFLG"
#define HPMOE_FLAGS_FORMAT_VERSION 1u
#define HPMOE_FLAGS_HEADER_BYTES 40u
#define HPMOE_NO_FLAG 0xFFFFFFFFu

typedef struct hpmoe_flags_header {
    uint8_t magic[8];        /* HPMOE_FLAGS_MAGIC, without a NUL */
    uint32_t version;        /* HPMOE_FLAGS_FORMAT_VERSION */
    uint32_t checksum;       /* CRC-32 of bytes [16, total_bytes) */
    uint32_t total_bytes;
    uint32_t cores;          /* ranks * cores_per_rank */
    uint32_t entries;        /* entry_count of the table */
    uint32_t flag_id;        /* hardware flag id used, or HPMOE_NO_FLAG */
    uint32_t table_checksum; /* checksum field of the table this plan belongs to */
    uint32_t flagged_edges;  /* dependencies carried by the flag instead of a counter */
} hpmoe_flags_header;

#ifdef __cplusplus
static_assert(sizeof(hpmoe_diag_header) == HPMOE_DIAG_HEADER_BYTES, "hpmoe_diag_header is 64 bytes");
static_assert(sizeof(hpmoe_diag_record) == HPMOE_DIAG_RECORD_BYTES, "hpmoe_diag_record is 64 bytes");
static_assert(sizeof(hpmoe_flags_header) == HPMOE_FLAGS_HEADER_BYTES, "hpmoe_flags_header is 40 bytes");
#endif

#endif /* HPMOE_ABI_H */
