/* hpmoe AscendC emulator: global memory. Every allocation (aclrtMalloc, aclshmem_malloc) is
 * registered; it is mapped with a filler before the data, a filler in the 32-byte slack after
 * it, and a PROT_NONE guard page right after that (like CANN's GmAlloc), so raw overruns fault
 * and the fault becomes a reported error. The ACL memory API, the scalar data cache
 * (GlobalTensor::GetValue/SetValue, DataCacheCleanAndInvalid) live here too. */
#include <sys/mman.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <map>
#include <shared_mutex>

#include "acl/acl.h"
#include "machine.h"

namespace hpmoe_emu {

void RecordGuardFault(Core& c) {
    Group& g = *c.g;
    std::lock_guard<std::mutex> lk(g.m);
    g.findings.push_back("error gm_guard_fault rank=" + std::to_string(c.rank) + " core=" + c.name +
                         " call=raw-access address=" + Hex(c.fault_addr) +
                         " is in the guard page after an allocation (a raw pointer ran past its end)");
    g.status = ACL_ERROR_RT_AICORE_EXCEPTION;
    g.cv.notify_all();
}

namespace {
constexpr uint8_t kFiller = 0xA5;
constexpr uint64_t kLine = 64;

std::shared_mutex g_gm_mutex;
std::map<uintptr_t, GmAlloc> g_allocs; /* by base */
std::map<uintptr_t, uintptr_t> g_guards; /* guard page start -> allocation base */

uint64_t Page() { return static_cast<uint64_t>(sysconf(_SC_PAGESIZE)); }
uint64_t AlignUp(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }
}  // namespace

uint8_t* GmAllocate(uint64_t size, const std::string& what, int pe, int sym) {
    const uint64_t page = Page();
    const uint64_t data = AlignUp(size == 0 ? 1 : size, 32);
    const uint64_t front = AlignUp(data, page) - data + page; /* at least one page of filler before */
    const uint64_t len = front + data + page;
    void* m = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
        return nullptr;
    }
    uint8_t* map = static_cast<uint8_t*>(m);
    uint8_t* guard = map + front + data;
    mprotect(guard, page, PROT_NONE);
    uint8_t* base = map + front;
    std::memset(map, kFiller, front);
    std::memset(base + size, kFiller, data - size);
    GmAlloc a;
    a.base = base;
    a.size = size;
    a.map = map;
    a.map_len = len;
    a.pe = pe;
    a.sym = sym;
    a.what = what;
    std::unique_lock<std::shared_mutex> lk(g_gm_mutex);
    g_allocs[reinterpret_cast<uintptr_t>(base)] = a;
    g_guards[reinterpret_cast<uintptr_t>(guard)] = reinterpret_cast<uintptr_t>(base);
    return base;
}

static std::string FillerCheck(const GmAlloc& a, const char* when) {
    const uint64_t data = AlignUp(a.size == 0 ? 1 : a.size, 32);
    for (uint8_t* p = a.map; p < a.base; ++p) {
        if (*p != kFiller) {
            return std::string("error gm_filler_overwritten call=") + when + " allocation " + Hex(a.base) +
                   " size=" + std::to_string(a.size) + " (" + a.what + "): byte " + std::to_string(a.base - p) +
                   " before its start was written";
        }
    }
    for (uint8_t* p = a.base + a.size; p < a.base + data; ++p) {
        if (*p != kFiller) {
            return std::string("error gm_filler_overwritten call=") + when + " allocation " + Hex(a.base) +
                   " size=" + std::to_string(a.size) + " (" + a.what + "): byte " + std::to_string(p - a.base) +
                   " past its end was written";
        }
    }
    return std::string();
}

std::vector<std::string> GmCheckFillers() {
    std::vector<std::string> out;
    std::shared_lock<std::shared_mutex> lk(g_gm_mutex);
    for (auto& kv : g_allocs) {
        std::string f = FillerCheck(kv.second, "end-of-launch");
        if (!f.empty()) {
            out.push_back(f);
        }
    }
    return out;
}

bool GmRelease(void* p) {
    GmAlloc a;
    {
        std::unique_lock<std::shared_mutex> lk(g_gm_mutex);
        auto it = g_allocs.find(reinterpret_cast<uintptr_t>(p));
        if (it == g_allocs.end()) {
            return false;
        }
        a = it->second;
        g_allocs.erase(it);
        g_guards.erase(reinterpret_cast<uintptr_t>(a.base + AlignUp(a.size == 0 ? 1 : a.size, 32)));
    }
    std::string f = FillerCheck(a, "aclrtFree");
    if (!f.empty()) {
        std::fprintf(stderr, "hpmoe emulator: %s\n", f.c_str());
    }
    munmap(a.map, a.map_len);
    return true;
}

bool GmFind(const void* p, GmAlloc& out) {
    const uintptr_t x = reinterpret_cast<uintptr_t>(p);
    std::shared_lock<std::shared_mutex> lk(g_gm_mutex);
    auto it = g_allocs.upper_bound(x);
    if (it == g_allocs.begin()) {
        return false;
    }
    --it;
    if (x >= it->first && x < it->first + (it->second.size == 0 ? 1 : it->second.size)) {
        out = it->second;
        return true;
    }
    return false;
}

bool GmIsGuard(const void* p) {
    const uintptr_t x = reinterpret_cast<uintptr_t>(p);
    std::shared_lock<std::shared_mutex> lk(g_gm_mutex, std::try_to_lock);
    if (!lk.owns_lock()) {
        return false;
    }
    auto it = g_guards.upper_bound(x);
    if (it == g_guards.begin()) {
        return false;
    }
    --it;
    return x >= it->first && x < it->first + Page();
}

void GmRange(Core& c, const void* p, uint64_t n, const char* call, const char* what) {
    GmAlloc a;
    if (!GmFind(p, a)) {
        Fail(c, "gm_out_of_bounds", call,
             std::string(what) + "=" + Hex(p) + " bytes=" + std::to_string(n) + ": the first byte is in no allocation");
    }
    const uint64_t off = static_cast<uint64_t>(static_cast<const uint8_t*>(p) - a.base);
    if (off + n > a.size) {
        Fail(c, "gm_out_of_bounds", call,
             std::string(what) + "=" + Hex(p) + " bytes=" + std::to_string(n) + " runs " +
                 std::to_string(off + n - a.size) + " bytes past the end of allocation " + Hex(a.base) +
                 " size=" + std::to_string(a.size) + " (" + a.what + (a.pe >= 0 ? " pe " + std::to_string(a.pe) : "") +
                 ") at offset " + std::to_string(off));
    }
}

void GmCheckRange(const void* p, uint64_t n, const char* call) { GmRange(Cur(call), p, n, call, "address"); }

/* ---- guard-page faults ---- */
namespace {
struct sigaction g_old_segv;
struct sigaction g_old_bus;
std::once_flag g_handler_once;

void OnFault(int sig, siginfo_t* info, void* ctx) {
    Core* c = CurOrNull();
    if (c != nullptr && info != nullptr && GmIsGuard(info->si_addr)) {
        /* Only note the address here; the core thread records the finding after the jump, in
         * ordinary context (CoreMain). */
        c->fault_addr = info->si_addr;
        c->g->stop.store(true);
        c->stopped = true;
        siglongjmp(c->fault_jmp, 1);
    }
    struct sigaction* old = sig == SIGSEGV ? &g_old_segv : &g_old_bus;
    sigaction(sig, old, nullptr);
    (void)ctx;
    raise(sig);
}
}  // namespace

void InstallFaultHandler() {
    std::call_once(g_handler_once, [] {
        struct sigaction sa;
        std::memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = OnFault;
        sa.sa_flags = SA_SIGINFO | SA_NODEFER;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGSEGV, &sa, &g_old_segv);
        sigaction(SIGBUS, &sa, &g_old_bus);
    });
}

/* ---- scalar access through the data cache ---- */
static CacheLineCopy& Line(Core& c, uintptr_t line) {
    auto it = c.cache.find(line);
    if (it != c.cache.end()) {
        return it->second;
    }
    CacheLineCopy& l = c.cache[line];
    /* A line may straddle the end of an allocation; copy only mapped bytes of it. */
    GmAlloc a;
    uint8_t* p = reinterpret_cast<uint8_t*>(line);
    std::memset(l.data, 0, sizeof l.data);
    if (GmFind(p, a) && a.base + a.size >= p + kLine) {
        std::memcpy(l.data, p, kLine);
    } else {
        for (uint64_t i = 0; i < kLine; ++i) {
            if (GmFind(p + i, a)) {
                l.data[i] = p[i];
            }
        }
    }
    return l;
}

static void WriteBack(uintptr_t line, CacheLineCopy& l) {
    uint8_t* p = reinterpret_cast<uint8_t*>(line);
    for (uint64_t i = 0; i < kLine; ++i) {
        if ((l.dirty >> i) & 1u) {
            p[i] = l.data[i];
        }
    }
    l.dirty = 0;
}

void GmScalar(const GlobalRef& g, uint64_t off, void* value, uint32_t n, bool write, const char* call) {
    /* A read is a poll while it returns what the previous read of the same address returned. */
    Core& c = write ? Cur(call) : CurPoll(call, false);
    uint8_t* p = g.addr + off;
    if (g.bytes != UINT64_MAX && off + n > g.bytes) {
        Fail(c, "gm_out_of_bounds", call,
             "element at byte " + std::to_string(off) + " of a GlobalTensor of " + std::to_string(g.bytes) + " bytes");
    }
    GmRange(c, p, n, call, "address");
    if (write) {
        CheckGmWritesDone(c, EP_S, call, "a scalar store to global memory while this core's DMA writes are pending");
        CheckNotNbiSource(c, p, n, call);
    } else {
        CheckNotInFlight(c, p, n, call);
    }
    const uintptr_t x = reinterpret_cast<uintptr_t>(p);
    uint8_t* bytes = static_cast<uint8_t*>(value);
    for (uint32_t i = 0; i < n; ++i) {
        const uintptr_t line = (x + i) & ~(kLine - 1);
        CacheLineCopy& l = Line(c, line);
        const uint64_t k = (x + i) - line;
        if (write) {
            l.data[k] = bytes[i];
            l.dirty |= uint64_t(1) << k;
        } else {
            bytes[i] = l.data[k];
        }
    }
    if (!write) {
        uint64_t v = 0;
        std::memcpy(&v, bytes, n < 8 ? n : 8);
        if (c.last_get_addr != x || c.last_get_value != v) {
            c.last_get_addr = x;
            c.last_get_value = v;
            PollProgress(c);
        } else if (c.poll_streak.load() == 33) {
            const std::string desc = "GetValue " + Hex(p) + " (cached value " + std::to_string(static_cast<int64_t>(v)) + ")";
            std::lock_guard<std::mutex> lk(c.g->m);
            c.poll_desc = desc;
        }
    }
}

void CacheWriteBackAll(Core& c, bool check_only) {
    for (auto& kv : c.cache) {
        if (kv.second.dirty != 0) {
            if (check_only) {
                Fail(c, "gm_write_not_complete", "end",
                     "scalar stores to the data-cache line " + Hex(reinterpret_cast<void*>(kv.first)) +
                         " were never written back (DataCacheCleanAndInvalid) before the kernel ended");
            }
            WriteBack(kv.first, kv.second);
        }
    }
}

void DataCacheCleanAndInvalid(const void* p, bool entire, int dst) {
    Core& c = CurPoll("DataCacheCleanAndInvalid", false);
    (void)dst;
    if (entire) {
        CacheWriteBackAll(c, false);
        c.cache.clear();
        return;
    }
    GmRange(c, p, 1, "DataCacheCleanAndInvalid", "address");
    const uintptr_t line = reinterpret_cast<uintptr_t>(p) & ~(kLine - 1);
    if (c.poll_streak.load() > 32) {
        /* What the deadlock report shows for a polling core: the line and its first word in GM. */
        std::string desc = Hex(p);
        int32_t v = 0;
        GmAlloc a;
        if (GmFind(p, a) && static_cast<const uint8_t*>(p) + 4 <= a.base + a.size) {
            std::memcpy(&v, p, 4);
            desc += " (" + a.what + "+" + std::to_string(static_cast<const uint8_t*>(p) - a.base) + ", value " +
                    std::to_string(v) + ")";
        }
        std::lock_guard<std::mutex> lk(c.g->m);
        c.poll_desc = desc;
    }
    auto it = c.cache.find(line);
    if (it != c.cache.end()) {
        WriteBack(line, it->second);
        c.cache.erase(it);
    }
}

void DataCacheLocal(const LocalRef& t) {
    Core& c = Cur("DataCacheCleanAndInvalid");
    CheckLocal(t, "DataCacheCleanAndInvalid");
    (void)c;
}

}  // namespace hpmoe_emu

/* ---- ACL runtime subset ---- */
namespace hpmoe_emu {
int SynchronizeStream(void* stream);
void* NewStream();
void DeleteStream(void* s);
void HostSetDevice(int device);
}  // namespace hpmoe_emu

extern "C" {
aclError aclInit(const char*) { return ACL_SUCCESS; }
aclError aclFinalize() { return ACL_SUCCESS; }
aclError aclrtSetDevice(int32_t deviceId) {
    if (deviceId < 0) {
        return ACL_ERROR_INVALID_PARAM;
    }
    hpmoe_emu::HostSetDevice(deviceId);
    return ACL_SUCCESS;
}
aclError aclrtResetDevice(int32_t deviceId) { return deviceId < 0 ? ACL_ERROR_INVALID_PARAM : ACL_SUCCESS; }
aclError aclrtCreateStream(aclrtStream* stream) {
    if (stream == nullptr) {
        return ACL_ERROR_INVALID_PARAM;
    }
    *stream = hpmoe_emu::NewStream();
    return ACL_SUCCESS;
}
aclError aclrtDestroyStream(aclrtStream stream) {
    hpmoe_emu::DeleteStream(stream);
    return ACL_SUCCESS;
}
aclError aclrtSynchronizeStream(aclrtStream stream) { return hpmoe_emu::SynchronizeStream(stream); }
aclError aclrtMalloc(void** devPtr, size_t size, aclrtMemMallocPolicy) {
    if (devPtr == nullptr || size == 0) {
        return ACL_ERROR_INVALID_PARAM;
    }
    *devPtr = hpmoe_emu::GmAllocate(size, "aclrtMalloc", -1, -1);
    return *devPtr == nullptr ? ACL_ERROR_BAD_ALLOC : ACL_SUCCESS;
}
aclError aclrtFree(void* devPtr) { return hpmoe_emu::GmRelease(devPtr) ? ACL_SUCCESS : ACL_ERROR_INVALID_PARAM; }

static bool HostRangeOk(const void* p, size_t n) {
    hpmoe_emu::GmAlloc a;
    return hpmoe_emu::GmFind(p, a) && static_cast<const uint8_t*>(p) + n <= a.base + a.size;
}

aclError aclrtMemcpy(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind) {
    if (count > destMax || dst == nullptr || src == nullptr) {
        return ACL_ERROR_INVALID_PARAM;
    }
    const bool dst_dev = kind == ACL_MEMCPY_HOST_TO_DEVICE || kind == ACL_MEMCPY_DEVICE_TO_DEVICE;
    const bool src_dev = kind == ACL_MEMCPY_DEVICE_TO_HOST || kind == ACL_MEMCPY_DEVICE_TO_DEVICE;
    if ((dst_dev && !HostRangeOk(dst, count)) || (src_dev && !HostRangeOk(src, count))) {
        return ACL_ERROR_INVALID_PARAM;
    }
    std::memmove(dst, src, count);
    return ACL_SUCCESS;
}
aclError aclrtMemset(void* devPtr, size_t maxCount, int32_t value, size_t count) {
    if (count > maxCount || !HostRangeOk(devPtr, count)) {
        return ACL_ERROR_INVALID_PARAM;
    }
    std::memset(devPtr, value, count);
    return ACL_SUCCESS;
}
}
