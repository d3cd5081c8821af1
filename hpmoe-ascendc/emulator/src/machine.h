/* hpmoe AscendC emulator, internal: the machine's state (launch groups, cores, global memory)
 * shared by the modules of src/. */
#ifndef HPMOE_EMU_MACHINE_H
#define HPMOE_EMU_MACHINE_H

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csetjmp>
#include <cstdint>
#include <deque>
#include <functional>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "hpmoe_emu/core.h"

namespace hpmoe_emu {

/* Thrown (privately) to unwind a core thread: after its own error, or when another core failed. */
struct StopCore {};

/* ---- local memory of one core ---- */
enum MemKind : uint8_t { MEM_UB = 0, MEM_L1, MEM_L0A, MEM_L0B, MEM_L0C, MEM_COUNT };
const char* MemName(int mem);

/* Shadow state of one 32-byte block of local memory: its last writer and last readers. */
struct BlockShadow {
    uint32_t wseq = 0;
    uint8_t wpipe = 0;
    const char* wcall = nullptr;
    uint32_t rseq[EP_COUNT] = {};
    const char* rcall[EP_COUNT] = {};
};

enum SlotState : uint8_t { SLOT_FREE = 0, SLOT_ALLOCATED, SLOT_ENQUEUED, SLOT_DEQUEUED, SLOT_TBUF };

struct Slot {
    uint8_t* base = nullptr;
    uint32_t bytes = 0;
    uint32_t gen = 1;
    uint8_t state = SLOT_FREE;
    int mem = MEM_UB;
    Queue* queue = nullptr;
    /* What the pipe that freed it knew (FreeTensor -> AllocTensor ordering). */
    uint32_t freed_know[EP_COUNT] = {};
    bool freed_valid = false;
    /* What the producer knew at EnQue (EnQue -> DeQue ordering). */
    uint32_t enq_know[EP_COUNT] = {};
};

struct Queue {
    int position = 0;
    int depth = 1;
    int producer = EP_MTE2; /* pipe writing before EnQue */
    int consumer = EP_V;    /* pipe reading after DeQue */
    std::vector<Slot*> slots;
    std::deque<Slot*> fifo;
    uint32_t next = 0;
};

/* A DMA write to global memory whose completion the scalar pipe does not know yet. */
struct PendingGm {
    uint8_t* p;
    uint64_t n;
    uint8_t pipe;
    uint32_t seq;
    const char* call;
};

/* A SHMEM operation issued by a core that lands at its aclshmem_quiet. */
struct PendingShmem {
    const char* call;
    uint8_t* dst;                  /* on the target PE */
    std::vector<uint8_t> data;     /* put: the bytes to land */
    const uint8_t* src = nullptr;  /* put: the local source, which must not change before quiet */
    std::vector<uint8_t> src_copy; /* nbi: the source as issued */
    bool atomic = false;
    int kind = 0;
    int64_t ivalue = 0;
    double fvalue = 0;
    int pe = 0;
};

struct CacheLineCopy {
    uint8_t data[64];
    uint64_t dirty = 0; /* bit i: byte i written by the scalar unit and not yet written back */
};

struct EventSlot {
    bool set = false;
    uint32_t know[EP_COUNT] = {};
};

enum CoreRun : int { CORE_RUNNING = 0, CORE_BLOCKED, CORE_FINISHED };

struct Group;

struct Core {
    Group* g = nullptr;
    int rank = 0;
    bool aic = false;
    int block = 0;     /* AI core (block) index */
    int sub = 0;       /* AIV sub-block 0/1 */
    int index = 0;     /* GetBlockIdx(): block for an AIC, 2*block+sub for an AIV */
    int slot = 0;      /* position in Group::cores */
    std::string name;  /* aic0, aiv3 */

    /* local memories */
    std::vector<uint8_t> mem[MEM_COUNT];
    uint32_t used[MEM_COUNT] = {};
    std::vector<BlockShadow> shadow[MEM_COUNT];
    std::vector<uint8_t> defined[MEM_COUNT]; /* per byte: 1 when written with defined data */
    std::vector<std::unique_ptr<Slot>> slots;
    std::vector<std::unique_ptr<Queue>> queues;

    /* pipes: seq[p] = instructions issued on p; know[p][q] = instructions of q known complete to p */
    uint32_t seq[EP_COUNT] = {};
    uint32_t know[EP_COUNT][EP_COUNT] = {};
    /* Same-pipe V ordering: V instructions known complete to later V instructions. */
    uint32_t v_done = 0;
    EventSlot events[64][8];

    std::vector<PendingGm> pending_gm;
    std::unordered_map<uintptr_t, CacheLineCopy> cache;
    std::vector<PendingShmem> pending_shmem;
    int atomic_kind = -1;
    uint8_t* workspace = nullptr;
    int kernel_type = -1;

    /* cross-core flags: counters 0..15 per id (guarded by Group::m) */
    int flag[16] = {};
    int pair_sets[16] = {}; /* mode 1/2 partial sets not yet matched */
    bool used_syncall_ids = false;

    /* progress and blocking, for deadlock detection */
    std::atomic<int> run{CORE_RUNNING};
    std::atomic<uint64_t> poll_streak{0};
    std::atomic<uint64_t> polls{0}; /* poll-class calls ever made (the watchdog sees whether it moves) */
    uint64_t last_get_addr = 0;     /* the last GlobalTensor::GetValue, to tell a poll from a read */
    uint64_t last_get_value = 0;
    std::atomic<bool> poll_clock{false};
    std::string wait_desc; /* guarded by Group::m */
    /* While blocked: the condition it waits on (true = still blocked), guarded by Group::m, so
     * the watchdog can tell a core that may already proceed from a stuck one. */
    const std::function<bool()>* blocked_pred = nullptr;
    std::string poll_desc; /* guarded by Group::m */
    sigjmp_buf fault_jmp;
    void* fault_addr = nullptr; /* set by the SIGSEGV handler before it jumps back */
    bool stopped = false;
};

struct Group {
    std::mutex m;
    std::condition_variable cv;
    int n_ranks = 1;
    uint32_t block_dim = 0;
    std::string kernel;
    std::vector<std::function<void()>> bodies; /* per rank */
    int joined = 0;
    std::vector<bool> rank_joined;
    std::vector<std::unique_ptr<Core>> cores;
    std::vector<std::thread> threads;
    std::thread monitor;
    std::atomic<bool> stop{false};
    std::atomic<uint64_t> progress{0};
    std::atomic<int64_t> virtual_cycles{0};
    std::chrono::steady_clock::time_point start;
    bool started = false;
    bool done = false;
    int finished = 0;
    int status = 0; /* ACL status */
    std::vector<std::string> findings;
    /* SyncAll barriers: arrivals and generation, per kind (0 AIV only, 1 all) */
    std::vector<int> sa_arrived;   /* SyncAll arrivals, index rank * 2 + (all cores ? 1 : 0) */
    std::vector<uint64_t> sa_gen;  /* SyncAll generations, same index */
    int shmem_barrier_arrived = 0;
    uint64_t shmem_barrier_gen = 0;
    bool syncall_used = false;
    /* SHMEM puts/atomics issued and not yet landed (issuer quiet): target ranges, for
     * read-before-landing detection. */
    struct InFlight {
        const uint8_t* p;
        uint64_t n;
        int issuer;
        const char* call;
    };
    std::vector<InFlight> in_flight;
    std::atomic<int> in_flight_count{0};

};

/* The calling core (throws StopCore when the run is stopping). Counts a non-polling call. */
Core& Cur(const char* call);
/* The calling core, for a polling call (GetSystemCycle, DataCacheCleanAndInvalid): counts the
 * polling streak and yields the CPU while it is long. */
Core& CurPoll(const char* call, bool clock);
/* A polling call turned out to make progress (it read a new value): counts as a normal call. */
void PollProgress(Core& c);
/* The calling core or null on a host thread. */
Core* CurOrNull();
/* Records the first error of the launch, stops every core, unwinds the calling one. */
[[noreturn]] void Fail(Core& c, const char* kind, const char* call, const std::string& msg);
/* Records a finding without unwinding (end-of-kernel checks). */
void Finding(Group& g, const std::string& line);
std::string Hex(const void* p);
/* Waits on Group::cv while `blocked` holds, with deadlock bookkeeping; throws StopCore on stop. */
void BlockWhile(Core& c, std::unique_lock<std::mutex>& lk, const std::function<bool()>& blocked,
                const std::string& desc);

/* The device the calling host thread set with aclrtSetDevice (shmem.cpp). */
int HostDevice();
/* Fails unless the core set the cross-core synchronisation base address (sync_base.cpp). */
void CheckSyncBase(Core& c, const char* call);

/* ---- global memory registry (gm.cpp) ---- */
struct GmAlloc {
    uint8_t* base = nullptr;
    uint64_t size = 0;
    uint8_t* map = nullptr;
    uint64_t map_len = 0;
    int pe = -1;       /* symmetric object: its PE */
    int sym = -1;      /* symmetric object index */
    std::string what;  /* aclrtMalloc / aclshmem_malloc */
};
/* The allocation holding byte p, or false. */
bool GmFind(const void* p, GmAlloc& out);
/* Allocates size bytes of emulated global memory with guard page and fillers. */
uint8_t* GmAllocate(uint64_t size, const std::string& what, int pe, int sym);
bool GmRelease(void* p);
/* Checks every filler; returns the findings. */
std::vector<std::string> GmCheckFillers();
bool GmIsGuard(const void* p);
void InstallFaultHandler();
/* After a guard-page fault of core c: records it as the launch's first finding. */
void RecordGuardFault(Core& c);

/* Whole-range check: [p, p + n) lies in the allocation holding p. */
void GmRange(Core& c, const void* p, uint64_t n, const char* call, const char* what);

/* ---- pipes (local.cpp) ---- */
uint32_t Issue(Core& c, int pipe);
void CheckGmWritesDone(Core& c, int pipe, const char* call, const char* why);
void NoteGmWrite(Core& c, int pipe, uint32_t seq, uint8_t* p, uint64_t n, const char* call);
void CheckGmReadAfterOwnWrite(Core& c, int pipe, const uint8_t* p, uint64_t n, const char* call);
void EndOfCoreChecks(Core& c);
void InitCoreMemory(Core& c);
/* Bytes of each local memory (ascendc-api.md), and of UB usable for TPipe buffers: 184 KiB of
 * the 192 KiB (README.md). */
extern const uint32_t kMemCap[MEM_COUNT];
constexpr uint32_t kUbUsable = 184 * 1024;
/* x rounded up to whole 32-byte blocks. */
inline uint32_t Align32(uint64_t x) { return static_cast<uint32_t>((x + 31) / 32 * 32); }
/* Maps local memory `m` of the core on first use (fresh local memory is a NaN pattern). */
void EnsureMem(Core& c, int m);
/* dst = the larger of dst and src per pipe: what two pipes' knowledge implies together. */
void Join(uint32_t* dst, const uint32_t* src);
/* What pipe p knows, including its own issued instructions (they complete before a flag). */
void Snapshot(Core& c, int p, uint32_t* out);
/* Shadow check and update of a local access by `pipe` (instruction `seq`). */
void LocalAccess(Core& c, int pipe, uint32_t seq, const LocalRef& t, uint64_t off, uint64_t n, bool write,
                 const char* call);
void CacheWriteBackAll(Core& c, bool check_only);

/* ---- definedness of local memory (local.cpp): fresh local memory is undefined; DMA, Duplicate,
 * SetValue define bytes; elementwise ops define an element when all its source elements are
 * defined; storing or GetValue of undefined bytes is an error. ---- */
/* Offset of the first undefined byte of [p, p+n), or n when all are defined. */
uint64_t FirstUndefined(Core& c, const uint8_t* p, uint64_t n);
void MarkDefined(Core& c, const uint8_t* p, uint64_t n, bool def);
void CopyDefined(Core& c, const uint8_t* dst, const uint8_t* src, uint64_t n);
/* Element i of dst (de bytes) is defined iff element i of every source (its own size) is. */
void PropagateDefined(Core& c, const uint8_t* d, uint32_t de,
                      std::initializer_list<std::pair<const uint8_t*, uint32_t>> srcs, uint64_t n);
void ShmemEndChecks(Core& c);
/* A read of [p, p+n) while a SHMEM put or atomic into it has not landed. */
void CheckNotInFlight(Core& c, const uint8_t* p, uint64_t n, const char* call);
/* A write by this core over the source of one of its _nbi puts not yet quieted. */
void CheckNotNbiSource(Core& c, const uint8_t* p, uint64_t n, const char* call);

}  // namespace hpmoe_emu

#endif /* HPMOE_EMU_MACHINE_H */
