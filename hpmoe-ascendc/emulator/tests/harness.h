/* Host side of the emulator's test kernels: one host thread per rank (ACL + SHMEM init, the
 * test's own setup and launch), then the status and the report lines on stdout, which
 * tests/backend/emulator_api.rs reads:
 *
 *   status=<aclrtSynchronizeStream result of rank 0>
 *   <one line per finding of hpmoe_emu::Report()>
 *   check <name> ok|FAILED ...   (the test's own output comparisons)
 */
#ifndef HPMOE_EMU_TEST_HARNESS_H
#define HPMOE_EMU_TEST_HARNESS_H

#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "acl/acl.h"
#include "aclshmem.h"
#include "hpmoe_emu/launch.h"

namespace harness {

/* Device buffer of n elements initialised from `host` (or zeroed). */
template <typename T>
T* Upload(const std::vector<T>& host) {
    void* p = nullptr;
    if (aclrtMalloc(&p, host.size() * sizeof(T), ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) {
        std::printf("check alloc FAILED\n");
        return nullptr;
    }
    aclrtMemcpy(p, host.size() * sizeof(T), host.data(), host.size() * sizeof(T), ACL_MEMCPY_HOST_TO_DEVICE);
    return static_cast<T*>(p);
}
template <typename T>
std::vector<T> Download(const T* dev, size_t n) {
    std::vector<T> out(n);
    aclrtMemcpy(out.data(), n * sizeof(T), dev, n * sizeof(T), ACL_MEMCPY_DEVICE_TO_HOST);
    return out;
}

/* Where the synchronisation registers' base address is (aclrtGetHardwareSyncAddr): a kernel with
 * cross-core flags takes it and calls SetSyncBaseAddr with the value there first. */
inline GM_ADDR SyncAddr() {
    void* p = nullptr;
    aclrtGetHardwareSyncAddr(&p);
    return static_cast<GM_ADDR>(p);
}

/* Compares bytes and prints one check line. */
template <typename T>
void Check(const char* name, const std::vector<T>& got, const std::vector<T>& want) {
    if (got.size() == want.size() && std::memcmp(got.data(), want.data(), got.size() * sizeof(T)) == 0) {
        std::printf("check %s ok\n", name);
        return;
    }
    size_t i = 0;
    while (i < got.size() && i < want.size() && std::memcmp(&got[i], &want[i], sizeof(T)) == 0) {
        ++i;
    }
    std::printf("check %s FAILED first difference at element %zu\n", name, i);
}

/* Runs `rank_main(rank, stream)` on one host thread per rank (each after aclInit, aclrtSetDevice,
 * aclshmemx_init_attr and aclrtCreateStream); rank_main launches and synchronises. Prints the
 * status of rank 0 and the report. */
inline int RunRanks(int ranks, const std::function<int(int, aclrtStream)>& rank_main) {
    std::vector<int> status(static_cast<size_t>(ranks), 0);
    std::vector<std::thread> threads;
    for (int r = 0; r < ranks; ++r) {
        threads.emplace_back([&, r]() {
            aclInit(nullptr);
            aclrtSetDevice(r);
            aclshmemx_init_attr_t attr;
            attr.my_pe = r;
            attr.n_pes = ranks;
            attr.local_mem_size = 64u << 20;
            aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_DEFAULT, &attr);
            aclrtStream stream = nullptr;
            aclrtCreateStream(&stream);
            status[static_cast<size_t>(r)] = rank_main(r, stream);
            aclrtDestroyStream(stream);
        });
    }
    for (auto& t : threads) {
        t.join();
    }
    std::printf("status=%d\n", status[0]);
    for (const std::string& line : hpmoe_emu::Report()) {
        std::printf("%s\n", line.c_str());
    }
    return 0;
}

}  // namespace harness

#endif /* HPMOE_EMU_TEST_HARNESS_H */
