/* hpmoe AscendC emulator: SHMEM, host side (PEs, symmetric heaps) and device side (puts,
 * signals, atomics, quiet). All PEs share the process's memory like one A3 super-node.
 *
 * Device semantics (README.md): aclshmem_putmem / _nbi copy the source when issued and land the
 * data at the issuing core's aclshmem_quiet (fence = quiet; barrier_all quiets too); an _nbi
 * source that changes before the quiet is an error; aclshmem_putmem_signal(_nbi) delivers its
 * data and then its signal when issued (the signal is visible only after the data); signal_op
 * is visible when issued; atomics land at quiet. Anything still pending when a core ends is
 * `shmem_not_quiet`; a DMA or scalar read of a range with a put in flight is `read_before_quiet`. */
#include <cstring>

#include "aclshmem.h"
#include "machine.h"

namespace hpmoe_emu {

namespace {
thread_local int tl_pe = -1;
thread_local int tl_npes = 1;
thread_local int tl_device = 0;

std::mutex g_sym_mutex;
/* Symmetric objects: objects[pe][i], sizes[pe][i]. */
std::vector<std::vector<uint8_t*>> g_objects;
std::vector<std::vector<uint64_t>> g_sizes;
std::vector<uint64_t> g_heap_limit;
std::vector<uint64_t> g_heap_used;
}  // namespace

void HostSetDevice(int device) { tl_device = device; }
int HostDevice() { return tl_device; }
int HostPe() { return tl_pe >= 0 ? tl_pe : 0; }
int HostNPes() { return tl_pe >= 0 ? tl_npes : 1; }

/* ---- device side ---- */
static uint8_t* Translate(Core& c, const void* p, int pe, uint64_t n, const char* call, const char* what) {
    if (pe < 0 || pe >= c.g->n_ranks) {
        Fail(c, "shmem_bad_pe", call, "pe=" + std::to_string(pe) + " of " + std::to_string(c.g->n_ranks));
    }
    GmAlloc a;
    if (!GmFind(p, a) || a.sym < 0) {
        Fail(c, "shmem_not_symmetric", call, std::string(what) + "=" + Hex(p) + " is not in a symmetric object (aclshmem_malloc)");
    }
    if (a.pe != c.rank) {
        Fail(c, "shmem_not_symmetric", call,
             std::string(what) + "=" + Hex(p) + " is PE " + std::to_string(a.pe) + "'s copy; pass this PE's (" +
                 std::to_string(c.rank) + ") symmetric address");
    }
    const uint64_t off = static_cast<uint64_t>(static_cast<const uint8_t*>(p) - a.base);
    if (off + n > a.size) {
        Fail(c, "gm_out_of_bounds", call,
             std::string(what) + "=" + Hex(p) + " bytes=" + std::to_string(n) + " runs past the symmetric object of " +
                 std::to_string(a.size) + " bytes");
    }
    std::lock_guard<std::mutex> lk(g_sym_mutex);
    return g_objects[static_cast<size_t>(pe)][static_cast<size_t>(a.sym)] + off;
}

void* ShmemPtr(void* p, int pe) {
    Core& c = Cur("aclshmem_ptr");
    return Translate(c, p, pe, 1, "aclshmem_ptr", "ptr");
}

static void AddInFlight(Core& c, const uint8_t* p, uint64_t n, const char* call) {
    std::lock_guard<std::mutex> lk(c.g->m);
    c.g->in_flight.push_back(Group::InFlight{p, n, c.slot, call});
    c.g->in_flight_count.store(static_cast<int>(c.g->in_flight.size()));
}

/* A write of [p, p+n) by this core over the source of one of its _nbi puts before the quiet. */
void CheckNotNbiSource(Core& c, const uint8_t* p, uint64_t n, const char* call) {
    for (const PendingShmem& s : c.pending_shmem) {
        if (s.src != nullptr && p < s.src + s.src_copy.size() && s.src < p + n) {
            Fail(c, "nbi_source_modified", call,
                 "writes " + Hex(p) + " bytes=" + std::to_string(n) + ", the source of this core's " + s.call +
                     " (" + Hex(s.src) + " bytes=" + std::to_string(s.src_copy.size()) +
                     ") before its aclshmem_quiet: the put may still read it");
        }
    }
}

/* A read of [p, p+n) by any core while a put/atomic into it is in flight. */
void CheckNotInFlight(Core& c, const uint8_t* p, uint64_t n, const char* call) {
    Group& g = *c.g;
    if (g.in_flight_count.load() == 0) {
        return;
    }
    std::string msg;
    {
        std::lock_guard<std::mutex> lk(g.m);
        for (const auto& f : g.in_flight) {
            if (p < f.p + f.n && f.p < p + n) {
                msg = "reads " + Hex(p) + " bytes=" + std::to_string(n) + " while " + g.cores[static_cast<size_t>(f.issuer)]->name +
                      " rank " + std::to_string(g.cores[static_cast<size_t>(f.issuer)]->rank) + "'s " + f.call + " into " +
                      Hex(f.p) + " has not landed (its issuer has not called aclshmem_quiet)";
                break;
            }
        }
    }
    if (!msg.empty()) {
        Fail(c, "read_before_quiet", call, msg);
    }
}

/* A signal (signal_op, put-with-signal, atomic) tells its target that data has arrived: puts of
 * this core still in flight to that PE would arrive after it. */
static void CheckNoPutsInFlight(Core& c, int pe, const char* call) {
    for (const PendingShmem& p : c.pending_shmem) {
        if (!p.atomic && p.dst != nullptr && p.pe == pe) {
            Fail(c, "signal_before_quiet", call,
                 std::string("signals PE ") + std::to_string(pe) + " while this core's " + p.call + " to " + Hex(p.dst) +
                     " bytes=" + std::to_string(p.data.size()) + " has not landed (aclshmem_fence/quiet first)");
        }
    }
}

static void Signal(int32_t* sig, int32_t value, int op) {
    if (op == 0 /* SET */) {
        __atomic_store_n(sig, value, __ATOMIC_SEQ_CST);
    } else {
        __atomic_fetch_add(sig, value, __ATOMIC_SEQ_CST);
    }
}

void ShmemPut(void* dst, const void* src, uint64_t n, int pe, bool nbi, int32_t* sig, int32_t sig_value, int sig_op,
              const char* call) {
    Core& c = Cur(call);
    const uint8_t* s = static_cast<const uint8_t*>(src);
    GmRange(c, s, n, call, "src");
    CheckGmReadAfterOwnWrite(c, EP_S, s, n, call);
    uint8_t* d = Translate(c, dst, pe, n, call, "dst");
    if (sig != nullptr) {
        if (sig_op != 0 && sig_op != 1) {
            Fail(c, "shmem_bad_signal", call, "signal op " + std::to_string(sig_op));
        }
        int32_t* t = reinterpret_cast<int32_t*>(Translate(c, sig, pe, 4, call, "sig_addr"));
        CheckGmWritesDone(c, EP_S, call, "a put-with-signal while this core's global-memory writes are pending");
        CheckNoPutsInFlight(c, pe, call);
        std::memmove(d, s, n);
        Signal(t, sig_value, sig_op);
        if (nbi) {
            /* Delivered, but the issuer still owes a quiet before it ends (README.md). */
            PendingShmem p;
            p.call = call;
            p.dst = nullptr;
            p.pe = pe;
            c.pending_shmem.push_back(std::move(p));
        }
        std::lock_guard<std::mutex> lk(c.g->m);
        c.g->cv.notify_all();
        return;
    }
    PendingShmem p;
    p.call = call;
    p.dst = d;
    p.data.assign(s, s + n);
    p.pe = pe;
    if (nbi) {
        p.src = s;
        p.src_copy = p.data;
    }
    c.pending_shmem.push_back(std::move(p));
    AddInFlight(c, d, n, call);
}

void ShmemSignalOp(int32_t* sig, int32_t value, int op, int pe) {
    Core& c = Cur("aclshmemx_signal_op");
    if (op != 0 && op != 1) {
        Fail(c, "shmem_bad_signal", "aclshmemx_signal_op", "signal op " + std::to_string(op));
    }
    int32_t* t = reinterpret_cast<int32_t*>(Translate(c, sig, pe, 4, "aclshmemx_signal_op", "sig_addr"));
    CheckGmWritesDone(c, EP_S, "aclshmemx_signal_op", "a signal while this core's global-memory writes are pending");
    CheckNoPutsInFlight(c, pe, "aclshmemx_signal_op");
    Signal(t, value, op);
    std::lock_guard<std::mutex> lk(c.g->m);
    c.g->cv.notify_all();
}

int32_t ShmemSignalWaitUntil(int32_t* sig, int cmp, int32_t value) {
    Core& c = Cur("aclshmem_signal_wait_until");
    GmRange(c, sig, 4, "aclshmem_signal_wait_until", "sig_addr");
    auto done = [&]() {
        const int32_t v = __atomic_load_n(sig, __ATOMIC_SEQ_CST);
        switch (cmp) {
            case 0: return v == value;
            case 1: return v != value;
            case 2: return v > value;
            case 3: return v >= value;
            case 4: return v < value;
            default: return v <= value;
        }
    };
    if (cmp < 0 || cmp > 5) {
        Fail(c, "shmem_bad_signal", "aclshmem_signal_wait_until", "comparison " + std::to_string(cmp));
    }
    static const char* const ops[] = {"==", "!=", ">", ">=", "<", "<="};
    std::unique_lock<std::mutex> lk(c.g->m);
    BlockWhile(c, lk, [&] { return !done(); },
               "aclshmem_signal_wait_until " + Hex(sig) + " " + ops[cmp] + " " + std::to_string(value) + " (value " +
                   std::to_string(__atomic_load_n(sig, __ATOMIC_SEQ_CST)) + ")");
    return __atomic_load_n(sig, __ATOMIC_SEQ_CST);
}

void ShmemAtomicAdd(void* dst, int kind, const void* value, int pe, const char* call) {
    Core& c = Cur(call);
    uint8_t* d = Translate(c, dst, pe, KindBytes(kind), call, "dst");
    CheckGmWritesDone(c, EP_S, call, "an atomic (a signal to another core) while this core's global-memory writes are pending");
    CheckNoPutsInFlight(c, pe, call);
    PendingShmem p;
    p.call = call;
    p.dst = d;
    p.atomic = true;
    p.kind = kind;
    p.pe = pe;
    if (kind == K_I32) {
        int32_t v;
        std::memcpy(&v, value, 4);
        p.ivalue = v;
    } else {
        float v;
        std::memcpy(&v, value, 4);
        p.fvalue = v;
    }
    c.pending_shmem.push_back(std::move(p));
    AddInFlight(c, d, KindBytes(kind), call);
}

void ShmemQuiet(const char* call) {
    Core& c = Cur(call);
    for (PendingShmem& p : c.pending_shmem) {
        if (p.src != nullptr && std::memcmp(p.src, p.src_copy.data(), p.src_copy.size()) != 0) {
            Fail(c, "nbi_source_modified", call,
                 std::string("the source ") + Hex(p.src) + " bytes=" + std::to_string(p.src_copy.size()) + " of " + p.call +
                     " changed before this quiet (the put may read it until then)");
        }
    }
    for (PendingShmem& p : c.pending_shmem) {
        if (p.dst == nullptr) {
            continue;
        }
        if (p.atomic) {
            if (p.kind == K_I32) {
                __atomic_fetch_add(reinterpret_cast<int32_t*>(p.dst), static_cast<int32_t>(p.ivalue), __ATOMIC_SEQ_CST);
            } else {
                float* f = reinterpret_cast<float*>(p.dst);
                uint32_t old = __atomic_load_n(reinterpret_cast<uint32_t*>(f), __ATOMIC_SEQ_CST);
                for (;;) {
                    float of;
                    std::memcpy(&of, &old, 4);
                    const float nf = of + static_cast<float>(p.fvalue);
                    uint32_t nb;
                    std::memcpy(&nb, &nf, 4);
                    if (__atomic_compare_exchange_n(reinterpret_cast<uint32_t*>(f), &old, nb, false, __ATOMIC_SEQ_CST,
                                                    __ATOMIC_SEQ_CST)) {
                        break;
                    }
                }
            }
        } else {
            std::memmove(p.dst, p.data.data(), p.data.size());
        }
    }
    c.pending_shmem.clear();
    std::lock_guard<std::mutex> lk(c.g->m);
    auto& v = c.g->in_flight;
    size_t k = 0;
    for (size_t i = 0; i < v.size(); ++i) {
        if (v[i].issuer != c.slot) {
            v[k++] = v[i];
        }
    }
    v.resize(k);
    c.g->in_flight_count.store(static_cast<int>(v.size()));
    c.g->cv.notify_all();
}

void ShmemBarrierAll() {
    ShmemQuiet("aclshmem_barrier_all");
    Core& c = Cur("aclshmem_barrier_all");
    Group& g = *c.g;
    std::unique_lock<std::mutex> lk(g.m);
    const uint64_t gen = g.shmem_barrier_gen;
    if (++g.shmem_barrier_arrived == static_cast<int>(g.cores.size())) {
        g.shmem_barrier_arrived = 0;
        ++g.shmem_barrier_gen;
        g.cv.notify_all();
        return;
    }
    BlockWhile(c, lk, [&] { return g.shmem_barrier_gen == gen; }, "aclshmem_barrier_all (all cores of all PEs)");
}

void ShmemEndChecks(Core& c) {
    if (!c.pending_shmem.empty()) {
        const PendingShmem& p = c.pending_shmem.front();
        Fail(c, "shmem_not_quiet", "end",
             std::to_string(c.pending_shmem.size()) + " SHMEM operation(s) never completed by aclshmem_quiet, the first " +
                 p.call + " to PE " + std::to_string(p.pe) + (p.dst ? " at " + Hex(p.dst) : std::string()));
    }
}

}  // namespace hpmoe_emu

/* ---- host side ---- */
using namespace hpmoe_emu;

int aclshmemx_init_attr(aclshmemx_bootstrap_t, aclshmemx_init_attr_t* attr) { return aclshmemx_init_attr(attr); }

int aclshmemx_init_attr(aclshmemx_init_attr_t* attr) {
    if (attr == nullptr || attr->n_pes < 1 || attr->my_pe < 0 || attr->my_pe >= attr->n_pes) {
        return ACLSHMEM_INVALID_PARAM;
    }
    std::lock_guard<std::mutex> lk(g_sym_mutex);
    if (!g_objects.empty() && g_objects.size() != static_cast<size_t>(attr->n_pes)) {
        return ACLSHMEM_INVALID_PARAM;
    }
    g_objects.resize(static_cast<size_t>(attr->n_pes));
    g_sizes.resize(static_cast<size_t>(attr->n_pes));
    g_heap_limit.resize(static_cast<size_t>(attr->n_pes), 0);
    g_heap_used.resize(static_cast<size_t>(attr->n_pes), 0);
    g_heap_limit[static_cast<size_t>(attr->my_pe)] = attr->local_mem_size;
    tl_pe = attr->my_pe;
    tl_npes = attr->n_pes;
    return ACLSHMEM_SUCCESS;
}

extern "C" {
void* aclshmem_malloc(size_t size) {
    if (tl_pe < 0 || size == 0) {
        return nullptr;
    }
    const size_t pe = static_cast<size_t>(tl_pe);
    int index;
    {
        std::lock_guard<std::mutex> lk(g_sym_mutex);
        index = static_cast<int>(g_objects[pe].size());
        for (size_t o = 0; o < g_sizes.size(); ++o) {
            if (o != pe && g_sizes[o].size() > static_cast<size_t>(index) && g_sizes[o][static_cast<size_t>(index)] != size) {
                std::fprintf(stderr,
                             "hpmoe emulator: aclshmem_malloc is collective: PE %zu allocates %zu bytes as object %d, "
                             "PE %zu allocated %llu\n",
                             pe, size, index, o, static_cast<unsigned long long>(g_sizes[o][static_cast<size_t>(index)]));
                return nullptr;
            }
        }
        if (g_heap_limit[pe] != 0 && g_heap_used[pe] + size > g_heap_limit[pe]) {
            return nullptr;
        }
        g_heap_used[pe] += size;
    }
    uint8_t* p = GmAllocate(size, "aclshmem_malloc", tl_pe, index);
    std::lock_guard<std::mutex> lk(g_sym_mutex);
    g_objects[pe].push_back(p);
    g_sizes[pe].push_back(size);
    return p;
}

void aclshmem_free(void* ptr) {
    if (ptr == nullptr) {
        return;
    }
    GmAlloc a;
    if (GmFind(ptr, a) && a.sym >= 0) {
        std::lock_guard<std::mutex> lk(g_sym_mutex);
        g_objects[static_cast<size_t>(a.pe)][static_cast<size_t>(a.sym)] = nullptr;
    }
    GmRelease(ptr);
}

int aclshmem_finalize(void) {
    tl_pe = -1;
    return ACLSHMEM_SUCCESS;
}

int aclshmem_my_pe(void) {
    Core* c = CurOrNull();
    if (c != nullptr) {
        return Cur("aclshmem_my_pe").rank;
    }
    return tl_pe;
}

int aclshmem_n_pes(void) {
    Core* c = CurOrNull();
    if (c != nullptr) {
        return Cur("aclshmem_n_pes").g->n_ranks;
    }
    return tl_pe >= 0 ? tl_npes : -1;
}
}
