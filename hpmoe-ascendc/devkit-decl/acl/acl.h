/* Declaration-only stand-in for the subset of the ACL runtime (`acl/acl.h`, CANN) that hpmoe's host
 * launcher (`include/hpmoe/host/launcher.h`) calls, written from the public AscendCL documentation
 * (names, parameter types and return types as published). For `g++ -fsyntax-only` checks of the
 * launcher's NPU build only: nothing here links or runs. */
#ifndef HPMOE_DECL_ACL_H
#define HPMOE_DECL_ACL_H

#include <cstddef>
#include <cstdint>

typedef int aclError;
#define ACL_SUCCESS 0
typedef void* aclrtStream;

typedef enum aclrtMemMallocPolicy {
    ACL_MEM_MALLOC_HUGE_FIRST,
    ACL_MEM_MALLOC_HUGE_ONLY,
    ACL_MEM_MALLOC_NORMAL_ONLY,
} aclrtMemMallocPolicy;

typedef enum aclrtMemcpyKind {
    ACL_MEMCPY_HOST_TO_HOST,
    ACL_MEMCPY_HOST_TO_DEVICE,
    ACL_MEMCPY_DEVICE_TO_HOST,
    ACL_MEMCPY_DEVICE_TO_DEVICE,
} aclrtMemcpyKind;

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
/* Device address where the base address of the cross-core synchronisation registers is kept: a
 * mixed kernel that uses cross-core flags reads it and calls SetSyncBaseAddr first. */
aclError aclrtGetHardwareSyncAddr(void** addr);
}

#endif /* HPMOE_DECL_ACL_H */
