/* hpmoe device runtime: common configuration.
 *
 * Every runtime header includes this first. On the device it brings in the AscendC basic API;
 * with HPMOE_HOST_TEST defined (the crate's tests compile the table reader with a host C++
 * compiler and run it) it defines the AscendC qualifiers away instead, so the parts that do not
 * touch AscendC (abi.h, crc32.h, table.h, flag_plan.h) can be executed on a CPU. */
#ifndef HPMOE_CONFIG_H
#define HPMOE_CONFIG_H

#include <stdint.h>

#if defined(HPMOE_HOST_TEST)
#ifndef __aicore__
#define __aicore__
#endif
#ifndef __gm__
#define __gm__
#endif
#else
#include "kernel_operator.h"
#endif

/* Qualifier of every runtime function. */
#define HPMOE_FN __aicore__ inline

/* Verify the schedule table's CRC-32 on every core at kernel start. Off by default: a scalar CRC
 * over a large table costs milliseconds per launch. The magic, version, size and the checksum
 * field are always checked against the values the kernel was generated with. */
#ifndef HPMOE_VERIFY_TABLE_CRC
#define HPMOE_VERIFY_TABLE_CRC 0
#endif

#endif /* HPMOE_CONFIG_H */
