/* hpmoe AscendC emulator: the Matmul high-level API, AIC-driven (ASCENDC_CUBE_ONLY) only.
 *
 * Init checks the tiling: base blocks fit L0A (64 KiB), L0B (64 KiB), L0C (128 KiB, fp32/int32
 * accumulators) with their double-buffering factors, and the L1 stages (depthA1 / depthB1 base
 * blocks) fit what the core's TPipe left of L1 (512 KiB). Every SetSingleShape must fit the
 * tiling's singleCore sizes, and the original shapes must hold the single shape. IterateAll
 * reads A and B (MTE2; a transposed A is stored K x M with rows orgM apart, a transposed B N x K
 * with rows orgKb apart), computes in the fixed order of lib/matmul_intf.h and writes C by FIX
 * (pending until the scalar pipe knows it complete). */
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

void MatmulIterateAll(MatmulDesc& mm, uint8_t* cptr, uint64_t c_bytes, uint8_t atomic, const char* call) {
    Core& c = Cur(call);
    if (!mm.inited) {
        Fail(c, "matmul_misuse", call, "the Matmul object was not registered/initialised (REGIST_MATMUL_OBJ)");
    }
    if (mm.ended) {
        Fail(c, "matmul_misuse", call, "IterateAll after End()");
    }
    if (!mm.a_set || !mm.b_set) {
        Fail(c, "matmul_misuse", call,
             mm.org_set ? "IterateAll without SetTensorA/SetTensorB after the last SetOrgShape (the documented order: "
                          "SetOrgShape, then SetTensorA, SetTensorB and SetSingleShape)"
                        : "IterateAll before SetTensorA/SetTensorB");
    }
    if ((mm.trans_a && !mm.may_trans_a) || (mm.trans_b && !mm.may_trans_b)) {
        Fail(c, "matmul_mode", call,
             std::string("SetTensor") + (mm.trans_a && !mm.may_trans_a ? "A" : "B") +
                 " with isTranspose = true on a Matmul whose MatmulType has isTrans = false (the SetTensorA/B page: "
                 "transposing needs isTrans in the type)");
    }
    if (atomic > 1 || (atomic == 1 && mm.ckind != K_F32)) {
        Fail(c, "not_emulated", call,
             atomic > 1 ? "IterateAll with AtomicMax/AtomicMin (enAtomic " + std::to_string(atomic) + ")"
                        : std::string("IterateAll with AtomicAdd into a C that is not float"));
    }
    const AscendC::tiling::TCubeTiling& t = Tiling(mm);
    const int M = mm.tail_m > 0 ? mm.tail_m : (mm.single_m > 0 ? mm.single_m : t.singleCoreM);
    const int N = mm.tail_n > 0 ? mm.tail_n : (mm.single_n > 0 ? mm.single_n : t.singleCoreN);
    const int K = mm.tail_k > 0 ? mm.tail_k : (mm.single_k > 0 ? mm.single_k : t.singleCoreK);
    const int orgM = mm.org_m > 0 ? mm.org_m : t.M;
    const int orgN = mm.org_n > 0 ? mm.org_n : t.N;
    const int orgKa = mm.org_ka > 0 ? mm.org_ka : t.Ka;
    const int orgKb = mm.org_kb > 0 ? mm.org_kb : t.Kb;
    const int ldc = mm.org_kc > 0 ? mm.org_kc : orgN;
    if (M > orgM) {
        Fail(c, "matmul_shape", call, "M=" + std::to_string(M) + " > orgM=" + std::to_string(mm.org_m));
    }
    if (N > orgN || K > orgKa || K > orgKb || N > ldc) {
        Fail(c, "matmul_shape", call,
             "single shape (" + std::to_string(M) + ", " + std::to_string(N) + ", " + std::to_string(K) +
                 ") does not fit the original shape (orgN=" + std::to_string(orgN) + " orgKa=" + std::to_string(orgKa) +
                 " orgKb=" + std::to_string(orgKb) + " orgKc=" + std::to_string(ldc) + ")");
    }
    const uint64_t sa = KindBytes(mm.akind), sb = KindBytes(mm.bkind), sc = KindBytes(mm.ckind);
    const uint32_t rd = Issue(c, EP_MTE2);
    (void)rd;
    /* Element offsets of A[i, p] and B[p, j] as stored: A is M x K with rows orgKa apart, or (transposed)
     * K x M with rows orgM apart; B is K x N with rows orgN apart, or (transposed) N x K with rows orgKb
     * apart. */
    const bool ta = mm.trans_a, tb = mm.trans_b;
    auto a_at = [&](int i, int p) { return ta ? uint64_t(p) * orgM + i : uint64_t(i) * orgKa + p; };
    auto b_at = [&](int p, int j) { return tb ? uint64_t(j) * orgKb + p : uint64_t(p) * orgN + j; };
    /* The stored rows read: A's M (or K) rows of K (or M) elements, B's K (or N) rows of N (or K). */
    const int a_rows = ta ? K : M, a_len = ta ? M : K, b_rows = tb ? N : K, b_len = tb ? K : N;
    for (int r = 0; r < a_rows; ++r) {
        const uint8_t* row = mm.a + (ta ? a_at(0, r) : a_at(r, 0)) * sa;
        GmRange(c, row, uint64_t(a_len) * sa, call, "A row");
        CheckGmReadAfterOwnWrite(c, EP_MTE2, row, uint64_t(a_len) * sa, call);
        CheckNotInFlight(c, row, uint64_t(a_len) * sa, call);
    }
    for (int r = 0; r < b_rows; ++r) {
        const uint8_t* row = mm.b + (tb ? b_at(0, r) : b_at(r, 0)) * sb;
        GmRange(c, row, uint64_t(b_len) * sb, call, "B row");
        CheckGmReadAfterOwnWrite(c, EP_MTE2, row, uint64_t(b_len) * sb, call);
        CheckNotInFlight(c, row, uint64_t(b_len) * sb, call);
    }
    for (int i = 0; i < M; ++i) {
        if (c_bytes != UINT64_MAX && (uint64_t(i) * ldc + N) * sc > c_bytes) {
            Fail(c, "gm_out_of_bounds", call, "C row " + std::to_string(i) + " runs past the GlobalTensor");
        }
        GmRange(c, cptr + uint64_t(i) * ldc * sc, uint64_t(N) * sc, call, "C row");
        if (atomic == 1) {
            /* The FIX pipe reads C to add into it: this core's writes of C on other pipes must be
             * complete to FIX, and nothing may still be landing in it. */
            CheckGmReadAfterOwnWrite(c, EP_FIX, cptr + uint64_t(i) * ldc * sc, uint64_t(N) * sc, call);
            CheckNotInFlight(c, cptr + uint64_t(i) * ldc * sc, uint64_t(N) * sc, call);
        }
    }
    Issue(c, EP_M);
    const uint32_t wr = Issue(c, EP_FIX);
    std::vector<uint8_t> out(uint64_t(N) * sc);
    for (int i = 0; i < M; ++i) {
        for (int j = 0; j < N; ++j) {
            uint8_t* dst = out.data() + uint64_t(j) * sc;
            if (mm.akind == K_I8) {
                int32_t acc = 0;
                for (int p = 0; p < K; ++p) {
                    acc += static_cast<int32_t>(LoadElem(K_I8, mm.a + a_at(i, p) * sa)) *
                           static_cast<int32_t>(LoadElem(K_I8, mm.b + b_at(p, j) * sb));
                }
                if (mm.ckind == K_I32) {
                    std::memcpy(dst, &acc, 4);
                } else {
                    Fail(c, "matmul_mode", call, "int8 matmul with a non-int32 C is not emulated");
                }
                continue;
            }
            float acc = 0.0f;
            for (int p = 0; p < K; ++p) {
                const float x = static_cast<float>(LoadElem(mm.akind, mm.a + a_at(i, p) * sa));
                const float y = static_cast<float>(LoadElem(mm.bkind, mm.b + b_at(p, j) * sb));
                const float prod = x * y;
                acc = acc + prod;
            }
            if (atomic == 1) {
                float old;
                std::memcpy(&old, cptr + (uint64_t(i) * ldc + j) * sc, 4);
                acc = old + acc;
            }
            uint16_t h;
            switch (mm.ckind) {
                case K_F32: std::memcpy(dst, &acc, 4); break;
                case K_F16: h = FloatToHalfBits(acc); std::memcpy(dst, &h, 2); break;
                case K_BF16: h = FloatToBf16Bits(acc); std::memcpy(dst, &h, 2); break;
                default: Fail(c, "matmul_mode", call, "C type not emulated");
            }
        }
        uint8_t* row = cptr + uint64_t(i) * ldc * sc;
        if (c.atomic_kind >= 0) {
            Fail(c, "matmul_mode", call, "IterateAll under SetAtomicAdd is not emulated");
        }
        std::memcpy(row, out.data(), out.size());
        NoteGmWrite(c, EP_FIX, wr, row, out.size(), call);
    }
}

void Unsupported(const char* call, const char* what) { Fail(Cur(call), "not_emulated", call, what); }

void MatmulEnd(MatmulDesc& mm) {
    Core& c = Cur("Matmul::End");
    if (mm.ended) {
        Fail(c, "matmul_misuse", "Matmul::End", "End() called twice");
    }
    mm.ended = true;
}

}  // namespace hpmoe_emu
