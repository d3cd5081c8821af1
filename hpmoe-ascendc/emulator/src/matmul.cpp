/* hpmoe AscendC emulator: the Matmul high-level API, AIC-driven (ASCENDC_CUBE_ONLY) only.
 *
 * Init checks the tiling: base blocks fit L0A (64 KiB), L0B (64 KiB), L0C (128 KiB, fp32/int32
 * accumulators) with their double-buffering factors, and the L1 stages (depthA1 / depthB1 base
 * blocks) fit what the core's TPipe left of L1 (512 KiB). Every SetSingleShape must fit the
 * tiling's singleCore sizes, and the original shapes must hold the single shape. IterateAll
 * reads A and B (MTE2; a transposed A is stored K x M with rows orgM apart, a transposed B N x K
 * with rows orgKb apart), computes in the fixed order of lib/matmul_intf.h and writes C by FIX
 * (pending until the scalar pipe knows it complete). Iterate computes one base block into the
 * object's CO1 accumulators (continuing them with enPartialSum), GetTensorC writes them like
 * IterateAll's C; the pairing rules are lib/matmul_intf.h's. */
#include <cstring>

#include "kernel_tiling/kernel_tiling.h"
#include "machine.h"

namespace hpmoe_emu {

namespace {
constexpr uint64_t kL0A = 64 * 1024, kL0B = 64 * 1024, kL0C = 128 * 1024, kL1 = 512 * 1024;

double LoadElem(int kind, const uint8_t* p) {
    uint16_t h;
    switch (kind) {
        case K_F32: { float f; std::memcpy(&f, p, 4); return f; }
        case K_F16: std::memcpy(&h, p, 2); return HalfBitsToFloat(h);
        case K_BF16: std::memcpy(&h, p, 2); return Bf16BitsToFloat(h);
        case K_I8: return static_cast<int8_t>(*p);
        default: return 0.0;
    }
}
const AscendC::tiling::TCubeTiling& Tiling(const MatmulDesc& mm) {
    return *static_cast<const AscendC::tiling::TCubeTiling*>(mm.tiling);
}
}  // namespace

void MatmulInit(MatmulDesc& mm, const void* tiling, bool cube_only, const char* call) {
    Core& c = Cur(call);
    if (!cube_only) {
        Fail(c, "matmul_mode", call,
             "REGIST_MATMUL_OBJ without ASCENDC_CUBE_ONLY runs the AIC server loop for AIV clients, which is not emulated");
    }
    if (!c.aic) {
        Fail(c, "matmul_mode", call, "a Matmul driven by an AIV (only AIC-driven ASCENDC_CUBE_ONLY matmuls are emulated)");
    }
    if (tiling == nullptr) {
        Fail(c, "matmul_tiling", call, "null TCubeTiling");
    }
    mm.tiling = tiling;
    const AscendC::tiling::TCubeTiling& t = Tiling(mm);
    const uint64_t sa = KindBytes(mm.akind), sb = KindBytes(mm.bkind);
    auto bad = [&](const std::string& why) { Fail(c, "matmul_tiling", call, why); };
    if (t.M <= 0 || t.N <= 0 || t.Ka <= 0 || t.Kb <= 0 || t.baseM <= 0 || t.baseN <= 0 || t.baseK <= 0 ||
        t.singleCoreM <= 0 || t.singleCoreN <= 0 || t.singleCoreK <= 0) {
        bad("M/N/Ka/Kb, singleCore* and base* must be positive (M=" + std::to_string(t.M) + " N=" + std::to_string(t.N) +
            " Ka=" + std::to_string(t.Ka) + " baseM=" + std::to_string(t.baseM) + " baseN=" + std::to_string(t.baseN) +
            " baseK=" + std::to_string(t.baseK) + ")");
    }
    if (t.Ka != t.Kb) {
        bad("Ka=" + std::to_string(t.Ka) + " differs from Kb=" + std::to_string(t.Kb));
    }
    if (t.singleCoreM > t.M || t.singleCoreN > t.N || t.singleCoreK > t.Ka) {
        bad("singleCore sizes exceed M/N/K");
    }
    const uint64_t dbA = t.dbL0A >= 2 ? 2 : 1, dbB = t.dbL0B >= 2 ? 2 : 1, dbC = t.dbL0C >= 2 ? 2 : 1;
    const uint64_t l0a = uint64_t(t.baseM) * t.baseK * sa * dbA;
    const uint64_t l0b = uint64_t(t.baseK) * t.baseN * sb * dbB;
    const uint64_t l0c = uint64_t(t.baseM) * t.baseN * 4 * dbC;
    if (l0a > kL0A) {
        bad("L0A needs baseM*baseK*" + std::to_string(sa) + "*dbL0A = " + std::to_string(l0a) + " > 65536 bytes");
    }
    if (l0b > kL0B) {
        bad("L0B needs baseK*baseN*" + std::to_string(sb) + "*dbL0B = " + std::to_string(l0b) + " > 65536 bytes");
    }
    if (l0c > kL0C) {
        bad("L0C needs baseM*baseN*4*dbL0C = " + std::to_string(l0c) + " > 131072 bytes");
    }
    const uint64_t depthA = t.depthA1 > 0 ? t.depthA1 : 1, depthB = t.depthB1 > 0 ? t.depthB1 : 1;
    const uint64_t l1 = depthA * t.baseM * t.baseK * sa + depthB * t.baseK * t.baseN * sb;
    if (l1 + c.used[MEM_L1] > kL1) {
        bad("L1 needs depthA1*baseM*baseK*" + std::to_string(sa) + " + depthB1*baseK*baseN*" + std::to_string(sb) + " = " +
            std::to_string(l1) + " bytes, " + std::to_string(kL1 - c.used[MEM_L1]) + " left after the TPipe's buffers");
    }
    c.used[MEM_L1] += static_cast<uint32_t>(l1);
    mm.inited = true;
}

void MatmulCheckShape(MatmulDesc& mm, const char* call) {
    Core& c = Cur(call);
    if (!mm.inited) {
        Fail(c, "matmul_misuse", call, "the Matmul object was not registered/initialised (REGIST_MATMUL_OBJ)");
    }
    const AscendC::tiling::TCubeTiling& t = Tiling(mm);
    if (mm.single_m > t.singleCoreM || mm.single_n > t.singleCoreN || mm.single_k > t.singleCoreK) {
        Fail(c, "matmul_shape", call,
             "SetSingleShape(" + std::to_string(mm.single_m) + ", " + std::to_string(mm.single_n) + ", " +
                 std::to_string(mm.single_k) + ") exceeds the tiling's singleCore sizes (" + std::to_string(t.singleCoreM) +
                 ", " + std::to_string(t.singleCoreN) + ", " + std::to_string(t.singleCoreK) + ")");
    }
}

namespace {
/* The shapes of one product and where its operands' elements are: A is M x K with rows orgKa
 * apart, or (transposed) K x M with rows orgM apart; B is K x N with rows orgN apart, or
 * (transposed) N x K with rows orgKb apart; C's rows are ldc (orgKc, else orgN) apart. */
struct Product {
    int M = 0, N = 0, K = 0, orgM = 0, orgN = 0, orgKa = 0, orgKb = 0, ldc = 0;
    bool ta = false, tb = false;
    uint64_t sa = 0, sb = 0, sc = 0;
    uint64_t AAt(int i, int p) const { return ta ? uint64_t(p) * orgM + i : uint64_t(i) * orgKa + p; }
    uint64_t BAt(int p, int j) const { return tb ? uint64_t(j) * orgKb + p : uint64_t(p) * orgN + j; }
};

/* The checks every computing call makes (what: "IterateAll" or "Iterate"), then A's and B's reads
 * on MTE2 (bounds, this core's own pending writes, SHMEM in flight). */
Product ReadOperands(Core& c, MatmulDesc& mm, const char* what, const char* call) {
    const std::string w(what);
    if (!mm.inited) {
        Fail(c, "matmul_misuse", call, "the Matmul object was not registered/initialised (REGIST_MATMUL_OBJ)");
    }
    if (mm.ended) {
        Fail(c, "matmul_misuse", call, w + " after End()");
    }
    if (!mm.a_set || !mm.b_set) {
        Fail(c, "matmul_misuse", call,
             mm.org_set ? w + " without SetTensorA/SetTensorB after the last SetOrgShape (the documented order: "
                              "SetOrgShape, then SetTensorA, SetTensorB and SetSingleShape)"
                        : w + " before SetTensorA/SetTensorB");
    }
    if ((mm.trans_a && !mm.may_trans_a) || (mm.trans_b && !mm.may_trans_b)) {
        Fail(c, "matmul_mode", call,
             std::string("SetTensor") + (mm.trans_a && !mm.may_trans_a ? "A" : "B") +
                 " with isTranspose = true on a Matmul whose MatmulType has isTrans = false (the SetTensorA/B page: "
                 "transposing needs isTrans in the type)");
    }
    const AscendC::tiling::TCubeTiling& t = Tiling(mm);
    Product p;
    p.M = mm.tail_m > 0 ? mm.tail_m : (mm.single_m > 0 ? mm.single_m : t.singleCoreM);
    p.N = mm.tail_n > 0 ? mm.tail_n : (mm.single_n > 0 ? mm.single_n : t.singleCoreN);
    p.K = mm.tail_k > 0 ? mm.tail_k : (mm.single_k > 0 ? mm.single_k : t.singleCoreK);
    p.orgM = mm.org_m > 0 ? mm.org_m : t.M;
    p.orgN = mm.org_n > 0 ? mm.org_n : t.N;
    p.orgKa = mm.org_ka > 0 ? mm.org_ka : t.Ka;
    p.orgKb = mm.org_kb > 0 ? mm.org_kb : t.Kb;
    p.ldc = mm.org_kc > 0 ? mm.org_kc : p.orgN;
    p.ta = mm.trans_a;
    p.tb = mm.trans_b;
    p.sa = KindBytes(mm.akind);
    p.sb = KindBytes(mm.bkind);
    p.sc = KindBytes(mm.ckind);
    if (p.M > p.orgM) {
        Fail(c, "matmul_shape", call, "M=" + std::to_string(p.M) + " > orgM=" + std::to_string(mm.org_m));
    }
    if (p.N > p.orgN || p.K > p.orgKa || p.K > p.orgKb || p.N > p.ldc) {
        Fail(c, "matmul_shape", call,
             "single shape (" + std::to_string(p.M) + ", " + std::to_string(p.N) + ", " + std::to_string(p.K) +
                 ") does not fit the original shape (orgN=" + std::to_string(p.orgN) + " orgKa=" + std::to_string(p.orgKa) +
                 " orgKb=" + std::to_string(p.orgKb) + " orgKc=" + std::to_string(p.ldc) + ")");
    }
    Issue(c, EP_MTE2);
    /* The stored rows read: A's M (or K) rows of K (or M) elements, B's K (or N) rows of N (or K). */
    const int a_rows = p.ta ? p.K : p.M, a_len = p.ta ? p.M : p.K, b_rows = p.tb ? p.N : p.K, b_len = p.tb ? p.K : p.N;
    for (int r = 0; r < a_rows; ++r) {
        const uint8_t* row = mm.a + (p.ta ? p.AAt(0, r) : p.AAt(r, 0)) * p.sa;
        GmRange(c, row, uint64_t(a_len) * p.sa, call, "A row");
        CheckGmReadAfterOwnWrite(c, EP_MTE2, row, uint64_t(a_len) * p.sa, call);
        CheckNotInFlight(c, row, uint64_t(a_len) * p.sa, call);
    }
    for (int r = 0; r < b_rows; ++r) {
        const uint8_t* row = mm.b + (p.tb ? p.BAt(0, r) : p.BAt(r, 0)) * p.sb;
        GmRange(c, row, uint64_t(b_len) * p.sb, call, "B row");
        CheckGmReadAfterOwnWrite(c, EP_MTE2, row, uint64_t(b_len) * p.sb, call);
        CheckNotInFlight(c, row, uint64_t(b_len) * p.sb, call);
    }
    return p;
}

/* acc + A[i, 0] * B[0, j] + A[i, 1] * B[1, j] + ..., each product and each addition in fp32. */
float Continue(const MatmulDesc& mm, const Product& p, int i, int j, float acc) {
    for (int q = 0; q < p.K; ++q) {
        const float x = static_cast<float>(LoadElem(mm.akind, mm.a + p.AAt(i, q) * p.sa));
        const float y = static_cast<float>(LoadElem(mm.bkind, mm.b + p.BAt(q, j) * p.sb));
        const float prod = x * y;
        acc = acc + prod;
    }
    return acc;
}

/* C's M x N rows at cptr (ldc apart) from row-major fp32 values, rounded once to C's type, written
 * by FIX or, for atomic, added into an FP32 C (old + value). */
void WriteC(Core& c, const MatmulDesc& mm, const Product& p, uint8_t* cptr, uint64_t c_bytes, bool atomic,
            const std::vector<float>& value, const char* call) {
    const uint64_t sc = p.sc;
    for (int i = 0; i < p.M; ++i) {
        if (c_bytes != UINT64_MAX && (uint64_t(i) * p.ldc + p.N) * sc > c_bytes) {
            Fail(c, "gm_out_of_bounds", call, "C row " + std::to_string(i) + " runs past the GlobalTensor");
        }
        GmRange(c, cptr + uint64_t(i) * p.ldc * sc, uint64_t(p.N) * sc, call, "C row");
        if (atomic) {
            /* The FIX pipe reads C to add into it: this core's writes of C on other pipes must be
             * complete to FIX, and nothing may still be landing in it. */
            CheckGmReadAfterOwnWrite(c, EP_FIX, cptr + uint64_t(i) * p.ldc * sc, uint64_t(p.N) * sc, call);
            CheckNotInFlight(c, cptr + uint64_t(i) * p.ldc * sc, uint64_t(p.N) * sc, call);
        }
    }
    if (c.atomic_kind >= 0) {
        Fail(c, "matmul_mode", call, std::string(call) + " under SetAtomicAdd is not emulated");
    }
    const uint32_t wr = Issue(c, EP_FIX);
    std::vector<uint8_t> out(uint64_t(p.N) * sc);
    for (int i = 0; i < p.M; ++i) {
        uint8_t* row = cptr + uint64_t(i) * p.ldc * sc;
        for (int j = 0; j < p.N; ++j) {
            float v = value[uint64_t(i) * p.N + j];
            if (atomic) {
                float old;
                std::memcpy(&old, row + uint64_t(j) * sc, 4);
                v = old + v;
            }
            uint8_t* dst = out.data() + uint64_t(j) * sc;
            uint16_t h;
            switch (mm.ckind) {
                case K_F32: std::memcpy(dst, &v, 4); break;
                case K_F16: h = FloatToHalfBits(v); std::memcpy(dst, &h, 2); break;
                case K_BF16: h = FloatToBf16Bits(v); std::memcpy(dst, &h, 2); break;
                default: Fail(c, "matmul_mode", call, "C type not emulated");
            }
        }
        std::memcpy(row, out.data(), out.size());
        NoteGmWrite(c, EP_FIX, wr, row, out.size(), call);
    }
}

void CheckAtomic(Core& c, const MatmulDesc& mm, uint8_t atomic, const char* what, const char* call) {
    if (atomic > 1 || (atomic == 1 && mm.ckind != K_F32)) {
        Fail(c, "not_emulated", call,
             atomic > 1 ? std::string(what) + " with AtomicMax/AtomicMin (enAtomic " + std::to_string(atomic) + ")"
                        : std::string(what) + " with AtomicAdd into a C that is not float");
    }
}

/* CO1 holds a block Iterate computed and GetTensorC has not fetched: computing anything else
 * would overwrite it (the emulator's strict reading: the pages pair each Iterate with a
 * GetTensorC). */
void CheckCo1Free(Core& c, const MatmulDesc& mm, const std::string& what, const char* call) {
    if (mm.l0c_valid) {
        Fail(c, "matmul_misuse", call,
             what + " while CO1 holds a " + std::to_string(mm.l0c_m) + " x " + std::to_string(mm.l0c_n) +
                 " block from Iterate that no GetTensorC fetched");
    }
}
}  // namespace

void MatmulIterateAll(MatmulDesc& mm, uint8_t* cptr, uint64_t c_bytes, uint8_t atomic, const char* call) {
    Core& c = Cur(call);
    CheckCo1Free(c, mm, "IterateAll", call);
    const Product p = ReadOperands(c, mm, "IterateAll", call);
    CheckAtomic(c, mm, atomic, "IterateAll", call);
    Issue(c, EP_M);
    if (mm.akind == K_I8) {
        if (mm.ckind != K_I32) {
            Fail(c, "matmul_mode", call, "int8 matmul with a non-int32 C is not emulated");
        }
        for (int i = 0; i < p.M; ++i) {
            GmRange(c, cptr + uint64_t(i) * p.ldc * p.sc, uint64_t(p.N) * p.sc, call, "C row");
        }
        const uint32_t wr = Issue(c, EP_FIX);
        for (int i = 0; i < p.M; ++i) {
            uint8_t* row = cptr + uint64_t(i) * p.ldc * p.sc;
            for (int j = 0; j < p.N; ++j) {
                int32_t acc = 0;
                for (int q = 0; q < p.K; ++q) {
                    acc += static_cast<int32_t>(LoadElem(K_I8, mm.a + p.AAt(i, q) * p.sa)) *
                           static_cast<int32_t>(LoadElem(K_I8, mm.b + p.BAt(q, j) * p.sb));
                }
                std::memcpy(row + uint64_t(j) * 4, &acc, 4);
            }
            NoteGmWrite(c, EP_FIX, wr, row, uint64_t(p.N) * 4, call);
        }
        return;
    }
    std::vector<float> value(uint64_t(p.M) * p.N);
    for (int i = 0; i < p.M; ++i) {
        for (int j = 0; j < p.N; ++j) {
            value[uint64_t(i) * p.N + j] = Continue(mm, p, i, j, 0.0f);
        }
    }
    WriteC(c, mm, p, cptr, c_bytes, atomic == 1, value, call);
}

bool MatmulIterate(MatmulDesc& mm, bool partial, const char* call) {
    Core& c = Cur(call);
    if (!partial) {
        CheckCo1Free(c, mm, "Iterate(enPartialSum = false)", call);
    }
    if (mm.block_done) {
        Fail(c, "matmul_misuse", call,
             "Iterate again before new SetTensorA/SetTensorB: the single shape is one base block, which the last "
             "Iterate computed (the emulator models one block per Iterate)");
    }
    const Product p = ReadOperands(c, mm, "Iterate", call);
    if (mm.akind == K_I8) {
        Fail(c, "not_emulated", call, "Iterate of an int8 Matmul (use IterateAll)");
    }
    const AscendC::tiling::TCubeTiling& t = Tiling(mm);
    if (p.M != t.baseM || p.N != t.baseN) {
        Fail(c, "matmul_shape", call,
             "Iterate of a " + std::to_string(p.M) + " x " + std::to_string(p.N) + " single shape with base blocks of " +
                 std::to_string(t.baseM) + " x " + std::to_string(t.baseN) +
                 ": accumulating in L0C needs singleCoreM == baseM and singleCoreN == baseN (the Iterate page); "
                 "the emulator models Iterate of one base block only");
    }
    if (partial) {
        if (!mm.l0c_valid) {
            Fail(c, "matmul_misuse", call,
                 "Iterate(enPartialSum = true) with no block in CO1 to add to (start with Iterate(false); "
                 "GetTensorC releases CO1)");
        }
        if (mm.l0c_m != p.M || mm.l0c_n != p.N) {
            Fail(c, "matmul_shape", call,
                 "Iterate(enPartialSum = true) of a " + std::to_string(p.M) + " x " + std::to_string(p.N) +
                     " block onto CO1's " + std::to_string(mm.l0c_m) + " x " + std::to_string(mm.l0c_n) + " block");
        }
    } else {
        mm.l0c.assign(uint64_t(p.M) * p.N, 0.0f);
        mm.l0c_m = p.M;
        mm.l0c_n = p.N;
    }
    Issue(c, EP_M);
    for (int i = 0; i < p.M; ++i) {
        for (int j = 0; j < p.N; ++j) {
            float& acc = mm.l0c[uint64_t(i) * p.N + j];
            acc = Continue(mm, p, i, j, acc);
        }
    }
    mm.l0c_valid = true;
    mm.block_done = true;
    return true;
}

void MatmulGetTensorC(MatmulDesc& mm, uint8_t* cptr, uint64_t c_bytes, uint8_t atomic, bool sequential,
                      const char* call) {
    Core& c = Cur(call);
    if (!mm.inited || mm.ended) {
        Fail(c, "matmul_misuse", call, mm.inited ? "GetTensorC after End()" : "GetTensorC on a Matmul never initialised");
    }
    if (!mm.l0c_valid) {
        Fail(c, "matmul_misuse", call,
             "GetTensorC with no block in CO1 (the GetTensorC page: it fetches the block an Iterate computed; each "
             "block is fetched once)");
    }
    if (sequential) {
        Unsupported(call, "GetTensorC with enSequentialWrite");
    }
    CheckAtomic(c, mm, atomic, "GetTensorC", call);
    Product p;
    p.M = mm.l0c_m;
    p.N = mm.l0c_n;
    p.orgN = mm.org_n > 0 ? mm.org_n : Tiling(mm).N;
    p.ldc = mm.org_kc > 0 ? mm.org_kc : p.orgN;
    p.sc = KindBytes(mm.ckind);
    if ((uint64_t(p.N) * p.sc) % 32 != 0 || reinterpret_cast<uintptr_t>(cptr) % 32 != 0 ||
        (uint64_t(p.ldc) * p.sc) % 32 != 0) {
        Fail(c, "matmul_unaligned", call,
             "C rows of " + std::to_string(uint64_t(p.N) * p.sc) + " bytes, " + std::to_string(uint64_t(p.ldc) * p.sc) +
                 " bytes apart, from a GM address " + std::to_string(reinterpret_cast<uintptr_t>(cptr) % 32) +
                 " bytes past a 32-byte boundary: the emulator asks for whole 32-byte blocks from 32-byte-aligned "
                 "addresses (its strict choice; the page is silent)");
    }
    if (c_bytes != UINT64_MAX && c_bytes < uint64_t(Tiling(mm).baseM) * Tiling(mm).baseN * p.sc) {
        Fail(c, "gm_out_of_bounds", call,
             "C's GlobalTensor holds " + std::to_string(c_bytes) + " bytes, less than baseM * baseN elements (the "
             "GetTensorC page)");
    }
    WriteC(c, mm, p, cptr, c_bytes, atomic == 1, mm.l0c, call);
    mm.l0c_valid = false;
}

void Unsupported(const char* call, const char* what) { Fail(Cur(call), "not_emulated", call, what); }

void MatmulEnd(MatmulDesc& mm) {
    Core& c = Cur("Matmul::End");
    if (mm.ended) {
        Fail(c, "matmul_misuse", "Matmul::End", "End() called twice");
    }
    CheckCo1Free(c, mm, "End()", "Matmul::End");
    mm.ended = true;
}

}  // namespace hpmoe_emu
