/* hpmoe AscendC emulator: launching a kernel.
 *
 *   aclError e = HPMOE_EMU_LAUNCH(kernel, blockDim, stream, args...);
 *
 * stands for `ACLRT_LAUNCH_KERNEL(kernel)(blockDim, stream, args...)` on the NPU. Called from
 * each rank's host thread (after aclshmemx_init_attr); asynchronous: aclrtSynchronizeStream(stream)
 * waits for it and returns non-ACL_SUCCESS when the run reported an error, which
 * hpmoe_emu::Report() then gives as text lines. All cores of all ranks start together once every
 * rank (n_pes of SHMEM init, 1 without it) has launched. */
#ifndef HPMOE_EMU_LAUNCH_H
#define HPMOE_EMU_LAUNCH_H

#include <string>
#include <vector>

#include "../acl/acl.h"
#include "core.h"

#define HPMOE_EMU_LAUNCH(kernel, blockDim, stream, ...) \
    ::hpmoe_emu::LaunchKernel(#kernel, (blockDim), (stream), [=]() { kernel(__VA_ARGS__); })

#endif /* HPMOE_EMU_LAUNCH_H */
