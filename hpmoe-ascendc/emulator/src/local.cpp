/* hpmoe AscendC emulator: one core's pipes and local memory.
 *
 * Pipes (S, V, M, MTE1, MTE2, MTE3, FIX) are asynchronous: every instruction gets a sequence
 * number on its pipe; know[p][q] is how many of q's instructions pipe p knows to be complete.
 * Only PipeBarrier, SetFlag/WaitFlag and the implicit syncs of the queues raise it. Values are
 * computed eagerly; every access of local memory is checked against a per-32-byte-block shadow
 * (last writer pipe+sequence, last reader per pipe) so that a missing sync is an error even
 * when the data happens to be right. GM writes by DMA stay "pending" until the scalar pipe
 * knows them complete. */
#include <cstdlib>
#include <cstring>

#include "machine.h"

namespace hpmoe_emu {

namespace {
const char* const kPipeNames[EP_COUNT] = {"S", "V", "M", "MTE1", "MTE2", "MTE3", "FIX"};
bool StrictPipeV() {
    static const bool strict = [] {
        const char* e = std::getenv("HPMOE_EMU_STRICT_PIPE_V");
        return e != nullptr && e[0] == '1';
    }();
    return strict;
}

/* HardEvent -> (source pipe, destination pipe), in the order of the enum. */
struct EventPipes {
    uint8_t src, dst;
    const char* name;
};
const EventPipes kEvents[] = {
    {EP_MTE2, EP_MTE1, "MTE2_MTE1"}, {EP_MTE1, EP_MTE2, "MTE1_MTE2"}, {EP_MTE1, EP_M, "MTE1_M"},
    {EP_M, EP_MTE1, "M_MTE1"},       {EP_MTE2, EP_V, "MTE2_V"},       {EP_V, EP_MTE2, "V_MTE2"},
    {EP_MTE3, EP_V, "MTE3_V"},       {EP_V, EP_MTE3, "V_MTE3"},       {EP_M, EP_V, "M_V"},
    {EP_V, EP_M, "V_M"},             {EP_V, EP_V, "V_V"},             {EP_MTE3, EP_MTE1, "MTE3_MTE1"},
    {EP_MTE1, EP_MTE3, "MTE1_MTE3"}, {EP_MTE1, EP_V, "MTE1_V"},       {EP_MTE2, EP_M, "MTE2_M"},
    {EP_M, EP_MTE2, "M_MTE2"},       {EP_V, EP_MTE1, "V_MTE1"},       {EP_M, EP_FIX, "M_FIX"},
    {EP_FIX, EP_M, "FIX_M"},         {EP_MTE3, EP_MTE2, "MTE3_MTE2"}, {EP_MTE2, EP_MTE3, "MTE2_MTE3"},
    {EP_S, EP_V, "S_V"},             {EP_V, EP_S, "V_S"},             {EP_S, EP_MTE2, "S_MTE2"},
    {EP_MTE2, EP_S, "MTE2_S"},       {EP_S, EP_MTE3, "S_MTE3"},       {EP_MTE3, EP_S, "MTE3_S"},
    {EP_MTE2, EP_FIX, "MTE2_FIX"},   {EP_FIX, EP_MTE2, "FIX_MTE2"},   {EP_FIX, EP_S, "FIX_S"},
    {EP_M, EP_S, "M_S"},             {EP_FIX, EP_MTE3, "FIX_MTE3"},
};
constexpr int kEventCount = static_cast<int>(sizeof(kEvents) / sizeof(kEvents[0]));

}  // namespace

const uint32_t kMemCap[MEM_COUNT] = {192 * 1024, 512 * 1024, 64 * 1024, 64 * 1024, 128 * 1024};

void Join(uint32_t* dst, const uint32_t* src) {
    for (int q = 0; q < EP_COUNT; ++q) {
        dst[q] = dst[q] > src[q] ? dst[q] : src[q];
    }
}
/* What pipe p knows, including its own issued instructions (they complete before a flag). */
void Snapshot(Core& c, int p, uint32_t* out) {
    for (int q = 0; q < EP_COUNT; ++q) {
        out[q] = c.know[p][q];
    }
    out[p] = c.seq[p];
}

const char* MemName(int mem) {
    static const char* const names[MEM_COUNT] = {"UB", "L1", "L0A", "L0B", "L0C"};
    return names[mem];
}

int PipeFromDevice(int device_pipe) {
    switch (device_pipe) {
        case 0: return EP_S;
        case 1: return EP_V;
        case 2: return EP_M;
        case 3: return EP_MTE1;
        case 4: return EP_MTE2;
        case 5: return EP_MTE3;
        case 10: return EP_FIX;
        default: return -1;
    }
}

void InitCoreMemory(Core& c) {
    /* Local memories are mapped on first use (EnsureMem): a launch of many cores that never use
     * L1/L0 directly costs no memory for them. */
    (void)c;
}

/* Maps local memory `m` of the core. Fresh local memory holds a NaN pattern (0xFF bytes), not
 * zeros (README.md). */
void EnsureMem(Core& c, int m) {
    if (c.mem[m].empty()) {
        c.mem[m].assign(kMemCap[m], 0xFF);
        c.shadow[m].assign(kMemCap[m] / 32, BlockShadow());
        c.defined[m].assign(kMemCap[m], 0);
    }
}

/* The definedness byte of local address p (p lies in one of the core's local memories). */
static uint8_t* DefOf(Core& c, const uint8_t* p) {
    for (int m = 0; m < MEM_COUNT; ++m) {
        if (!c.mem[m].empty() && p >= c.mem[m].data() && p < c.mem[m].data() + c.mem[m].size()) {
            return c.defined[m].data() + (p - c.mem[m].data());
        }
    }
    return nullptr;
}

uint64_t FirstUndefined(Core& c, const uint8_t* p, uint64_t n) {
    const uint8_t* d = n == 0 ? nullptr : DefOf(c, p);
    for (uint64_t i = 0; d != nullptr && i < n; ++i) {
        if (d[i] == 0) {
            return i;
        }
    }
    return n;
}

void MarkDefined(Core& c, const uint8_t* p, uint64_t n, bool def) {
    uint8_t* d = n == 0 ? nullptr : DefOf(c, p);
    if (d != nullptr) {
        std::memset(d, def ? 1 : 0, n);
    }
}

void CopyDefined(Core& c, const uint8_t* dst, const uint8_t* src, uint64_t n) {
    uint8_t* dd = n == 0 ? nullptr : DefOf(c, dst);
    const uint8_t* sd = n == 0 ? nullptr : DefOf(c, src);
    if (dd != nullptr && sd != nullptr) {
        std::memmove(dd, sd, n);
    }
}

void PropagateDefined(Core& c, const uint8_t* d, uint32_t de,
                      std::initializer_list<std::pair<const uint8_t*, uint32_t>> srcs, uint64_t n) {
    uint8_t* dd = n == 0 ? nullptr : DefOf(c, d);
    if (dd == nullptr) {
        return;
    }
    std::vector<const uint8_t*> sdef;
    for (const auto& s : srcs) {
        sdef.push_back(DefOf(c, s.first));
    }
    for (uint64_t i = 0; i < n; ++i) {
        uint8_t def = 1;
        size_t k = 0;
        for (const auto& s : srcs) {
            const uint8_t* sd = sdef[k++];
            for (uint32_t b = 0; sd != nullptr && b < s.second && def; ++b) {
                def = sd[i * s.second + b];
            }
        }
        std::memset(dd + i * de, def, de);
    }
}

uint32_t Issue(Core& c, int pipe) { return ++c.seq[pipe]; }

/* ---- local memory bookkeeping ---- */
static int MemOf(Core& c, const uint8_t* p, uint64_t& off) {
    for (int m = 0; m < MEM_COUNT; ++m) {
        if (!c.mem[m].empty() && p >= c.mem[m].data() && p < c.mem[m].data() + c.mem[m].size()) {
            off = static_cast<uint64_t>(p - c.mem[m].data());
            return m;
        }
    }
    return -1;
}

void CheckLocal(const LocalRef& t, const char* call) {
    Core& c = *CurOrNull();
    if (t.addr == nullptr || t.slot == nullptr) {
        Fail(c, "local_uninitialised", call, "a LocalTensor that no AllocTensor/DeQue/TBuf::Get produced");
    }
    if (t.gen != t.slot->gen || t.slot->state == SLOT_FREE) {
        Fail(c, "use_after_free", call,
             "LocalTensor at " + std::string(MemName(t.slot->mem)) + " offset " +
                 std::to_string(t.slot->base - c.mem[t.slot->mem].data()) + " was freed (FreeTensor) before this use");
    }
}

void LocalAccess(Core& c, int pipe, uint32_t seq, const LocalRef& t, uint64_t off, uint64_t n, bool write,
                 const char* call) {
    if (n == 0) {
        return;
    }
    uint64_t base = 0;
    const int m = MemOf(c, t.addr + off, base);
    if (m < 0) {
        Fail(c, "local_out_of_bounds", call, "address outside this core's local memories");
    }
    if (off + n > t.bytes) {
        Fail(c, "local_out_of_bounds", call,
             std::to_string(n) + " bytes at byte " + std::to_string(off) + " of a LocalTensor of " +
                 std::to_string(t.bytes) + " bytes (" + MemName(m) + " offset " + std::to_string(base) + ")");
    }
    const bool strict_v = pipe == EP_V && StrictPipeV();
    std::vector<BlockShadow>& sh = c.shadow[m];
    const uint64_t b0 = base / 32;
    const uint64_t b1 = (base + n - 1) / 32;
    for (uint64_t b = b0; b <= b1; ++b) {
        BlockShadow& s = sh[b];
        if (s.wseq != 0) {
            const bool same = s.wpipe == pipe;
            const bool ordered = same ? (!strict_v || s.wseq == seq || c.v_done >= s.wseq)
                                      : c.know[pipe][s.wpipe] >= s.wseq;
            if (!ordered) {
                Fail(c, write ? "unsynchronised_write" : "unsynchronised_read", call,
                     std::string(kPipeNames[pipe]) + " instruction " + call + "#" + std::to_string(seq) +
                         (write ? " writes " : " reads ") + MemName(m) + " offset " + std::to_string(b * 32) +
                         " last written by " + kPipeNames[s.wpipe] + " instruction " + (s.wcall ? s.wcall : "?") + "#" +
                         std::to_string(s.wseq) + " with no sync ordering them" +
                         (same ? " (PipeBarrier<PIPE_V> between dependent vector instructions)" : ""));
            }
        }
        if (write) {
            /* Scalar reads (GetValue) return their data before the in-order scalar unit issues
             * anything else, so they are complete to every later instruction (README.md). */
            for (int q = EP_S + 1; q < EP_COUNT; ++q) {
                if (q != pipe && s.rseq[q] != 0 && c.know[pipe][q] < s.rseq[q]) {
                    Fail(c, "unsynchronised_write", call,
                         std::string(kPipeNames[pipe]) + " instruction " + call + "#" + std::to_string(seq) + " writes " +
                             MemName(m) + " offset " + std::to_string(b * 32) + " still being read by " + kPipeNames[q] +
                             " instruction " + (s.rcall[q] ? s.rcall[q] : "?") + "#" + std::to_string(s.rseq[q]) +
                             " with no sync ordering them");
                }
            }
            s.wseq = seq;
            s.wpipe = static_cast<uint8_t>(pipe);
            s.wcall = call;
            for (int q = 0; q < EP_COUNT; ++q) {
                s.rseq[q] = 0;
            }
        } else {
            s.rseq[pipe] = seq;
            s.rcall[pipe] = call;
        }
    }
}

/* ---- in-core sync ---- */
static void PruneGm(Core& c) {
    auto& v = c.pending_gm;
    size_t k = 0;
    for (size_t i = 0; i < v.size(); ++i) {
        if (c.know[EP_S][v[i].pipe] < v[i].seq) {
            v[k++] = v[i];
        }
    }
    v.resize(k);
}

void PipeBarrier(int device_pipe) {
    Core& c = Cur("PipeBarrier");
    if (device_pipe == 6 /* PIPE_ALL */) {
        for (int p = 0; p < EP_COUNT; ++p) {
            for (int q = 0; q < EP_COUNT; ++q) {
                c.know[p][q] = c.seq[q];
            }
        }
        c.v_done = c.seq[EP_V];
        PruneGm(c);
        return;
    }
    const int p = PipeFromDevice(device_pipe);
    if (p < 0) {
        Fail(c, "bad_pipe", "PipeBarrier", "pipe " + std::to_string(device_pipe));
    }
    if (p == EP_S) {
        Fail(c, "bad_pipe", "PipeBarrier",
             "PipeBarrier<PIPE_S> raises a hardware error (the scalar pipe is ordered by hardware)");
    }
    c.know[p][p] = c.seq[p];
    if (p == EP_V) {
        c.v_done = c.seq[EP_V];
    }
}

void SetFlag(int event, int32_t id) {
    Core& c = Cur("SetFlag");
    if (event < 0 || event >= kEventCount) {
        Fail(c, "bad_event", "SetFlag", "event " + std::to_string(event));
    }
    if (id < 0 || id > 7) {
        Fail(c, "bad_event", "SetFlag", std::string("SetFlag<") + kEvents[event].name + "> event id " + std::to_string(id) +
                                            " (ids are 0..7)");
    }
    EventSlot& s = c.events[event][id];
    if (s.set) {
        Fail(c, "event_double_set", "SetFlag",
             std::string("SetFlag<") + kEvents[event].name + ">(" + std::to_string(id) + ") set again before its WaitFlag");
    }
    s.set = true;
    Snapshot(c, kEvents[event].src, s.know);
}

int FetchEventID(int event) {
    Core& c = Cur("FetchEventID");
    if (event < 0 || event >= kEventCount) {
        Fail(c, "bad_event", "FetchEventID", "event " + std::to_string(event));
    }
    for (int id = 0; id < 8; ++id) {
        if (!c.events[event][id].set) {
            return id;
        }
    }
    Fail(c, "event_ids_exhausted", "FetchEventID",
         std::string("every id of ") + kEvents[event].name + " has a SetFlag pending");
}

void WaitFlag(int event, int32_t id) {
    Core& c = Cur("WaitFlag");
    if (event < 0 || event >= kEventCount || id < 0 || id > 7) {
        Fail(c, "bad_event", "WaitFlag", "event " + std::to_string(event) + " id " + std::to_string(id));
    }
    EventSlot& s = c.events[event][id];
    if (!s.set) {
        Fail(c, "event_wait_unset", "WaitFlag",
             std::string("WaitFlag<") + kEvents[event].name + ">(" + std::to_string(id) +
                 ") with no SetFlag pending: the pipe would wait forever");
    }
    s.set = false;
    const int dst = kEvents[event].dst;
    Join(c.know[dst], s.know);
    if (dst == EP_V && kEvents[event].src == EP_V) {
        c.v_done = c.v_done > s.know[EP_V] ? c.v_done : s.know[EP_V];
    }
    if (dst == EP_S) {
        PruneGm(c);
    }
}

/* ---- global-memory writes of this core ---- */
void NoteGmWrite(Core& c, int pipe, uint32_t seq, uint8_t* p, uint64_t n, const char* call) {
    if (!c.pending_gm.empty()) {
        PendingGm& last = c.pending_gm.back();
        if (last.pipe == pipe && last.seq == seq && last.p + last.n == p) {
            last.n += n;
            return;
        }
    }
    c.pending_gm.push_back(PendingGm{p, n, static_cast<uint8_t>(pipe), seq, call});
}

void CheckGmWritesDone(Core& c, int pipe, const char* call, const char* why) {
    PruneGm(c);
    for (const PendingGm& w : c.pending_gm) {
        if (w.pipe != pipe && c.know[pipe][w.pipe] < w.seq) {
            Fail(c, "gm_write_not_complete", call,
                 std::string(why) + ": " + kPipeNames[w.pipe] + " instruction " + w.call + "#" + std::to_string(w.seq) +
                     " writing " + Hex(w.p) + " bytes=" + std::to_string(w.n) + " is not known complete to pipe " +
                     kPipeNames[pipe] + " (PipeBarrier<PIPE_ALL> or WaitFlag<" + kPipeNames[w.pipe] + "_" +
                     kPipeNames[pipe] + ">)");
        }
    }
}

void CheckGmReadAfterOwnWrite(Core& c, int pipe, const uint8_t* p, uint64_t n, const char* call) {
    for (const PendingGm& w : c.pending_gm) {
        if (w.pipe != pipe && c.know[pipe][w.pipe] < w.seq && p < w.p + w.n && w.p < p + n) {
            Fail(c, "unsynchronised_read", call,
                 std::string(kPipeNames[pipe]) + " reads global memory " + Hex(p) + " bytes=" + std::to_string(n) +
                     " that this core's " + kPipeNames[w.pipe] + " instruction " + w.call + "#" + std::to_string(w.seq) +
                     " writes, with no sync ordering them");
        }
    }
}

/* ---- end of a core's kernel ---- */
void EndOfCoreChecks(Core& c) {
    PruneGm(c);
    if (!c.pending_gm.empty()) {
        const PendingGm& w = c.pending_gm.front();
        Fail(c, "gm_write_not_complete", "end",
             std::string("the kernel ended while ") + kPipeNames[w.pipe] + " instruction " + w.call + "#" +
                 std::to_string(w.seq) + " writing " + Hex(w.p) + " bytes=" + std::to_string(w.n) +
                 " is not known complete (PipeBarrier<PIPE_ALL> before the end)");
    }
    ShmemEndChecks(c);
    CacheWriteBackAll(c, true);
    if (c.atomic_kind >= 0) {
        Fail(c, "atomic_left_on", "end", std::string("SetAtomicAdd<") + KindName(c.atomic_kind) + "> still on at kernel end");
    }
    for (int e = 0; e < kEventCount; ++e) {
        for (int id = 0; id < 8; ++id) {
            if (c.events[e][id].set) {
                Fail(c, "event_unpaired", "end",
                     std::string("SetFlag<") + kEvents[e].name + ">(" + std::to_string(id) + ") never waited for");
            }
        }
    }
    for (auto& q : c.queues) {
        if (!q->fifo.empty()) {
            Fail(c, "queue_unbalanced", "end",
                 std::to_string(q->fifo.size()) + " tensor(s) EnQue'd and never DeQue'd");
        }
        for (Slot* s : q->slots) {
            if (s->state == SLOT_ALLOCATED || s->state == SLOT_DEQUEUED) {
                Fail(c, "queue_unbalanced", "end", "a TQue buffer was allocated and never freed (FreeTensor)");
            }
        }
    }
}

}  // namespace hpmoe_emu
