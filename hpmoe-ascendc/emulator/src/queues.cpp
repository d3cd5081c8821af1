/* hpmoe AscendC emulator: one core's TPipe, queues and buffers (TQue, TBuf, LocalTensor views and
 * scalar access), on the pipes and local-memory shadow of local.cpp: a queue's EnQue/DeQue carry
 * what the producing pipe knows to the consuming one (the queues' implicit sync), and every
 * allocation is checked against the local memory's capacity and 32-byte alignment. */
#include <cstdlib>
#include <cstring>

#include "machine.h"

namespace hpmoe_emu {

/* ---- pipe, queues, buffers ---- */
static int MemOfPosition(Core& c, int position, const char* call) {
    switch (position) {
        case 9:
        case 10:
        case 11:
            if (c.aic) {
                Fail(c, "bad_position", call, "VECIN/VECOUT/VECCALC buffers on an AIC (it has no UB)");
            }
            return MEM_UB;
        case 1:
        case 3:
        case 5:
            if (!c.aic) {
                Fail(c, "bad_position", call, "A1/B1/C1 (L1) buffers on an AIV");
            }
            return MEM_L1;
        case 2:
        case 4:
        case 7:
            if (!c.aic) {
                Fail(c, "bad_position", call, "A2/B2/CO1 (L0) buffers on an AIV");
            }
            return position == 2 ? MEM_L0A : position == 4 ? MEM_L0B : MEM_L0C;
        default: break;
    }
    Fail(c, "bad_position", call, "TPosition " + std::to_string(position) + " is not emulated on this core kind");
}

static Slot* NewSlot(Core& c, int mem, uint32_t len, const char* call) {
    EnsureMem(c, mem);
    const uint32_t bytes = Align32(len);
    const uint32_t cap = mem == MEM_UB ? kUbUsable : kMemCap[mem];
    if (len == 0) {
        Fail(c, "bad_buffer", call, "a buffer of 0 bytes");
    }
    if (c.used[mem] + bytes > cap) {
        Fail(c, "local_over_capacity", call,
             std::string(MemName(mem)) + ": " + std::to_string(c.used[mem]) + " bytes in use + " + std::to_string(bytes) +
                 " > " + std::to_string(cap) + " available");
    }
    auto s = std::make_unique<Slot>();
    s->base = c.mem[mem].data() + c.used[mem];
    s->bytes = bytes;
    s->mem = mem;
    c.used[mem] += bytes;
    Slot* raw = s.get();
    c.slots.push_back(std::move(s));
    return raw;
}

Queue* QueInit(int position, int depth, int num, uint32_t len) {
    Core& c = Cur("TPipe::InitBuffer");
    const int mem = MemOfPosition(c, position, "TPipe::InitBuffer");
    if (num < 1) {
        Fail(c, "bad_buffer", "TPipe::InitBuffer", "a TQue with " + std::to_string(num) + " buffers");
    }
    auto q = std::make_unique<Queue>();
    q->position = position;
    q->depth = depth;
    switch (position) {
        case 9: q->producer = EP_MTE2; q->consumer = EP_V; break;
        case 10: q->producer = EP_V; q->consumer = EP_MTE3; break;
        case 11: q->producer = EP_V; q->consumer = EP_V; break;
        case 1: case 3: q->producer = EP_MTE2; q->consumer = EP_MTE1; break;
        case 2: case 4: q->producer = EP_MTE1; q->consumer = EP_M; break;
        case 7: q->producer = EP_M; q->consumer = EP_FIX; break;
        default: break;
    }
    for (int i = 0; i < num; ++i) {
        Slot* s = NewSlot(c, mem, len, "TPipe::InitBuffer");
        s->queue = q.get();
        q->slots.push_back(s);
    }
    Queue* raw = q.get();
    c.queues.push_back(std::move(q));
    return raw;
}

static LocalRef RefOf(Slot* s) {
    LocalRef r;
    r.addr = s->base;
    r.bytes = s->bytes;
    r.slot = s;
    r.gen = s->gen;
    return r;
}

LocalRef QueAlloc(Queue* q, const char* call) {
    Core& c = Cur(call);
    if (q == nullptr) {
        Fail(c, "bad_buffer", call, "AllocTensor on a TQue that InitBuffer never set up");
    }
    for (size_t k = 0; k < q->slots.size(); ++k) {
        Slot* s = q->slots[(q->next + k) % q->slots.size()];
        if (s->state == SLOT_FREE) {
            q->next = static_cast<uint32_t>((q->next + k + 1) % q->slots.size());
            s->state = SLOT_ALLOCATED;
            if (s->freed_valid) {
                /* AllocTensor waits for the FreeTensor of the buffer's previous use (its consumer pipe). */
                Join(c.know[q->producer], s->freed_know);
            }
            return RefOf(s);
        }
    }
    Fail(c, "queue_exhausted", call,
         "all " + std::to_string(q->slots.size()) + " buffers of the TQue are in use (AllocTensor would wait forever)");
}

static void CheckQueRef(Core& c, Queue* q, const LocalRef& t, const char* call) {
    CheckLocal(t, call);
    if (t.slot->queue != q || t.addr != t.slot->base) {
        Fail(c, "bad_buffer", call, "the tensor is not a whole buffer of this TQue");
    }
}

bool QueEnQue(Queue* q, const LocalRef& t) {
    Core& c = Cur("TQue::EnQue");
    CheckQueRef(c, q, t, "TQue::EnQue");
    if (t.slot->state != SLOT_ALLOCATED) {
        Fail(c, "queue_misuse", "TQue::EnQue", "EnQue of a buffer that is not freshly allocated (already queued or dequeued)");
    }
    if (static_cast<int>(q->fifo.size()) >= q->depth) {
        Fail(c, "queue_depth_exceeded", "TQue::EnQue",
             "the TQue already holds " + std::to_string(q->fifo.size()) + " tensors (depth " + std::to_string(q->depth) + ")");
    }
    Snapshot(c, q->producer, t.slot->enq_know);
    t.slot->state = SLOT_ENQUEUED;
    q->fifo.push_back(t.slot);
    return true;
}

LocalRef QueDeQue(Queue* q) {
    Core& c = Cur("TQue::DeQue");
    if (q == nullptr || q->fifo.empty()) {
        Fail(c, "queue_empty", "TQue::DeQue", "DeQue of an empty TQue (it would wait forever)");
    }
    Slot* s = q->fifo.front();
    q->fifo.pop_front();
    s->state = SLOT_DEQUEUED;
    Join(c.know[q->consumer], s->enq_know);
    return RefOf(s);
}

void QueFree(Queue* q, const LocalRef& t) {
    Core& c = Cur("TQue::FreeTensor");
    if (t.slot != nullptr && t.slot->queue == q && (t.gen != t.slot->gen || t.slot->state == SLOT_FREE)) {
        Fail(c, "double_free", "TQue::FreeTensor", "FreeTensor of a buffer that is already free");
    }
    CheckQueRef(c, q, t, "TQue::FreeTensor");
    if (t.slot->state == SLOT_ENQUEUED) {
        Fail(c, "queue_misuse", "TQue::FreeTensor", "FreeTensor of a tensor still in the queue (EnQue without DeQue)");
    }
    Snapshot(c, q->consumer, t.slot->freed_know);
    if (t.slot->state == SLOT_ALLOCATED) {
        Snapshot(c, q->producer, t.slot->freed_know);
    }
    t.slot->freed_valid = true;
    t.slot->state = SLOT_FREE;
    ++t.slot->gen;
}

LocalRef BufInit(int position, uint32_t len) {
    Core& c = Cur("TPipe::InitBuffer");
    const int mem = MemOfPosition(c, position, "TPipe::InitBuffer");
    Slot* s = NewSlot(c, mem, len, "TPipe::InitBuffer");
    s->state = SLOT_TBUF;
    return RefOf(s);
}

LocalRef BufGet(const LocalRef& buf, uint64_t bytes, const char* call) {
    Core& c = Cur(call);
    if (buf.slot == nullptr) {
        Fail(c, "bad_buffer", call, "TBuf::Get on a TBuf that InitBuffer never set up");
    }
    CheckLocal(buf, call);
    LocalRef r = buf;
    if (bytes != UINT64_MAX) {
        if (bytes > buf.bytes) {
            Fail(c, "local_out_of_bounds", call,
                 "Get of " + std::to_string(bytes) + " bytes from a TBuf of " + std::to_string(buf.bytes));
        }
        r.bytes = static_cast<uint32_t>(bytes);
    }
    return r;
}

void PipeReset() {
    Core& c = Cur("TPipe::Reset");
    for (auto& q : c.queues) {
        for (Slot* s : q->slots) {
            ++s->gen;
            s->state = SLOT_FREE;
        }
    }
    for (auto& s : c.slots) {
        ++s->gen;
    }
    c.queues.clear();
    for (int m = 0; m < MEM_COUNT; ++m) {
        c.used[m] = 0;
    }
}

LocalRef LocalSub(const LocalRef& t, uint64_t byte_offset, uint32_t elem_bytes, const char* call) {
    Core& c = Cur(call);
    CheckLocal(t, call);
    if (byte_offset >= t.bytes) {
        Fail(c, "local_out_of_bounds", call,
             "element " + std::to_string(byte_offset / elem_bytes) + " of a LocalTensor of " +
                 std::to_string(t.bytes / elem_bytes) + " elements");
    }
    LocalRef r = t;
    r.addr += byte_offset;
    r.bytes -= static_cast<uint32_t>(byte_offset);
    return r;
}

void LocalScalar(const LocalRef& t, uint64_t off, void* value, uint32_t n, bool write, const char* call) {
    Core& c = Cur(call);
    CheckLocal(t, call);
    if (off + n > t.bytes) {
        Fail(c, "local_out_of_bounds", call,
             "element " + std::to_string(off / n) + " of a LocalTensor of " + std::to_string(t.bytes / n) + " elements");
    }
    const uint32_t seq = Issue(c, EP_S);
    LocalAccess(c, EP_S, seq, t, off, n, write, call);
    if (write) {
        std::memcpy(t.addr + off, value, n);
        MarkDefined(c, t.addr + off, n, true);
    } else {
        if (FirstUndefined(c, t.addr + off, n) != n) {
            Fail(c, "undefined_read", call,
                 "element " + std::to_string(off / n) + " was never written (no DataCopy, vector op or SetValue defined it)");
        }
        std::memcpy(value, t.addr + off, n);
    }
}

}  // namespace hpmoe_emu
