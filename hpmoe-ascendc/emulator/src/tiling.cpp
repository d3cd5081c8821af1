/* hpmoe AscendC emulator: matmul_tiling::MultiCoreMatmulTiling (see include/tiling/tiling_api.h). */
#include "tiling/tiling_api.h"

#include <cstring>

namespace matmul_tiling {

namespace {
int32_t Bytes(DataType t) {
    switch (t) {
        case DataType::DT_FLOAT:
        case DataType::DT_INT32: return 4;
        case DataType::DT_INT8:
        case DataType::DT_UINT8: return 1;
        default: return 2;
    }
}
int32_t AlignUp(int32_t x, int32_t a) { return (x + a - 1) / a * a; }
int32_t Min(int32_t a, int32_t b) { return a < b ? a : b; }
}  // namespace

int32_t MultiCoreMatmulTiling::SetDim(int32_t dim) {
    dim_ = dim;
    return dim > 0 ? 0 : -1;
}
int32_t MultiCoreMatmulTiling::SetAType(TPosition, CubeFormat format, DataType type, bool isTrans) {
    a_ = type;
    trans_a_ = isTrans;
    types_ = true;
    return format == CubeFormat::ND ? 0 : -1;
}
int32_t MultiCoreMatmulTiling::SetBType(TPosition, CubeFormat format, DataType type, bool isTrans) {
    b_ = type;
    trans_b_ = isTrans;
    return format == CubeFormat::ND ? 0 : -1;
}
int32_t MultiCoreMatmulTiling::SetCType(TPosition, CubeFormat format, DataType type) {
    c_ = type;
    return format == CubeFormat::ND ? 0 : -1;
}
int32_t MultiCoreMatmulTiling::SetBiasType(TPosition, CubeFormat, DataType) { return 0; }
int32_t MultiCoreMatmulTiling::SetShape(int32_t m, int32_t n, int32_t k) {
    m_ = m;
    n_ = n;
    k_ = k;
    return m > 0 && n > 0 && k > 0 ? 0 : -1;
}
int32_t MultiCoreMatmulTiling::SetOrgShape(int32_t m, int32_t n, int32_t k) { return SetOrgShape(m, n, k, k); }
int32_t MultiCoreMatmulTiling::SetOrgShape(int32_t m, int32_t n, int32_t ka, int32_t kb) {
    org_m_ = m;
    org_n_ = n;
    org_ka_ = ka;
    org_kb_ = kb;
    return m > 0 && n > 0 && ka > 0 && kb > 0 ? 0 : -1;
}
int32_t MultiCoreMatmulTiling::SetSingleShape(int32_t m, int32_t n, int32_t k) {
    single_m_ = m;
    single_n_ = n;
    single_k_ = k;
    return 0;
}
int32_t MultiCoreMatmulTiling::SetBias(bool bias) {
    bias_ = bias;
    return 0;
}
int32_t MultiCoreMatmulTiling::SetBufferSpace(int32_t l1, int32_t l0c, int32_t, int32_t) {
    if (l1 > 0) {
        l1_ = l1;
    }
    if (l0c > 0) {
        l0c_ = l0c;
    }
    return 0;
}

int32_t MultiCoreMatmulTiling::SetFixSplit(int32_t baseM, int32_t baseN, int32_t baseK) {
    if (baseK != -1) {
        return -1;
    }
    fix_m_ = baseM;
    fix_n_ = baseN;
    return 0;
}

int64_t MultiCoreMatmulTiling::GetTiling(AscendC::tiling::TCubeTiling& t) {
    /* A transposed A or B changes how the panels are read, not their sizes: the same tiling. */
    if (m_ <= 0 || n_ <= 0 || k_ <= 0 || Bytes(a_) != Bytes(b_) || bias_) {
        return -1;
    }
    const int32_t M = org_m_ > 0 ? org_m_ : m_, N = org_n_ > 0 ? org_n_ : n_;
    const int32_t Ka = org_ka_ > 0 ? org_ka_ : k_, Kb = org_kb_ > 0 ? org_kb_ : k_;
    const int32_t sm = single_m_ > 0 ? single_m_ : m_, sn = single_n_ > 0 ? single_n_ : n_, sk = single_k_ > 0 ? single_k_ : k_;
    const int32_t e = Bytes(a_);
    const int32_t k0 = 32 / e; /* elements of one 32-byte fractal row */
    int32_t bm = Min(AlignUp(sm, 16), 128), bn = Min(AlignUp(sn, 16), 256), bk = Min(AlignUp(sk, k0), 64);
    /* SetFixSplit's sizes, checked as its page says (C0: elements of C per 32 bytes, 16 for 2-byte C). */
    const int32_t c0 = c_ == DataType::DT_FLOAT || c_ == DataType::DT_INT32 ? 8 : c_ == DataType::DT_INT8 ? 32 : 16;
    if (fix_m_ > 0) {
        if (fix_m_ % 16 != 0 || fix_m_ > AlignUp(sm, 16)) {
            return -1;
        }
        bm = fix_m_;
    }
    if (fix_n_ > 0) {
        if (fix_n_ % 16 != 0 || fix_n_ > AlignUp(sn, c0)) { /* a multiple of 16 always: strict */
            return -1;
        }
        bn = fix_n_;
    }
    if ((fix_m_ > 0 || fix_n_ > 0) && int64_t(bm) * bn * 4 > l0c_) { /* FP32/INT32 accumulators */
        return -1;
    }
    for (int guard = 0; guard < 64; ++guard) {
        const int64_t l0a = int64_t(bm) * bk * e * 2, l0b = int64_t(bk) * bn * e * 2, l0c = int64_t(bm) * bn * 4;
        const int64_t l1 = 2 * (int64_t(bm) * bk * e + int64_t(bk) * bn * e);
        if (l0a <= 64 * 1024 && l0b <= 64 * 1024 && l0c <= l0c_ && l1 <= l1_) {
            break;
        }
        if (fix_m_ > 0 || fix_n_ > 0) {
            if (bk > k0) { /* fixed base blocks: only baseK may shrink */
                bk = AlignUp(bk / 2, k0);
                continue;
            }
            return -1;
        }
        if (bn > 16 && (l0b > 64 * 1024 || l0c > l0c_ || bn >= bm)) {
            bn = AlignUp(bn / 2, 16);
        } else if (bm > 16) {
            bm = AlignUp(bm / 2, 16);
        } else if (bk > k0) {
            bk = AlignUp(bk / 2, k0);
        } else {
            return -1;
        }
    }
    std::memset(&t, 0, sizeof t);
    t.usedCoreNum = 1;
    t.M = M;
    t.N = N;
    t.Ka = Ka;
    t.Kb = Kb;
    t.singleCoreM = sm;
    t.singleCoreN = sn;
    t.singleCoreK = sk;
    t.baseM = bm;
    t.baseN = bn;
    t.baseK = bk;
    t.depthA1 = 2;
    t.depthB1 = 2;
    t.stepM = 1;
    t.stepN = 1;
    t.stepKa = 1;
    t.stepKb = 1;
    t.dbL0A = 2;
    t.dbL0B = 2;
    t.dbL0C = 1;
    t.iterateOrder = 0;
    (void)dim_;
    (void)c_;
    (void)types_;
    (void)trans_a_;
    (void)trans_b_;
    return 0;
}

}  // namespace matmul_tiling
