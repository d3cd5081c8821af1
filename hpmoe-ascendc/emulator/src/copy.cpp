/* hpmoe AscendC emulator: DataCopy and DataCopyPad between global memory and local memory, and
 * within local memory. GM -> UB/L1 runs on MTE2, UB -> GM on MTE3, UB -> UB on V.
 *
 * DataCopy (non-Pad): lengths and strides in 32-byte blocks (strides are the gaps between
 * blocks); the counted form moves count elements and needs count * sizeof(T) % 32 == 0; local
 * and global addresses 32-byte aligned (global: the emulator's strict choice, README.md).
 * DataCopyPad: blockLen in bytes, the GM-side stride in bytes, the UB-side stride in 32-byte
 * blocks, each UB row starting 32-byte aligned; blockCount 1..4095. */
#include <cstring>
#include <mutex>

#include "machine.h"

namespace hpmoe_emu {

namespace {
constexpr uint32_t kMaxBlockCount = 4095;
/* Bytes written into the unfilled tail of a padded UB row: 0xFF (a NaN for float types). */
constexpr uint8_t kPoison = 0xFF;

/* One row of a copy: `len` bytes from byte `src_off` to byte `dst_off`. */
struct Row {
    uint64_t src_off;
    uint64_t dst_off;
    uint32_t len;
};

void CheckLocalAligned(Core& c, const LocalRef& t, const char* call) {
    uint64_t off = static_cast<uint64_t>(t.addr - t.slot->base) + static_cast<uint64_t>(t.slot->base - c.mem[t.slot->mem].data());
    if (off % 32 != 0) {
        Fail(c, "local_unaligned", call,
             std::string(MemName(t.slot->mem)) + " address offset " + std::to_string(off) + " is not 32-byte aligned");
    }
}

/* The rows of a copy, in the byte offsets of its source and destination. `gm_src`: the source is
 * global memory (the GM-side stride of DataCopyPad is then srcStride). */
std::vector<Row> Rows(Core& c, const CopyDesc& d, bool gm_src, bool gm_dst, const char* call) {
    std::vector<Row> rows;
    if (d.counted) {
        const uint64_t bytes = uint64_t(d.count) * d.elem;
        if (bytes % 32 != 0) {
            Fail(c, "datacopy_unaligned_length", call,
                 std::to_string(d.count) + " elements x " + std::to_string(d.elem) + " bytes = " + std::to_string(bytes) +
                     " bytes, not a multiple of 32 (use DataCopyPad)");
        }
        if (bytes != 0) {
            rows.push_back(Row{0, 0, static_cast<uint32_t>(bytes)});
        }
        return rows;
    }
    if (d.block_count == 0 || d.block_count > kMaxBlockCount) {
        Fail(c, "datacopy_bad_params", call, "blockCount=" + std::to_string(d.block_count) + " (1..4095)");
    }
    if (d.block_len == 0) {
        Fail(c, "datacopy_bad_params", call, "blockLen=0");
    }
    if (!d.pad_api) {
        const uint64_t len = uint64_t(d.block_len) * 32;
        for (uint32_t i = 0; i < d.block_count; ++i) {
            rows.push_back(Row{i * (len + uint64_t(d.src_stride) * 32), i * (len + uint64_t(d.dst_stride) * 32),
                               static_cast<uint32_t>(len)});
        }
        return rows;
    }
    if (d.rsv != 0) {
        Fail(c, "datacopy_bad_params", call, "DataCopyExtParams.rsv=" + std::to_string(d.rsv) + " (reserved, must be 0)");
    }
    const uint32_t pad_bytes = (uint32_t(d.left_pad) + d.right_pad) * d.elem;
    if (d.left_pad > 0 || d.right_pad > 0) {
        if (!gm_src || pad_bytes > 32) {
            Fail(c, "datacopy_bad_params", call,
                 "left/right padding of " + std::to_string(d.left_pad) + "/" + std::to_string(d.right_pad) +
                     " elements (GM -> UB only, at most 32 bytes in all)");
        }
    }
    const uint64_t ub_row = Align32(uint64_t(d.block_len) + pad_bytes);
    for (uint32_t i = 0; i < d.block_count; ++i) {
        Row r;
        r.len = d.block_len;
        if (gm_src) {
            r.src_off = i * (uint64_t(d.block_len) + d.src_stride);
            r.dst_off = i * (ub_row + uint64_t(d.dst_stride) * 32) + uint64_t(d.left_pad) * d.elem;
        } else {
            r.src_off = i * (Align32(d.block_len) + uint64_t(d.src_stride) * 32);
            r.dst_off = gm_dst ? i * (uint64_t(d.block_len) + d.dst_stride) : i * (Align32(d.block_len) + uint64_t(d.dst_stride) * 32);
        }
        rows.push_back(r);
    }
    return rows;
}

void CheckGlobal(Core& c, const GlobalRef& g, const std::vector<Row>& rows, bool src, const CopyDesc& d,
                 const char* call) {
    if (!d.pad_api && reinterpret_cast<uintptr_t>(g.addr) % 32 != 0) {
        Fail(c, "gm_unaligned", call,
             "global address " + Hex(g.addr) + " is not 32-byte aligned (DataCopy; use DataCopyPad)");
    }
    for (const Row& r : rows) {
        const uint64_t off = src ? r.src_off : r.dst_off;
        if (g.bytes != UINT64_MAX && off + r.len > g.bytes) {
            Fail(c, "gm_out_of_bounds", call,
                 "bytes [" + std::to_string(off) + ", " + std::to_string(off + r.len) + ") of a GlobalTensor of " +
                     std::to_string(g.bytes) + " bytes at " + Hex(g.addr));
        }
        GmRange(c, g.addr + off, r.len, call, "global");
    }
}

void AtomicAddInto(int kind, uint8_t* dst, const uint8_t* src, uint32_t n);

/* `count` padding elements at p: DataCopyPadExtParams' value when isPad, else poison. */
void FillPadding(uint8_t* p, uint32_t count, const CopyDesc& d) {
    for (uint32_t e = 0; e < count; ++e) {
        if (d.is_pad) {
            std::memcpy(p + e * d.elem, &d.pad_bits, d.elem);
        } else {
            std::memset(p + e * d.elem, kPoison, d.elem);
        }
    }
}
}  // namespace

void CopyGmToLocal(const LocalRef& dst, const GlobalRef& src, const CopyDesc& d, const char* call) {
    Core& c = Cur(call);
    CheckLocal(dst, call);
    CheckLocalAligned(c, dst, call);
    const std::vector<Row> rows = Rows(c, d, true, false, call);
    CheckGlobal(c, src, rows, true, d, call);
    const uint32_t seq = Issue(c, EP_MTE2);
    const uint64_t pad_bytes = (uint64_t(d.left_pad) + d.right_pad) * d.elem;
    for (const Row& r : rows) {
        CheckGmReadAfterOwnWrite(c, EP_MTE2, src.addr + r.src_off, r.len, call);
        CheckNotInFlight(c, src.addr + r.src_off, r.len, call);
        const uint64_t row_start = r.dst_off - uint64_t(d.left_pad) * d.elem;
        const uint64_t row_bytes = d.pad_api ? Align32(r.len + pad_bytes) : r.len;
        LocalAccess(c, EP_MTE2, seq, dst, row_start, row_bytes, true, call);
    }
    for (const Row& r : rows) {
        std::memcpy(dst.addr + r.dst_off, src.addr + r.src_off, r.len);
        MarkDefined(c, dst.addr + r.dst_off, r.len, true);
        if (d.pad_api) {
            const uint64_t row_start = r.dst_off - uint64_t(d.left_pad) * d.elem;
            const uint64_t row_bytes = Align32(r.len + pad_bytes);
            uint8_t* p = dst.addr + row_start;
            /* Left/right padding: the padding value when isPad, else unknown bytes (poison). */
            FillPadding(p, d.left_pad, d);
            MarkDefined(c, p, uint64_t(d.left_pad) * d.elem, d.is_pad);
            uint8_t* right = dst.addr + r.dst_off + r.len;
            FillPadding(right, d.right_pad, d);
            MarkDefined(c, right, uint64_t(d.right_pad) * d.elem, d.is_pad);
            uint8_t* tail = right + uint64_t(d.right_pad) * d.elem;
            std::memset(tail, kPoison, static_cast<size_t>(p + row_bytes - tail));
            MarkDefined(c, tail, static_cast<uint64_t>(p + row_bytes - tail), false);
        }
    }
}

void CopyLocalToGm(const GlobalRef& dst, const LocalRef& src, const CopyDesc& d, const char* call) {
    Core& c = Cur(call);
    CheckLocal(src, call);
    CheckLocalAligned(c, src, call);
    const std::vector<Row> rows = Rows(c, d, false, true, call);
    CheckGlobal(c, dst, rows, false, d, call);
    const uint32_t seq = Issue(c, EP_MTE3);
    for (const Row& r : rows) {
        LocalAccess(c, EP_MTE3, seq, src, r.src_off, r.len, false, call);
        CheckNotNbiSource(c, dst.addr + r.dst_off, r.len, call);
        const uint64_t bad = FirstUndefined(c, src.addr + r.src_off, r.len);
        if (bad != r.len) {
            Fail(c, "undefined_store", call,
                 "byte " + std::to_string(r.src_off + bad) + " of the local source was never written (fresh " +
                     MemName(src.slot->mem) + ") and would be stored to global memory " + Hex(dst.addr + r.dst_off + bad));
        }
    }
    for (const Row& r : rows) {
        if (c.atomic_kind >= 0) {
            if (KindBytes(c.atomic_kind) != d.elem) {
                Fail(c, "atomic_type_mismatch", call,
                     std::string("SetAtomicAdd<") + KindName(c.atomic_kind) + "> with a copy of " +
                         std::to_string(d.elem) + "-byte elements");
            }
            /* Copy-outs of different cores adding into the same GM must not lose updates. */
            static std::mutex atomic_mutex;
            std::lock_guard<std::mutex> lk(atomic_mutex);
            AtomicAddInto(c.atomic_kind, dst.addr + r.dst_off, src.addr + r.src_off, r.len);
        } else {
            std::memcpy(dst.addr + r.dst_off, src.addr + r.src_off, r.len);
        }
        NoteGmWrite(c, EP_MTE3, seq, dst.addr + r.dst_off, r.len, call);
    }
}

void CopyLocalToLocal(const LocalRef& dst, const LocalRef& src, const CopyDesc& d, const char* call) {
    Core& c = Cur(call);
    CheckLocal(dst, call);
    CheckLocal(src, call);
    CheckLocalAligned(c, dst, call);
    CheckLocalAligned(c, src, call);
    if (d.pad_api) {
        Fail(c, "datacopy_bad_params", call, "DataCopyPad between local buffers is not emulated");
    }
    const std::vector<Row> rows = Rows(c, d, false, false, call);
    const uint32_t seq = Issue(c, EP_V);
    for (const Row& r : rows) {
        LocalAccess(c, EP_V, seq, src, r.src_off, r.len, false, call);
    }
    for (const Row& r : rows) {
        LocalAccess(c, EP_V, seq, dst, r.dst_off, r.len, true, call);
    }
    for (const Row& r : rows) {
        std::memmove(dst.addr + r.dst_off, src.addr + r.src_off, r.len);
        CopyDefined(c, dst.addr + r.dst_off, src.addr + r.src_off, r.len);
    }
}

namespace {
float LoadAsFloat(int kind, const uint8_t* p) {
    uint16_t h;
    switch (kind) {
        case K_F32: { float f; std::memcpy(&f, p, 4); return f; }
        case K_F16: std::memcpy(&h, p, 2); return HalfBitsToFloat(h);
        case K_BF16: std::memcpy(&h, p, 2); return Bf16BitsToFloat(h);
        default: return 0.0f;
    }
}
void StoreFloat(int kind, uint8_t* p, float f) {
    uint16_t h;
    switch (kind) {
        case K_F32: std::memcpy(p, &f, 4); break;
        case K_F16: h = FloatToHalfBits(f); std::memcpy(p, &h, 2); break;
        case K_BF16: h = FloatToBf16Bits(f); std::memcpy(p, &h, 2); break;
        default: break;
    }
}

/* Atomic add of copy-out elements into GM: float types add in fp32 and round once to the type
 * (the emulator's assumption), integers wrap. */
void AtomicAddInto(int kind, uint8_t* dst, const uint8_t* src, uint32_t n) {
    const uint32_t e = KindBytes(kind);
    for (uint32_t i = 0; i + e <= n; i += e) {
        switch (kind) {
            case K_F32:
            case K_F16:
            case K_BF16: StoreFloat(kind, dst + i, LoadAsFloat(kind, dst + i) + LoadAsFloat(kind, src + i)); break;
            case K_I8: { int8_t a, b; std::memcpy(&a, dst + i, 1); std::memcpy(&b, src + i, 1); a = static_cast<int8_t>(a + b); std::memcpy(dst + i, &a, 1); break; }
            case K_I16: { int16_t a, b; std::memcpy(&a, dst + i, 2); std::memcpy(&b, src + i, 2); a = static_cast<int16_t>(a + b); std::memcpy(dst + i, &a, 2); break; }
            case K_I32: { uint32_t a, b; std::memcpy(&a, dst + i, 4); std::memcpy(&b, src + i, 4); a += b; std::memcpy(dst + i, &a, 4); break; }
            default: break;
        }
    }
}
}  // namespace

void SetAtomic(int kind, const char* call) {
    Core& c = Cur(call);
    c.atomic_kind = kind;
}

}  // namespace hpmoe_emu
