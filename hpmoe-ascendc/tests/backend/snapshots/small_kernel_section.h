/* ---- Kernel `small` (hpmoe-ascendc): launch, arguments, workspaces, flags. ---- */
#ifndef HPMOE_SMALL_KERNEL_H
#define HPMOE_SMALL_KERNEL_H

/* Launch on every rank, with the SHMEM library initialised over HPMOE_SMALL_RANKS PEs:
 *   small<<<HPMOE_SMALL_BLOCKS, nullptr, stream>>>(x, w, recv, h, y, table, flags, counters, diag, workspace, tiling, ffts);
 * KERNEL_TYPE_MIX_AIC_1_2: HPMOE_SMALL_BLOCKS AIC and twice as many AIV cores. */
#define HPMOE_SMALL_BLOCKS 1u

/* Tensor arguments, in order: bytes on each rank. Inputs, outputs and scratch are ordinary device
 * memory; symmetric tensors must come from the SHMEM symmetric heap (aclshmem_malloc), the same
 * allocation on every rank. */
#define HPMOE_SMALL_TENSORS 5u
#define HPMOE_SMALL_TENSOR_X_BYTES 1024ull /* input bf16 [16, 32] */
#define HPMOE_SMALL_TENSOR_W_BYTES 4096ull /* input bf16 [32, 64] */
#define HPMOE_SMALL_TENSOR_RECV_BYTES 1024ull /* symmetric bf16 [16, 32] */
#define HPMOE_SMALL_TENSOR_H_BYTES 2048ull /* scratch bf16 [16, 64] */
#define HPMOE_SMALL_TENSOR_Y_BYTES 2048ull /* output f32 [16, 32] */

/* Counter workspace (`counters`): symmetric, one int32 per counter, zeroed on every rank before each
 * launch, and the zeroing finished on all ranks (a barrier) before any rank launches. */
#define HPMOE_SMALL_COUNTER_BYTES 8u
/* Diagnostics area (`diag`): 64-byte aligned, zeroed before each launch, read back after; layout in
 * hpmoe/abi.h (a 64-byte header, then one 64-byte record per core of the rank). */
#define HPMOE_SMALL_DIAG_BYTES 256u

/* Flag plan (`flags`, NAME_flags.bin): the dependencies the hardware flag between an AIC and its own
 * AIVs carries instead of a counter. */
#define HPMOE_SMALL_FLAG_ID 15u
#define HPMOE_SMALL_FLAGGED_EDGES 4u
#define HPMOE_SMALL_FLAGS_TOTAL_BYTES 80u
#define HPMOE_SMALL_FLAGS_CHECKSUM 0x5CA54804u

/* Matmul groups: the `tiling` argument holds one TCubeTiling per group, in this order, computed on
 * the host (matmul_tiling::MultiCoreMatmulTiling, A/B/C in GM, ND) for the group's largest tile: M x N x K. */
#define HPMOE_SMALL_MATMUL_GROUPS 1u
#define HPMOE_SMALL_MATMUL0_M 8u /* bf16 x bf16 -> bf16: gmm */
#define HPMOE_SMALL_MATMUL0_N 64u
#define HPMOE_SMALL_MATMUL0_K 32u

/* Bound of every counter wait, in microseconds: a core still waiting after it writes a diagnostic
 * record and stops. Define it before including this header to change it. */
#ifndef HPMOE_SMALL_WAIT_TIMEOUT_US
#define HPMOE_SMALL_WAIT_TIMEOUT_US 5000000u
#endif

#endif /* HPMOE_SMALL_KERNEL_H */
