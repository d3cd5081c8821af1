/* hpmoe device runtime: everything a generated kernel includes.
 *
 * Include order in a generated NAME.cpp: kernel_operator.h (and lib/matmul_intf.h when the
 * taskflow has matmuls), shmem.h, NAME_schedule.h (table layout and constants), then this.
 *
 *   abi.h         layouts shared with the host: diagnostics records, flag plan header
 *   crc32.h       CRC-32 of the table and flag plan
 *   table.h       schedule table reader and start-of-kernel checks
 *   flag_plan.h   flag plan reader
 *   view.h        regions as strided matrices in global memory
 *   diag.h        diagnostics records and the abort word
 *   counters.h    global-memory counters: atomic add to signal, bounded polling to wait
 *   context.h     what a running tile knows; its signals
 *   comm.h        SHMEM puts with signal (AIV)
 *   flags.h       hardware cross-core flags, AIC <-> own AIVs, with back-pressure
 *   vector_ops.h  built-in vector ops (AIV)
 *   vector_backward_ops.h  the backward's built-in vector ops (AIV)
 *   cube_ops.h    matmul tiles (AIC)
 *   worker.h      the AIC and AIV worker loops */
#ifndef HPMOE_RUNTIME_H
#define HPMOE_RUNTIME_H

#include "abi.h"
#include "comm.h"
#include "config.h"
#include "context.h"
#include "counters.h"
#include "crc32.h"
#include "cube_ops.h"
#include "diag.h"
#include "flag_plan.h"
#include "flags.h"
#include "table.h"
#include "vector_backward_ops.h"
#include "vector_ops.h"
#include "view.h"
#include "worker.h"

#endif /* HPMOE_RUNTIME_H */
