/* hpmoe device runtime: the built-in vector ops (AIV), on the AscendC vector API.
 *
 * Each op streams its regions through the unified buffer (UB) in tiles of at most kTileElems
 * elements: DataCopyPad brings a tile of rows in (any row length, any row stride, no alignment
 * needed in global memory), the vector unit computes in FP32 (like the host reference ops:
 * values widened to float, every sum in a fixed order, rounded once when stored), DataCopyPad
 * writes it back. Rows of a tile sit kRowAlign-element aligned in UB, which is 32-byte aligned for
 * every element type, as the vector and DataCopy instructions need.
 *
 * UB budget (fixed, set up once per AIV by Vec::Init): input queue 2 x 16 KiB, output queue
 * 16 KiB, three float work tiles 3 x 16 KiB, conversion buffers 16 + 8 KiB, two row-scalar
 * buffers 2 x 2 KiB: 124 KiB of the 192 KiB, leaving room for the SHMEM library's UB scratch.
 *
 * The op semantics are those of the host reference ops (hpmoe_core::exec::ops); an op ends with
 * a full pipe barrier, so the next op of the tile (or the signals) sees its writes.
 *
 * Where the scalar unit reads UB the vector unit wrote (per-row scales, weights, maxima), or the
 * other way round, an event pair between just those two pipes orders them (Vec::ScalarAfterVector,
 * Vec::VectorAfterScalar) instead of a full barrier; so does the one op that reads back global
 * memory it stored (Quantize's scales: Vec::LoadAfterStore, DMA out before DMA in). The CPU
 * emulator's strict mode checks each (hpmoe-ascendc/tests/backend/emulator_faults.rs runs it
 * without each of Quantize's).
 *
 * Vector instructions that depend on each other through UB (one reads or overwrites what an
 * earlier one wrote or read) are separated by VBarrier(): the vector pipe does not order them by
 * itself (PipeBarrier: "instructions of the same pipe with a data dependency need this
 * synchronisation"). Vec::Load ends with one and Vec::Store begins with one, so an op body only
 * needs them between its own dependent vector instructions. */
#ifndef HPMOE_VECTOR_OPS_H
#define HPMOE_VECTOR_OPS_H

#include "config.h"
#include "counters.h"
#include "view.h"

namespace hpmoe {

/* Orders the vector instructions after it behind those before it (same-pipe data dependency). */
HPMOE_FN void VBarrier() { AscendC::PipeBarrier<PIPE_V>(); }

/* Elements of one UB tile (16 KiB as float). */
constexpr uint32_t kTileElems = 4096;
constexpr uint32_t kTileBytes = kTileElems * 4;
/* UB row pitch alignment in elements: 32 elements are 32, 64 or 128 bytes. */
constexpr uint32_t kRowAlign = 32;
/* Rows of one DataCopyPad (its blockCount). */
constexpr uint32_t kMaxCopyRows = 4095;
/* Per-row scalars of one tile (scales, maxima). */
constexpr uint32_t kRowScalars = 512;

/* Rows [r0, r0 + rows) x columns [c0, c0 + cols) of a region, `pitch` elements per row in UB. */
struct Tile {
    uint32_t r0;
    uint32_t c0;
    uint32_t rows;
    uint32_t cols;
    uint32_t pitch;
    HPMOE_FN uint32_t Elems() const { return rows * pitch; }
};

/* How a rows x cols region is cut into tiles: whole rows when they fit, column blocks otherwise;
 * at most `max_rows` rows per tile, at most `tile_elems` (<= kTileElems, a multiple of kRowAlign)
 * elements per tile, so an op that needs more work tiles than Vec has can split one in parts. */
class TileGrid {
public:
    HPMOE_FN TileGrid(uint32_t rows, uint32_t cols, uint32_t max_rows, uint32_t tile_elems = kTileElems)
        : rows_(rows), cols_(cols) {
        cb_ = MinU32(cols, tile_elems);
        pitch_ = AlignUp(cb_, kRowAlign);
        rb_ = MinU32(MinU32(rows, tile_elems / pitch_), MinU32(max_rows, kMaxCopyRows));
        rb_ = rb_ == 0 ? 1 : rb_;
        col_tiles_ = (cols + cb_ - 1) / cb_;
        count_ = ((rows + rb_ - 1) / rb_) * col_tiles_;
    }
    HPMOE_FN uint32_t Count() const { return count_; }
    HPMOE_FN Tile At(uint32_t i) const {
        Tile t;
        t.r0 = (i / col_tiles_) * rb_;
        t.c0 = (i % col_tiles_) * cb_;
        t.rows = MinU32(rb_, rows_ - t.r0);
        t.cols = MinU32(cb_, cols_ - t.c0);
        t.pitch = pitch_;
        return t;
    }
    HPMOE_FN uint32_t ColumnTiles() const { return col_tiles_; }

private:
    uint32_t rows_;
    uint32_t cols_;
    uint32_t cb_ = 1;
    uint32_t pitch_ = kRowAlign;
    uint32_t rb_ = 1;
    uint32_t col_tiles_ = 1;
    uint32_t count_ = 0;
};

/* The AIV's UB buffers and the moves between global memory, UB and float work tiles. */
class Vec {
public:
    HPMOE_FN void Init(AscendC::TPipe& pipe) {
        pipe_ = &pipe;
        pipe.InitBuffer(in_, 2, kTileBytes);
        pipe.InitBuffer(out_, 1, kTileBytes);
        pipe.InitBuffer(w0_, kTileBytes);
        pipe.InitBuffer(w1_, kTileBytes);
        pipe.InitBuffer(w2_, kTileBytes);
        pipe.InitBuffer(cvt_f32_, kTileBytes);
        pipe.InitBuffer(cvt_f16_, kTileElems * 2);
        pipe.InitBuffer(s0_, kRowScalars * 4);
        pipe.InitBuffer(s1_, kRowScalars * 4);
    }

    HPMOE_FN AscendC::LocalTensor<float> W0() { return w0_.Get<float>(); }
    HPMOE_FN AscendC::LocalTensor<float> W1() { return w1_.Get<float>(); }
    HPMOE_FN AscendC::LocalTensor<float> W2() { return w2_.Get<float>(); }
    HPMOE_FN AscendC::LocalTensor<float> S0() { return s0_.Get<float>(); }
    HPMOE_FN AscendC::LocalTensor<float> S1() { return s1_.Get<float>(); }

    /* The scalar unit waits for the vector instructions issued so far: it reads (GetValue) what
     * they wrote in UB. Narrower than PipeBarrier<PIPE_ALL>: the DMA pipes run on. */
    HPMOE_FN void ScalarAfterVector() { PipeEvent<AscendC::HardEvent::V_S>(); }
    /* The vector unit waits for the scalar unit: a vector instruction next overwrites UB the scalar
     * unit read, or reads what it wrote (SetValue). */
    HPMOE_FN void VectorAfterScalar() { PipeEvent<AscendC::HardEvent::S_V>(); }
    /* The DMA in (MTE2) waits for the DMA out (MTE3) issued so far: a Load next reads global
     * memory a Store of this op just wrote. */
    HPMOE_FN void LoadAfterStore() { PipeEvent<AscendC::HardEvent::MTE3_MTE2>(); }

    /* dst (float, tile layout) = tile `t` of region `v`. */
    template <typename T>
    HPMOE_FN void Load(const View<T>& v, const Tile& t, const AscendC::LocalTensor<float>& dst) {
        AscendC::LocalTensor<T> x = in_.AllocTensor<T>();
        CopyIn(x, v, t);
        in_.EnQue(x);
        x = in_.DeQue<T>();
        VBarrier(); /* dst may still be read or written by earlier vector instructions */
        ToFloat(dst, x, t.Elems());
        VBarrier(); /* what follows reads dst */
        in_.FreeTensor(x);
    }

    /* Tile `t` of region `v` = src (float, tile layout), converted to T. */
    template <typename T>
    HPMOE_FN void Store(const View<T>& v, const Tile& t, const AscendC::LocalTensor<float>& src) {
        AscendC::LocalTensor<T> y = out_.AllocTensor<T>();
        VBarrier(); /* src was written by earlier vector instructions */
        FromFloat(y, src, t.Elems());
        out_.EnQue(y);
        y = out_.DeQue<T>();
        CopyOut(v, t, y);
        out_.FreeTensor(y);
    }

    /* Tile `t` of dst = tile `t` of src, bit for bit. */
    template <typename T>
    HPMOE_FN void CopyTile(const View<T>& src, const View<T>& dst, const Tile& t) {
        AscendC::LocalTensor<T> x = in_.AllocTensor<T>();
        CopyIn(x, src, t);
        in_.EnQue(x);
        x = in_.DeQue<T>();
        AscendC::LocalTensor<T> y = out_.AllocTensor<T>();
        AscendC::DataCopy(y, x, t.Elems());
        in_.FreeTensor(x);
        out_.EnQue(y);
        y = out_.DeQue<T>();
        CopyOut(dst, t, y);
        out_.FreeTensor(y);
    }

private:
    /* One SetFlag/WaitFlag pair on an event id free right now (the queues hold ids of their own). */
    template <AscendC::HardEvent kEvent>
    HPMOE_FN void PipeEvent() {
        const int32_t id = static_cast<int32_t>(pipe_->FetchEventID(kEvent));
        AscendC::SetFlag<kEvent>(id);
        AscendC::WaitFlag<kEvent>(id);
    }

    /* UB gap after each row, in 32-byte blocks, between the padded row and the next pitch. */
    template <typename T>
    HPMOE_FN static uint32_t UbGapBlocks(const Tile& t) {
        const uint32_t row_bytes = t.cols * static_cast<uint32_t>(sizeof(T));
        return (t.pitch * static_cast<uint32_t>(sizeof(T)) - AlignUp(row_bytes, 32)) / 32;
    }

    template <typename T>
    HPMOE_FN static void CopyIn(const AscendC::LocalTensor<T>& x, const View<T>& v, const Tile& t) {
        AscendC::GlobalTensor<T> g;
        g.SetGlobalBuffer(v.At(t.r0, t.c0));
        const uint32_t row_bytes = t.cols * static_cast<uint32_t>(sizeof(T));
        const uint32_t gm_gap = (v.ld - t.cols) * static_cast<uint32_t>(sizeof(T));
        const AscendC::DataCopyExtParams params(static_cast<uint16_t>(t.rows), row_bytes, gm_gap, UbGapBlocks<T>(t), 0);
        const AscendC::DataCopyPadExtParams<T> pad(false, 0, 0, T());
        AscendC::DataCopyPad(x, g, params, pad);
    }

    template <typename T>
    HPMOE_FN static void CopyOut(const View<T>& v, const Tile& t, const AscendC::LocalTensor<T>& y) {
        AscendC::GlobalTensor<T> g;
        g.SetGlobalBuffer(v.At(t.r0, t.c0));
        const uint32_t row_bytes = t.cols * static_cast<uint32_t>(sizeof(T));
        const uint32_t gm_gap = (v.ld - t.cols) * static_cast<uint32_t>(sizeof(T));
        const AscendC::DataCopyExtParams params(static_cast<uint16_t>(t.rows), row_bytes, UbGapBlocks<T>(t), gm_gap, 0);
        AscendC::DataCopyPad(g, y, params);
    }

    /* Widening to float is exact for every storage type. */
    template <typename T>
    HPMOE_FN void ToFloat(const AscendC::LocalTensor<float>& dst, const AscendC::LocalTensor<T>& src, uint32_t n) {
        if constexpr (IsSame<T, float>::value) {
            AscendC::DataCopy(dst, src, n);
        } else if constexpr (IsSame<T, int8_t>::value) {
            AscendC::LocalTensor<half> h = cvt_f16_.Get<half>();
            AscendC::Cast(h, src, AscendC::RoundMode::CAST_NONE, n);
            VBarrier();
            AscendC::Cast(dst, h, AscendC::RoundMode::CAST_NONE, n);
        } else {
            static_assert(IsSame<T, bfloat16_t>::value || IsSame<T, half>::value || IsSame<T, int32_t>::value,
                          "hpmoe vector ops store bf16, f16, f32, i8 or i32");
            AscendC::Cast(dst, src, AscendC::RoundMode::CAST_NONE, n);
        }
    }

    /* Narrowing rounds to nearest, ties to even; integers are rounded first, then converted. */
    template <typename T>
    HPMOE_FN void FromFloat(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<float>& src, uint32_t n) {
        if constexpr (IsSame<T, float>::value) {
            AscendC::DataCopy(dst, src, n);
        } else if constexpr (IsSame<T, int8_t>::value) {
            AscendC::LocalTensor<float> f = cvt_f32_.Get<float>();
            AscendC::LocalTensor<half> h = cvt_f16_.Get<half>();
            AscendC::Cast(f, src, AscendC::RoundMode::CAST_RINT, n);
            VBarrier();
            AscendC::Cast(h, f, AscendC::RoundMode::CAST_NONE, n);
            VBarrier();
            AscendC::Cast(dst, h, AscendC::RoundMode::CAST_TRUNC, n);
        } else if constexpr (IsSame<T, half>::value) {
            AscendC::Cast(dst, src, AscendC::RoundMode::CAST_NONE, n);
        } else {
            static_assert(IsSame<T, bfloat16_t>::value || IsSame<T, int32_t>::value,
                          "hpmoe vector ops store bf16, f16, f32, i8 or i32");
            AscendC::Cast(dst, src, AscendC::RoundMode::CAST_RINT, n);
        }
    }

    AscendC::TPipe* pipe_ = nullptr;
    AscendC::TQue<AscendC::TPosition::VECIN, 2> in_;
    AscendC::TQue<AscendC::TPosition::VECOUT, 1> out_;
    AscendC::TBuf<AscendC::TPosition::VECCALC> w0_;
    AscendC::TBuf<AscendC::TPosition::VECCALC> w1_;
    AscendC::TBuf<AscendC::TPosition::VECCALC> w2_;
    AscendC::TBuf<AscendC::TPosition::VECCALC> cvt_f32_;
    AscendC::TBuf<AscendC::TPosition::VECCALC> cvt_f16_;
    AscendC::TBuf<AscendC::TPosition::VECCALC> s0_;
    AscendC::TBuf<AscendC::TPosition::VECCALC> s1_;
};

/* Makes the op's global-memory writes visible to what follows on this core. */
HPMOE_FN void OpDone() { AscendC::PipeBarrier<PIPE_ALL>(); }

/* Loads `count` consecutive elements [first, first + count) of a contiguous region as float. */
template <typename T>
HPMOE_FN void LoadScalars(Vec& vec, const View<T>& v, uint32_t first, uint32_t count,
                          const AscendC::LocalTensor<float>& dst) {
    Tile t;
    t.r0 = 0;
    t.c0 = first;
    t.rows = 1;
    t.cols = count;
    t.pitch = AlignUp(count, kRowAlign);
    vec.Load(v.Flat(), t, dst);
}

/* dst = src, bit for bit (same element type, same rows x cols). */
template <typename T>
HPMOE_FN void Copy(Vec& vec, const View<T>& src, const View<T>& dst) {
    const TileGrid grid(dst.rows, dst.cols, kMaxCopyRows);
    for (uint32_t i = 0; i < grid.Count(); ++i) {
        vec.CopyTile(src, dst, grid.At(i));
    }
    OpDone();
}

/* dst = 0. */
template <typename T>
HPMOE_FN void Zero(Vec& vec, const View<T>& dst) {
    const TileGrid grid(dst.rows, dst.cols, kMaxCopyRows);
    AscendC::LocalTensor<float> w0 = vec.W0();
    AscendC::Duplicate(w0, 0.0f, static_cast<int32_t>(kTileElems));
    for (uint32_t i = 0; i < grid.Count(); ++i) {
        vec.Store(dst, grid.At(i), w0);
    }
    OpDone();
}

/* dst = src converted to dst's element type (same rows x cols). */
template <typename S, typename D>
HPMOE_FN void Cast(Vec& vec, const View<S>& src, const View<D>& dst) {
    const TileGrid grid(dst.rows, dst.cols, kMaxCopyRows);
    AscendC::LocalTensor<float> w0 = vec.W0();
    for (uint32_t i = 0; i < grid.Count(); ++i) {
        const Tile t = grid.At(i);
        vec.Load(src, t, w0);
        vec.Store(dst, t, w0);
    }
    OpDone();
}

/* dst += src, elementwise in FP32 (same rows x cols). */
template <typename S, typename D>
HPMOE_FN void Accumulate(Vec& vec, const View<S>& src, const View<D>& dst) {
    const TileGrid grid(dst.rows, dst.cols, kMaxCopyRows);
    AscendC::LocalTensor<float> w0 = vec.W0();
    AscendC::LocalTensor<float> w1 = vec.W1();
    for (uint32_t i = 0; i < grid.Count(); ++i) {
        const Tile t = grid.At(i);
        vec.Load(dst, t, w0);
        vec.Load(src, t, w1);
        AscendC::Add(w0, w0, w1, static_cast<int32_t>(t.Elems()));
        vec.Store(dst, t, w0);
    }
    OpDone();
}

/* dst[i, :] = src[i, :] * scale[i] (scale: one element per row, contiguous). Also dequantize. */
template <typename S, typename C, typename D>
HPMOE_FN void ScaleRows(Vec& vec, const View<S>& src, const View<C>& scale, const View<D>& dst) {
    const TileGrid grid(dst.rows, dst.cols, kRowScalars);
    AscendC::LocalTensor<float> w0 = vec.W0();
    AscendC::LocalTensor<float> s0 = vec.S0();
    for (uint32_t i = 0; i < grid.Count(); ++i) {
        const Tile t = grid.At(i);
        vec.Load(src, t, w0);
        LoadScalars(vec, scale, t.r0, t.rows, s0);
        vec.ScalarAfterVector(); /* the scales, read one by one below */
        for (uint32_t r = 0; r < t.rows; ++r) {
            const float s = s0.GetValue(r);
            AscendC::Muls(w0[r * t.pitch], w0[r * t.pitch], s, static_cast<int32_t>(t.cols));
        }
        vec.Store(dst, t, w0);
    }
    OpDone();
}

/* Top-k weighted accumulation: dst has M rows, src k*M rows (k = src.rows / dst.rows), weight k*M
 * elements (contiguous). dst[i, :] += sum over j = 0, 1, .. k-1 of src[i*k + j, :] * weight[i*k + j],
 * in FP32 starting from dst's value, in that order, rounded once. */
template <typename S, typename W, typename D>
HPMOE_FN void WeightedAccumulate(Vec& vec, const View<S>& src, const View<W>& weight, const View<D>& dst) {
    const uint32_t k = src.rows / dst.rows;
    const TileGrid grid(dst.rows, dst.cols, kTileElems / k);
    AscendC::LocalTensor<float> acc = vec.W0();
    AscendC::LocalTensor<float> wts = vec.W1();
    AscendC::LocalTensor<float> x = vec.W2();
    for (uint32_t i = 0; i < grid.Count(); ++i) {
        const Tile t = grid.At(i);
        vec.Load(dst, t, acc);
        LoadScalars(vec, weight, t.r0 * k, t.rows * k, wts);
        vec.ScalarAfterVector(); /* the weights, read one by one below */
        for (uint32_t j = 0; j < k; ++j) {
            Tile tj = t;
            tj.r0 = 0;
            /* Load ends with a vector barrier, and the weights were synchronised above: the vector
             * instructions below need nothing more. */
            vec.Load(src.RowStride(t.r0 * k + j, k, t.rows), tj, x);
            for (uint32_t r = 0; r < t.rows; ++r) {
                const float w = wts.GetValue(r * k + j);
                AscendC::Muls(x[r * t.pitch], x[r * t.pitch], w, static_cast<int32_t>(t.cols));
                VBarrier();
                AscendC::Add(acc[r * t.pitch], acc[r * t.pitch], x[r * t.pitch], static_cast<int32_t>(t.cols));
            }
        }
        vec.Store(dst, t, acc);
    }
    OpDone();
}

/* Top-k weighted sum of gathered rows: index and weight are M x k (k = index.cols; weight
 * contiguous), dst M rows of table's columns. dst[i, :] += sum over j = 0, 1, .. k-1 of
 * table[index[i, j], :] * weight[i, j], skipping index[i, j] < 0 (a dropped choice), in FP32
 * starting from dst's value, in that order, rounded once to dst's type when stored.
 *
 * Per output row and j: the index is a scalar read from global memory (fresh: it may have been
 * written during the launch), the picked table row comes into UB with DataCopyPad (Vec::Load,
 * widened to float), is scaled by its weight and added. An index past the table's rows is
 * skipped like a negative one (the host reference rejects it; the device cannot report it). */
template <typename S, typename W, typename D>
HPMOE_FN void GatherWeightedAccumulate(Vec& vec, const View<S>& table, const View<int32_t>& index,
                                       const View<W>& weight, const View<D>& dst) {
    const uint32_t k = index.cols;
    const TileGrid grid(dst.rows, dst.cols, kTileElems / k);
    AscendC::LocalTensor<float> acc = vec.W0();
    AscendC::LocalTensor<float> wts = vec.W1();
    AscendC::LocalTensor<float> x = vec.W2();
    for (uint32_t i = 0; i < grid.Count(); ++i) {
        const Tile t = grid.At(i);
        vec.Load(dst, t, acc);
        LoadScalars(vec, weight, t.r0 * k, t.rows * k, wts);
        vec.ScalarAfterVector(); /* the weights, read one by one below */
        for (uint32_t r = 0; r < t.rows; ++r) {
            for (uint32_t j = 0; j < k; ++j) {
                const int32_t row = LoadFresh(index.At(t.r0 + r, j));
                if (row < 0 || static_cast<uint32_t>(row) >= table.rows) {
                    continue;
                }
                Tile picked = t;
                picked.r0 = static_cast<uint32_t>(row);
                picked.rows = 1;
                /* As in WeightedAccumulate: nothing more after Load. */
                vec.Load(table, picked, x);
                const float w = wts.GetValue(r * k + j);
                AscendC::Muls(x, x, w, static_cast<int32_t>(t.cols));
                VBarrier();
                AscendC::Add(acc[r * t.pitch], acc[r * t.pitch], x, static_cast<int32_t>(t.cols));
            }
        }
        vec.Store(dst, t, acc);
    }
    OpDone();
}

/* out[i, q] = silu(g) * u with g = gate_up[i, q], u = gate_up[i, n + q], n = out.cols, and
 * silu(g) = g / (1 + e^(-g)), the host reference's formula. */
template <typename G, typename O>
HPMOE_FN void SwiGlu(Vec& vec, const View<G>& gate_up, const View<O>& out) {
    const View<G> gate = gate_up.Columns(0, out.cols);
    const View<G> up = gate_up.Columns(out.cols, out.cols);
    const TileGrid grid(out.rows, out.cols, kMaxCopyRows);
    AscendC::LocalTensor<float> g = vec.W0();
    AscendC::LocalTensor<float> u = vec.W1();
    AscendC::LocalTensor<float> s = vec.W2();
    for (uint32_t i = 0; i < grid.Count(); ++i) {
        const Tile t = grid.At(i);
        const int32_t n = static_cast<int32_t>(t.Elems());
        vec.Load(gate, t, g);
        vec.Load(up, t, u);
        AscendC::Muls(s, g, -1.0f, n);
        VBarrier();
        AscendC::Exp(s, s, n);
        VBarrier();
        AscendC::Adds(s, s, 1.0f, n);
        VBarrier();
        AscendC::Div(s, g, s, n);
        VBarrier();
        AscendC::Mul(g, s, u, n);
        vec.Store(out, t, g);
    }
    OpDone();
}

/* Per-row symmetric INT8 quantisation: scale[i] = max_j |src[i, j]| / 127, stored in scale's type
 * and read back; dst[i, j] = src[i, j] / scale[i] rounded half to even, clamped to -127..127; a row
 * of zeros gets scale 0 and zeros. Two passes over the row's column blocks: maxima, then values. */
template <typename S, typename C>
HPMOE_FN void Quantize(Vec& vec, const View<S>& src, const View<int8_t>& dst, const View<C>& scale) {
    const TileGrid grid(src.rows, src.cols, kRowScalars);
    const uint32_t col_tiles = grid.ColumnTiles();
    AscendC::LocalTensor<float> x = vec.W0();
    AscendC::LocalTensor<float> work = vec.W1();
    AscendC::LocalTensor<float> tmp = vec.W2();
    AscendC::LocalTensor<float> amax = vec.S0();
    AscendC::LocalTensor<float> red = vec.S1();
    for (uint32_t i = 0; i < grid.Count(); i += col_tiles) {
        const Tile first = grid.At(i);
        AscendC::Duplicate(amax, 0.0f, static_cast<int32_t>(kRowScalars));
        for (uint32_t c = 0; c < col_tiles; ++c) {
            const Tile t = grid.At(i + c);
            vec.Load(src, t, x);
            AscendC::Abs(x, x, static_cast<int32_t>(t.Elems()));
            VBarrier();
            for (uint32_t r = 0; r < t.rows; ++r) {
                AscendC::ReduceMax(red, x[r * t.pitch], work, static_cast<int32_t>(t.cols));
                vec.ScalarAfterVector();
                const float m = red.GetValue(0);
                if (m > amax.GetValue(r)) {
                    amax.SetValue(r, m);
                }
                /* The next ReduceMax (vector) overwrites `red`, which the scalar unit just read, and
                 * `red` and `work`, which this one wrote. */
                vec.VectorAfterScalar();
                VBarrier();
            }
        }
        /* scale = amax / 127, rounded to scale's type by storing it, then read back. The loop above
         * ended with the vector unit after the scalar unit's SetValue of amax, and a VBarrier. */
        AscendC::Duplicate(tmp, 127.0f, static_cast<int32_t>(kRowScalars));
        VBarrier();
        AscendC::Div(amax, amax, tmp, static_cast<int32_t>(kRowScalars));
        Tile st;
        st.r0 = 0;
        st.c0 = first.r0;
        st.rows = 1;
        st.cols = first.rows;
        st.pitch = AlignUp(first.rows, kRowAlign);
        vec.Store(scale.Flat(), st, amax);
        vec.LoadAfterStore();
        vec.Load(scale.Flat(), st, amax);
        /* The scalar unit reads the scales (GetValue) the Load just converted. */
        vec.ScalarAfterVector();
        for (uint32_t c = 0; c < col_tiles; ++c) {
            const Tile t = grid.At(i + c);
            const int32_t n = static_cast<int32_t>(t.Elems());
            vec.Load(src, t, x);
            for (uint32_t r = 0; r < t.rows; ++r) {
                const float s = amax.GetValue(r);
                if (s > 0.0f) {
                    AscendC::Duplicate(tmp[r * t.pitch], s, static_cast<int32_t>(t.cols));
                    VBarrier();
                    AscendC::Div(x[r * t.pitch], x[r * t.pitch], tmp[r * t.pitch], static_cast<int32_t>(t.cols));
                } else {
                    AscendC::Duplicate(x[r * t.pitch], 0.0f, static_cast<int32_t>(t.cols));
                }
            }
            VBarrier();
            AscendC::Cast(x, x, AscendC::RoundMode::CAST_RINT, static_cast<uint32_t>(n));
            VBarrier();
            AscendC::Mins(x, x, 127.0f, n);
            VBarrier();
            AscendC::Maxs(x, x, -127.0f, n);
            vec.Store(dst, t, x);
        }
    }
    OpDone();
}

}  // namespace hpmoe

#endif /* HPMOE_VECTOR_OPS_H */
