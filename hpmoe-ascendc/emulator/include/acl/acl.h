/* hpmoe AscendC emulator: the subset of the ACL runtime (`acl/acl.h`) a host launcher uses, with
 * CANN's names and signatures. Device memory is emulated global memory (registered, with a guard
 * page after each allocation, README.md); a stream is a handle whose synchronisation waits for
 * the emulated launch. Only what is listed here exists. */
#ifndef HPMOE_EMU_ACL_H
#define HPMOE_EMU_ACL_H

#include <cstddef>
#include <cstdint>

using aclError = int;
using aclrtStream = void*;

constexpr aclError ACL_SUCCESS = 0;
constexpr aclError ACL_ERROR_INVALID_PARAM = 100000;
constexpr aclError ACL_ERROR_BAD_ALLOC = 200000;
/* Returned by aclrtSynchronizeStream when the emulated kernel reported an error (the AI Core
 * exception code of the runtime); hpmoe_emu::Report() says what. */
constexpr aclError ACL_ERROR_RT_AICORE_EXCEPTION = 507015;
/* Returned by aclrtSynchronizeStream when the launch ran past HPMOE_EMU_TIMEOUT_MS or deadlocked. */
constexpr aclError ACL_ERROR_RT_AICORE_TIMEOUT = 507014;

enum aclrtMemMallocPolicy {
    ACL_MEM_MALLOC_HUGE_FIRST = 0,
    ACL_MEM_MALLOC_HUGE_ONLY = 1,
    ACL_MEM_MALLOC_NORMAL_ONLY = 2,
};
enum aclrtMemcpyKind {
    ACL_MEMCPY_HOST_TO_HOST = 0,
    ACL_MEMCPY_HOST_TO_DEVICE = 1,
    ACL_MEMCPY_DEVICE_TO_HOST = 2,
    ACL_MEMCPY_DEVICE_TO_DEVICE = 3,
};

extern "C" {
aclError aclInit(const char* configPath);
aclError aclFinalize();
aclError aclrtSetDevice(int32_t deviceId);
aclError aclrtResetDevice(int32_t deviceId);
aclError aclrtCreateStream(aclrtStream* stream);
aclError aclrtDestroyStream(aclrtStream stream);
aclError aclrtSynchronizeStream(aclrtStream stream);
aclError aclrtMalloc(void** devPtr, size_t size, aclrtMemMallocPolicy policy);
aclError aclrtFree(void* devPtr);
aclError aclrtMemcpy(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind);
aclError aclrtMemset(void* devPtr, size_t maxCount, int32_t value, size_t count);
/* Device address holding the base address of the cross-core synchronisation registers; a mixed
 * kernel reads it and passes it to AscendC::SetSyncBaseAddr before its first cross-core flag. */
aclError aclrtGetHardwareSyncAddr(void** addr);
}

#endif /* HPMOE_EMU_ACL_H */
