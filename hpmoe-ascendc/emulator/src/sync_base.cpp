/* hpmoe AscendC emulator: the base address of the cross-core synchronisation registers, and the
 * SHMEM host barrier.
 *
 * A mixed kernel that uses cross-core flags is given, by the host, the device address where the
 * runtime keeps the base address of the synchronisation registers (aclrtGetHardwareSyncAddr), and
 * must call AscendC::SetSyncBaseAddr with the value stored there before its first
 * CrossCoreSetFlag / CrossCoreWaitFlag (the dev kit's asc_set_ffts_base_addr: "must be set before
 * core synchronisation"; every public mixed kernel with cross-core flags does it first). Here each
 * device's value is a distinct tag in a small GM allocation; a core whose flag call comes before a
 * SetSyncBaseAddr with its own device's tag is an error. */
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>

#include "../include/acl/acl.h"
#include "../include/aclshmem.h"
#include "machine.h"

namespace hpmoe_emu {

namespace {
std::mutex g_sync_mutex;
/* Per device: the tag and the allocation holding it. */
std::map<int, std::pair<uint64_t, uint8_t*>> g_sync_addr;
/* Whether this core thread set the base address (every core is a fresh thread of its launch). */
thread_local bool tl_sync_set = false;

uint64_t TagOf(int device) { return 0x5EC0'0000'0000'0000ull | static_cast<uint64_t>(device) << 8 | 0xF7; }

/* Host barrier state (aclshmemx_barrier_all_on_stream). */
std::mutex g_barrier_mutex;
std::condition_variable g_barrier_cv;
int g_barrier_arrived = 0;
uint64_t g_barrier_gen = 0;
}  // namespace

void SetSyncBase(uint64_t config) {
    Core& c = Cur("SetSyncBaseAddr");
    bool known = false;
    {
        std::lock_guard<std::mutex> lk(g_sync_mutex);
        for (const auto& d : g_sync_addr) {
            known = known || d.second.first == config;
        }
    }
    if (!known) {
        char buf[160];
        std::snprintf(buf, sizeof(buf), "SetSyncBaseAddr(0x%llx): not a value aclrtGetHardwareSyncAddr gave the host",
                      static_cast<unsigned long long>(config));
        Fail(c, "sync_base_wrong", "SetSyncBaseAddr", buf);
    }
    tl_sync_set = true;
}

void CheckSyncBase(Core& c, const char* call) {
    if (!tl_sync_set) {
        Fail(c, "sync_base_not_set", call,
             "a cross-core flag before AscendC::SetSyncBaseAddr (the kernel must set the synchronisation registers' "
             "base address, from the host's aclrtGetHardwareSyncAddr, first)");
    }
}

}  // namespace hpmoe_emu

extern "C" {
aclError aclrtGetHardwareSyncAddr(void** addr) {
    if (addr == nullptr) {
        return ACL_ERROR_INVALID_PARAM;
    }
    const int device = hpmoe_emu::HostDevice();
    std::lock_guard<std::mutex> lk(hpmoe_emu::g_sync_mutex);
    auto it = hpmoe_emu::g_sync_addr.find(device);
    if (it == hpmoe_emu::g_sync_addr.end()) {
        uint8_t* p = hpmoe_emu::GmAllocate(sizeof(uint64_t), "aclrtGetHardwareSyncAddr", -1, -1);
        if (p == nullptr) {
            return ACL_ERROR_BAD_ALLOC;
        }
        const uint64_t tag = hpmoe_emu::TagOf(device);
        std::memcpy(p, &tag, sizeof(tag));
        it = hpmoe_emu::g_sync_addr.emplace(device, std::make_pair(tag, p)).first;
    }
    *addr = it->second.second;
    return ACL_SUCCESS;
}

void aclshmemx_barrier_all_on_stream(void*) {
    const int n = aclshmem_n_pes();
    std::unique_lock<std::mutex> lk(hpmoe_emu::g_barrier_mutex);
    const uint64_t gen = hpmoe_emu::g_barrier_gen;
    if (++hpmoe_emu::g_barrier_arrived >= n) {
        hpmoe_emu::g_barrier_arrived = 0;
        ++hpmoe_emu::g_barrier_gen;
        hpmoe_emu::g_barrier_cv.notify_all();
        return;
    }
    hpmoe_emu::g_barrier_cv.wait(lk, [&] { return hpmoe_emu::g_barrier_gen != gen; });
}
}
