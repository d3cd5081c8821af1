/* hpmoe AscendC emulator: the vector unit (level-2 APIs, a count of elements) and Cast, with
 * exact IEEE semantics: float types computed in fp32 and rounded once to the element type (round
 * to nearest, ties to even), integers in 64-bit and wrapped; no FMA (src/ is compiled with
 * -ffp-contract=off). Operands: 32-byte aligned starts, count within every operand's buffer, no
 * partial overlap of a destination with a source. */
#include <cmath>
#include <cstring>
#include <limits>

#include "machine.h"

namespace hpmoe_emu {

const char* KindName(int kind) {
    static const char* const names[] = {"float", "half", "bfloat16_t", "int8_t", "uint8_t", "int16_t",
                                        "uint16_t", "int32_t", "uint32_t", "int64_t", "uint64_t"};
    return kind >= 0 && kind <= K_U64 ? names[kind] : "?";
}
uint32_t KindBytes(int kind) {
    static const uint32_t bytes[] = {4, 2, 2, 1, 1, 2, 2, 4, 4, 8, 8};
    return kind >= 0 && kind <= K_U64 ? bytes[kind] : 1;
}

namespace {
bool IsFloat(int k) { return k == K_F32 || k == K_F16 || k == K_BF16; }

enum Mode { M_NONE = 0, M_RINT, M_FLOOR, M_CEIL, M_ROUND, M_TRUNC, M_ODD };
const char* ModeName(int m) {
    static const char* const names[] = {"CAST_NONE", "CAST_RINT", "CAST_FLOOR", "CAST_CEIL", "CAST_ROUND", "CAST_TRUNC", "CAST_ODD"};
    return m >= 0 && m <= 6 ? names[m] : "?";
}

/* x rounded to an integer by mode (ODD: the odd neighbour when inexact). */
double RoundInt(double x, int mode) {
    switch (mode) {
        case M_FLOOR: return std::floor(x);
        case M_CEIL: return std::ceil(x);
        case M_TRUNC: return std::trunc(x);
        case M_ROUND: return std::round(x);
        case M_ODD: {
            const double t = std::trunc(x);
            if (t == x) {
                return t;
            }
            return std::fmod(t, 2.0) != 0.0 ? t : t + (x > 0 ? 1.0 : -1.0);
        }
        default: return std::nearbyint(x); /* default rounding: to nearest, ties to even */
    }
}

/* x (finite) rounded to a binary format with `p` significand bits, minimum normal exponent emin
 * and largest finite `maxf`. */
double RoundFormat(double x, int p, int emin, double maxf, int mode) {
    if (std::isnan(x) || std::isinf(x) || x == 0.0) {
        return x;
    }
    int e = 0;
    std::frexp(std::fabs(x), &e); /* |x| = m * 2^e, m in [0.5, 1) */
    int E = e - 1;
    if (E < emin) {
        E = emin;
    }
    const double q = std::ldexp(1.0, E - (p - 1));
    const double r = RoundInt(x / q, mode) * q;
    if (std::fabs(r) > maxf) {
        const bool toward_zero = mode == M_TRUNC || mode == M_ODD || (mode == M_FLOOR && x > 0) || (mode == M_CEIL && x < 0);
        return toward_zero ? std::copysign(maxf, x) : std::copysign(std::numeric_limits<double>::infinity(), x);
    }
    return r;
}

constexpr double kHalfMax = 65504.0;
const double kBf16Max = std::ldexp(255.0 / 128.0, 127);
const double kF32Max = static_cast<double>(std::numeric_limits<float>::max());

uint16_t EncodeHalf(double v) {
    const uint16_t sign = std::signbit(v) ? 0x8000 : 0;
    const double a = std::fabs(v);
    if (std::isnan(v)) {
        return 0x7E00;
    }
    if (std::isinf(a) || a > kHalfMax) {
        return sign | 0x7C00;
    }
    if (a == 0.0) {
        return sign;
    }
    int e = 0;
    std::frexp(a, &e);
    const int E = e - 1;
    if (E < -14) {
        return sign | static_cast<uint16_t>(a / std::ldexp(1.0, -24));
    }
    const uint16_t mant = static_cast<uint16_t>((a / std::ldexp(1.0, E) - 1.0) * 1024.0);
    return sign | static_cast<uint16_t>((E + 15) << 10) | mant;
}

double ToFormat(double v, int kind, int mode) {
    switch (kind) {
        case K_F16: return RoundFormat(v, 11, -14, kHalfMax, mode);
        case K_BF16: return RoundFormat(v, 8, -126, kBf16Max, mode);
        default: return RoundFormat(v, 24, -126, kF32Max, mode);
    }
}
}  // namespace

uint16_t FloatToHalfBits(float f) { return EncodeHalf(RoundFormat(f, 11, -14, kHalfMax, M_RINT)); }
float HalfBitsToFloat(uint16_t h) {
    const int sign = (h >> 15) & 1;
    const int exp = (h >> 10) & 0x1F;
    const int mant = h & 0x3FF;
    double v;
    if (exp == 0x1F) {
        v = mant != 0 ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
    } else if (exp == 0) {
        v = std::ldexp(static_cast<double>(mant), -24);
    } else {
        v = std::ldexp(1.0 + mant / 1024.0, exp - 15);
    }
    return static_cast<float>(sign ? -v : v);
}
uint16_t FloatToBf16Bits(float f) {
    uint32_t b;
    std::memcpy(&b, &f, 4);
    if (std::isnan(f)) {
        return static_cast<uint16_t>((b >> 16) | 0x40);
    }
    const uint32_t r = b + 0x7FFF + ((b >> 16) & 1);
    return static_cast<uint16_t>(r >> 16);
}
float Bf16BitsToFloat(uint16_t h) {
    const uint32_t b = static_cast<uint32_t>(h) << 16;
    float f;
    std::memcpy(&f, &b, 4);
    return f;
}

namespace {
/* Element i of a buffer of `kind`, exactly, as a double. */
double Load(int kind, const uint8_t* base, uint64_t i) {
    const uint8_t* p = base + i * KindBytes(kind);
    switch (kind) {
        case K_F32: { float v; std::memcpy(&v, p, 4); return v; }
        case K_F16: { uint16_t v; std::memcpy(&v, p, 2); return HalfBitsToFloat(v); }
        case K_BF16: { uint16_t v; std::memcpy(&v, p, 2); return Bf16BitsToFloat(v); }
        case K_I8: return static_cast<int8_t>(*p);
        case K_U8: return *p;
        case K_I16: { int16_t v; std::memcpy(&v, p, 2); return v; }
        case K_U16: { uint16_t v; std::memcpy(&v, p, 2); return v; }
        case K_I32: { int32_t v; std::memcpy(&v, p, 4); return v; }
        case K_U32: { uint32_t v; std::memcpy(&v, p, 4); return v; }
        case K_I64: { int64_t v; std::memcpy(&v, p, 8); return static_cast<double>(v); }
        default: { uint64_t v; std::memcpy(&v, p, 8); return static_cast<double>(v); }
    }
}
int64_t LoadInt(int kind, const uint8_t* base, uint64_t i) {
    const uint8_t* p = base + i * KindBytes(kind);
    switch (kind) {
        case K_I8: return static_cast<int8_t>(*p);
        case K_U8: return *p;
        case K_I16: { int16_t v; std::memcpy(&v, p, 2); return v; }
        case K_U16: { uint16_t v; std::memcpy(&v, p, 2); return v; }
        case K_I32: { int32_t v; std::memcpy(&v, p, 4); return v; }
        case K_U32: { uint32_t v; std::memcpy(&v, p, 4); return v; }
        default: { int64_t v; std::memcpy(&v, p, 8); return v; }
    }
}
/* Stores an exactly representable value (floats: already rounded to the kind). */
void StoreExact(int kind, uint8_t* base, uint64_t i, double v) {
    uint8_t* p = base + i * KindBytes(kind);
    switch (kind) {
        case K_F32: { float f = static_cast<float>(v); std::memcpy(p, &f, 4); break; }
        case K_F16: { uint16_t h = EncodeHalf(v); std::memcpy(p, &h, 2); break; }
        case K_BF16: { float f = static_cast<float>(v); uint32_t b; std::memcpy(&b, &f, 4); uint16_t h = static_cast<uint16_t>(b >> 16);
                       if (std::isnan(f)) { h = static_cast<uint16_t>(h | 0x40); } std::memcpy(p, &h, 2); break; }
        default: break;
    }
}
void StoreInt(int kind, uint8_t* base, uint64_t i, int64_t v) {
    uint8_t* p = base + i * KindBytes(kind);
    switch (kind) {
        case K_I8: case K_U8: { uint8_t x = static_cast<uint8_t>(v); std::memcpy(p, &x, 1); break; }
        case K_I16: case K_U16: { uint16_t x = static_cast<uint16_t>(v); std::memcpy(p, &x, 2); break; }
        case K_I32: case K_U32: { uint32_t x = static_cast<uint32_t>(v); std::memcpy(p, &x, 4); break; }
        default: std::memcpy(p, &v, 8); break;
    }
}
float LoadF(int kind, const uint8_t* base, uint64_t i) {
    if (kind == K_F32) {
        float f;
        std::memcpy(&f, base + i * 4, 4);
        return f;
    }
    return static_cast<float>(Load(kind, base, i));
}
/* Rounds to the kind (nearest even) and stores. */
void StoreF(int kind, uint8_t* base, uint64_t i, float f) {
    uint16_t h;
    switch (kind) {
        case K_F32: std::memcpy(base + i * 4, &f, 4); break;
        case K_BF16: h = FloatToBf16Bits(f); std::memcpy(base + i * 2, &h, 2); break;
        case K_F16: h = FloatToHalfBits(f); std::memcpy(base + i * 2, &h, 2); break;
        default: break;
    }
}

void CheckOperand(Core& c, const LocalRef& t, uint64_t bytes, const char* call, const char* which) {
    CheckLocal(t, call);
    if (t.slot->mem != MEM_UB) {
        Fail(c, "bad_position", call,
             std::string(which) + " operand is in " + MemName(t.slot->mem) + ": the vector unit works on UB only");
    }
    const uint64_t off = static_cast<uint64_t>(t.addr - c.mem[t.slot->mem].data());
    if (off % 32 != 0) {
        Fail(c, "vector_unaligned", call,
             std::string(which) + " operand at " + MemName(t.slot->mem) + " offset " + std::to_string(off) +
                 " is not 32-byte aligned");
    }
    if (bytes > t.bytes) {
        Fail(c, "vector_count_exceeds_buffer", call,
             std::string(which) + " operand: " + std::to_string(bytes) + " bytes needed, the LocalTensor has " +
                 std::to_string(t.bytes));
    }
}

void CheckCount(Core& c, int64_t n, const char* call) {
    if (n <= 0) {
        Fail(c, "vector_bad_count", call, "count=" + std::to_string(n));
    }
}

void CheckOverlap(Core& c, const LocalRef& d, uint64_t dn, const LocalRef& s, uint64_t sn, const char* call) {
    if (d.addr != s.addr && d.addr < s.addr + sn && s.addr < d.addr + dn) {
        Fail(c, "vector_operand_overlap", call, "the destination partially overlaps a source");
    }
}

/* Reads, then writes, on the V pipe; returns the instruction's sequence number. */
uint32_t VAccess(Core& c, const char* call, std::initializer_list<std::pair<const LocalRef*, uint64_t>> reads,
                 const LocalRef& d, uint64_t dn) {
    const uint32_t seq = Issue(c, EP_V);
    for (const auto& r : reads) {
        LocalAccess(c, EP_V, seq, *r.first, 0, r.second, false, call);
    }
    LocalAccess(c, EP_V, seq, d, 0, dn, true, call);
    return seq;
}
}  // namespace

namespace {
/* d[i] = a[i] op b[i * b_step] for i < n: b_step 0 is a scalar operand (Muls, Adds, ...). */
void Elementwise(Core& c, int op, int kind, uint8_t* d, const uint8_t* a, const uint8_t* b, uint64_t b_step, int64_t n,
                 const char* call) {
    for (int64_t i = 0; i < n; ++i) {
        const uint64_t j = static_cast<uint64_t>(i) * b_step;
        if (IsFloat(kind)) {
            const float x = LoadF(kind, a, i), y = LoadF(kind, b, j);
            float r = 0;
            switch (op) {
                case VO_ADD: r = x + y; break;
                case VO_SUB: r = x - y; break;
                case VO_MUL: r = x * y; break;
                case VO_DIV: r = x / y; break;
                case VO_MAX: r = x > y ? x : y; break;
                default: r = x < y ? x : y; break;
            }
            StoreF(kind, d, i, r);
        } else {
            const int64_t x = LoadInt(kind, a, i), y = LoadInt(kind, b, j);
            int64_t r = 0;
            switch (op) {
                case VO_ADD: r = x + y; break;
                case VO_SUB: r = x - y; break;
                case VO_MUL: r = x * y; break;
                case VO_DIV:
                    if (y == 0) {
                        Fail(c, "vector_divide_by_zero", call, "integer division by zero at element " + std::to_string(i));
                    }
                    r = x / y;
                    break;
                case VO_MAX: r = x > y ? x : y; break;
                default: r = x < y ? x : y; break;
            }
            StoreInt(kind, d, i, r);
        }
    }
}
}  // namespace

void VecBinary(int op, int kind, const LocalRef& d, const LocalRef& a, const LocalRef& b, int32_t n, const char* call) {
    Core& c = Cur(call);
    CheckCount(c, n, call);
    const uint64_t bytes = uint64_t(n) * KindBytes(kind);
    CheckOperand(c, d, bytes, call, "dst");
    CheckOperand(c, a, bytes, call, "src0");
    CheckOperand(c, b, bytes, call, "src1");
    CheckOverlap(c, d, bytes, a, bytes, call);
    CheckOverlap(c, d, bytes, b, bytes, call);
    VAccess(c, call, {{&a, bytes}, {&b, bytes}}, d, bytes);
    Elementwise(c, op, kind, d.addr, a.addr, b.addr, 1, n, call);
    PropagateDefined(c, d.addr, KindBytes(kind), {{a.addr, KindBytes(kind)}, {b.addr, KindBytes(kind)}}, n);
}

void VecUnary(int op, int kind, const LocalRef& d, const LocalRef& s, int32_t n, const char* call) {
    Core& c = Cur(call);
    CheckCount(c, n, call);
    if (!IsFloat(kind) && op != VO_ABS) {
        Fail(c, "vector_bad_type", call, std::string(KindName(kind)) + " is not supported");
    }
    const uint64_t bytes = uint64_t(n) * KindBytes(kind);
    CheckOperand(c, d, bytes, call, "dst");
    CheckOperand(c, s, bytes, call, "src");
    CheckOverlap(c, d, bytes, s, bytes, call);
    VAccess(c, call, {{&s, bytes}}, d, bytes);
    for (int64_t i = 0; i < n; ++i) {
        if (!IsFloat(kind)) {
            const int64_t x = LoadInt(kind, s.addr, i);
            StoreInt(kind, d.addr, i, x < 0 ? -x : x);
            continue;
        }
        const float x = LoadF(kind, s.addr, i);
        float r = 0;
        switch (op) {
            case VO_EXP: r = std::exp(x); break;
            case VO_ABS: r = std::fabs(x); break;
            case VO_RECIP: r = 1.0f / x; break;
            default: r = std::sqrt(x); break;
        }
        StoreF(kind, d.addr, i, r);
    }
    PropagateDefined(c, d.addr, KindBytes(kind), {{s.addr, KindBytes(kind)}}, static_cast<uint64_t>(n));
}

void VecScalar(int op, int kind, const LocalRef& d, const LocalRef& s, const void* scalar, int32_t n, const char* call) {
    Core& c = Cur(call);
    CheckCount(c, n, call);
    const uint64_t bytes = uint64_t(n) * KindBytes(kind);
    CheckOperand(c, d, bytes, call, "dst");
    CheckOperand(c, s, bytes, call, "src");
    CheckOverlap(c, d, bytes, s, bytes, call);
    VAccess(c, call, {{&s, bytes}}, d, bytes);
    const int binary = op == VO_MULS ? VO_MUL : op == VO_ADDS ? VO_ADD : op == VO_MAXS ? VO_MAX : VO_MIN;
    Elementwise(c, binary, kind, d.addr, s.addr, static_cast<const uint8_t*>(scalar), 0, n, call);
    PropagateDefined(c, d.addr, KindBytes(kind), {{s.addr, KindBytes(kind)}}, n);
}

void VecDuplicate(int kind, const LocalRef& d, const void* scalar, int32_t n, const char* call) {
    Core& c = Cur(call);
    CheckCount(c, n, call);
    const uint32_t e = KindBytes(kind);
    const uint64_t bytes = uint64_t(n) * e;
    CheckOperand(c, d, bytes, call, "dst");
    const uint32_t seq = Issue(c, EP_V);
    LocalAccess(c, EP_V, seq, d, 0, bytes, true, call);
    for (int64_t i = 0; i < n; ++i) {
        std::memcpy(d.addr + i * e, scalar, e);
    }
    MarkDefined(c, d.addr, bytes, true);
}

void VecReduce(int op, int kind, const LocalRef& d, const LocalRef& s, const LocalRef& work, int32_t n, bool index,
               const char* call) {
    Core& c = Cur(call);
    CheckCount(c, n, call);
    const uint32_t e = KindBytes(kind);
    const uint64_t bytes = uint64_t(n) * e;
    /* Work buffer: one 32-byte block per 256-byte repeat of the source (at least one block);
     * the emulator's reading of the documented size rule (README.md). */
    const uint64_t work_bytes = ((bytes + 255) / 256) * 32;
    CheckOperand(c, s, bytes, call, "src");
    CheckOperand(c, work, work_bytes, call, "work");
    CheckOperand(c, d, index ? 2 * e : e, call, "dst");
    const uint32_t seq = Issue(c, EP_V);
    LocalAccess(c, EP_V, seq, s, 0, bytes, false, call);
    LocalAccess(c, EP_V, seq, work, 0, work_bytes, true, call);
    LocalAccess(c, EP_V, seq, d, 0, index ? 2 * e : e, true, call);
    float acc = op == VO_REDUCE_MAX ? LoadF(kind, s.addr, 0) : 0.0f;
    uint32_t at = 0;
    for (int64_t i = op == VO_REDUCE_MAX ? 1 : 0; i < n; ++i) {
        const float x = LoadF(kind, s.addr, i);
        if (op == VO_REDUCE_MAX) {
            if (x > acc) {
                acc = x;
                at = static_cast<uint32_t>(i);
            }
        } else {
            acc = acc + x;
        }
    }
    std::memset(work.addr, 0xFF, work_bytes);
    MarkDefined(c, work.addr, work_bytes, false);
    StoreF(kind, d.addr, 0, acc);
    MarkDefined(c, d.addr, index ? 2 * e : e, FirstUndefined(c, s.addr, bytes) == bytes);
    if (index) {
        /* The index, as the bits of the second element. */
        if (e == 4) {
            std::memcpy(d.addr + 4, &at, 4);
        } else {
            const uint16_t a16 = static_cast<uint16_t>(at);
            std::memcpy(d.addr + 2, &a16, 2);
        }
    }
}

void VecCast(int dkind, int skind, const LocalRef& d, const LocalRef& s, int mode, uint32_t n, const char* call) {
    Core& c = Cur(call);
    CheckCount(c, n, call);
    const uint64_t db = uint64_t(n) * KindBytes(dkind), sb = uint64_t(n) * KindBytes(skind);
    CheckOperand(c, d, db, call, "dst");
    CheckOperand(c, s, sb, call, "src");
    if (d.addr != s.addr) {
        CheckOverlap(c, d, db, s, sb, call);
    } else if (KindBytes(dkind) != KindBytes(skind)) {
        Fail(c, "vector_operand_overlap", call, "an in-place Cast between types of different sizes");
    }
    const bool df = IsFloat(dkind), sf = IsFloat(skind);
    const std::string pair = std::string(KindName(skind)) + " -> " + KindName(dkind) + " with " + ModeName(mode);
    if (dkind == skind && (!df || mode == M_NONE)) {
        Fail(c, "cast_unsupported", call, pair + ": a same-type Cast must round (float types only)");
    }
    if (!df && sf && mode == M_NONE) {
        Fail(c, "cast_unsupported", call, pair + ": a float -> integer Cast needs a rounding mode");
    }
    if (!df && !sf) {
        Fail(c, "cast_unsupported", call, pair + ": integer -> integer Cast is not emulated");
    }
    if (df && sf && KindBytes(dkind) > KindBytes(skind) && mode != M_NONE) {
        Fail(c, "cast_unsupported", call, pair + ": a widening Cast is exact and takes CAST_NONE");
    }
    VAccess(c, call, {{&s, sb}}, d, db);
    std::vector<double> v(n);
    for (uint32_t i = 0; i < n; ++i) {
        v[i] = Load(skind, s.addr, i);
    }
    for (uint32_t i = 0; i < n; ++i) {
        const double x = v[i];
        if (df) {
            const double r = dkind == skind ? RoundInt(x, mode) : ToFormat(x, dkind, mode == M_NONE ? M_RINT : mode);
            StoreExact(dkind, d.addr, i, r);
        } else {
            /* float -> integer: round by mode, saturate to the type (NaN -> 0): README.md. */
            double r = std::isnan(x) ? 0.0 : RoundInt(x, mode);
            double lo = 0, hi = 0;
            switch (dkind) {
                case K_I8: lo = -128; hi = 127; break;
                case K_U8: lo = 0; hi = 255; break;
                case K_I16: lo = -32768; hi = 32767; break;
                case K_U16: lo = 0; hi = 65535; break;
                case K_I32: lo = -2147483648.0; hi = 2147483647.0; break;
                case K_U32: lo = 0; hi = 4294967295.0; break;
                default: lo = -9.2233720368547758e18; hi = 9.2233720368547758e18; break;
            }
            r = r < lo ? lo : (r > hi ? hi : r);
            StoreInt(dkind, d.addr, i, static_cast<int64_t>(r));
        }
    }
    PropagateDefined(c, d.addr, KindBytes(dkind), {{s.addr, KindBytes(skind)}}, n);
}

void VecSwiGlu(int kind, const LocalRef& d, const LocalRef& a, const LocalRef& b, float beta, const LocalRef* work,
               uint32_t n, const char* call) {
    Core& c = Cur(call);
    const uint32_t e = KindBytes(kind);
    if (n == UINT32_MAX) {
        n = a.bytes / e;
    }
    CheckCount(c, n, call);
    const uint64_t bytes = uint64_t(n) * e;
    CheckOperand(c, d, bytes, call, "dst");
    CheckOperand(c, a, bytes, call, "src0");
    CheckOperand(c, b, bytes, call, "src1");
    if (work != nullptr) {
        CheckLocal(*work, call);
    }
    VAccess(c, call, {{&a, bytes}, {&b, bytes}}, d, bytes);
    for (uint32_t i = 0; i < n; ++i) {
        const float x0 = LoadF(kind, a.addr, i), x1 = LoadF(kind, b.addr, i);
        const float swish = x1 / (1.0f + std::exp(-beta * x1));
        StoreF(kind, d.addr, i, x0 * swish);
    }
    PropagateDefined(c, d.addr, e, {{a.addr, e}, {b.addr, e}}, n);
}

}  // namespace hpmoe_emu
