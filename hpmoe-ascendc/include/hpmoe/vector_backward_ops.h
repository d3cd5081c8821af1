/* hpmoe device runtime: the backward's built-in vector ops (AIV) — the SwiGLU gradient, the
 * combine's and the dispatch's backward (ScaleRowsRepeat, SumTopk), the routing weights' gradient
 * (RowDotTopk) and their gathering forms for natural routing — on the same UB tiles, moves and
 * conventions as vector_ops.h (read its opening comment first): FP32 in a fixed order, rounded
 * once when stored, every op ending with OpDone(). */
#ifndef HPMOE_VECTOR_BACKWARD_OPS_H
#define HPMOE_VECTOR_BACKWARD_OPS_H

#include "vector_ops.h"

namespace hpmoe {

/* Half a work tile: ops that need more than three float buffers use tiles of this many elements
 * and two per work tile (W0(), W0()[kHalfTile], ...; 8 KiB apart, 32-byte aligned). */
constexpr uint32_t kHalfTile = kTileElems / 2;

/* The SwiGLU gradient, laid out as SwiGlu's operands: gate_up [R, 2w] = [g | u], d_act [R, w],
 * d_gate_up [R, 2w] = [dg | du]. In FP32, the host reference's formula and order:
 * s = 1 / (1 + e^(-g)), du = (d * g) * s, dg = ((d * u) * s) * (1 + g * (1 - s)), each rounded
 * once into d_gate_up's type (1 - s is computed as (-s) + 1, the same IEEE result). Six float
 * buffers: half tiles. */
template <typename G, typename D, typename O>
HPMOE_FN void SwigluBackward(Vec& vec, const View<G>& gate_up, const View<D>& d_act, const View<O>& d_gate_up) {
    const uint32_t w = d_act.cols;
    const View<G> gate = gate_up.Columns(0, w);
    const View<G> up = gate_up.Columns(w, w);
    const View<O> dg_out = d_gate_up.Columns(0, w);
    const View<O> du_out = d_gate_up.Columns(w, w);
    const TileGrid grid(d_act.rows, w, kMaxCopyRows, kHalfTile);
    AscendC::LocalTensor<float> g = vec.W0();
    AscendC::LocalTensor<float> u = vec.W0()[kHalfTile];
    AscendC::LocalTensor<float> d = vec.W1();
    AscendC::LocalTensor<float> s = vec.W1()[kHalfTile];
    AscendC::LocalTensor<float> t = vec.W2();
    AscendC::LocalTensor<float> e = vec.W2()[kHalfTile];
    for (uint32_t i = 0; i < grid.Count(); ++i) {
        const Tile tile = grid.At(i);
        const int32_t n = static_cast<int32_t>(tile.Elems());
        vec.Load(gate, tile, g);
        vec.Load(up, tile, u);
        vec.Load(d_act, tile, d);
        /* s = 1 / (1 + e^(-g)) */
        AscendC::Muls(e, g, -1.0f, n);
        VBarrier();
        AscendC::Exp(e, e, n);
        VBarrier();
        AscendC::Adds(e, e, 1.0f, n);
        AscendC::Duplicate(t, 1.0f, n);
        VBarrier();
        AscendC::Div(s, t, e, n);
        VBarrier();
        /* du = (d * g) * s */
        AscendC::Mul(t, d, g, n);
        VBarrier();
        AscendC::Mul(t, t, s, n);
        vec.Store(du_out, tile, t);
        /* e = 1 + g * (1 - s) */
        AscendC::Muls(e, s, -1.0f, n);
        VBarrier();
        AscendC::Adds(e, e, 1.0f, n);
        VBarrier();
        AscendC::Mul(e, g, e, n);
        VBarrier();
        AscendC::Adds(e, e, 1.0f, n);
        /* dg = ((d * u) * s) * e; t was read by the Store above */
        AscendC::Mul(t, d, u, n);
        VBarrier();
        AscendC::Mul(t, t, s, n);
        VBarrier();
        AscendC::Mul(t, t, e, n);
        vec.Store(dg_out, tile, t);
    }
    OpDone();
}

/* dst[t*k + c, :] = weights[t*k + c] * src[t, :]: src T rows, dst T*k rows (k = dst.rows / src.rows,
 * at most kRowScalars), weights T*k contiguous elements; one FP32 product per element, rounded
 * once. Each tile of src is loaded once and written k times, scaled. */
template <typename S, typename W, typename D>
HPMOE_FN void ScaleRowsRepeat(Vec& vec, const View<S>& src, const View<W>& weights, const View<D>& dst) {
    const uint32_t k = dst.rows / src.rows;
    const TileGrid grid(src.rows, src.cols, kRowScalars / k);
    AscendC::LocalTensor<float> x = vec.W0();
    AscendC::LocalTensor<float> y = vec.W1();
    AscendC::LocalTensor<float> wts = vec.S0();
    for (uint32_t i = 0; i < grid.Count(); ++i) {
        const Tile t = grid.At(i);
        vec.Load(src, t, x);
        LoadScalars(vec, weights, t.r0 * k, t.rows * k, wts);
        vec.ScalarAfterVector(); /* the weights, read one by one below */
        for (uint32_t c = 0; c < k; ++c) {
            VBarrier(); /* y was read by the previous Store */
            for (uint32_t r = 0; r < t.rows; ++r) {
                const float w = wts.GetValue(r * k + c);
                AscendC::Muls(y[r * t.pitch], x[r * t.pitch], w, static_cast<int32_t>(t.cols));
            }
            Tile tc = t;
            tc.r0 = 0;
            vec.Store(dst.RowStride(t.r0 * k + c, k, t.rows), tc, y);
        }
        /* The next tile's weights overwrite what the scalar unit read. */
        vec.VectorAfterScalar();
    }
    OpDone();
}

/* Elements of zeros (and the running sum, last) before the products RowDotTopk reduces: one
 * 32-byte block, so the products start aligned. */
constexpr uint32_t kDotPrefix = 8;
/* Where RowDotTopk's ReduceSum work area starts in its product buffer (past kDotPrefix + kHalfTile
 * products; the work needs one 32-byte block per 256 bytes reduced: 1056 bytes at most). */
constexpr uint32_t kDotWork = kTileElems - 512;

/* d_weights[t*k + c] = sum over h = 0, 1, .. H-1 of a[t, h] * b[t*k + c, h], in FP32 from +0.0 in
 * that order, rounded once: a T rows, b T*k rows (k = b.rows / a.rows, at most kRowScalars), the
 * same columns; d_weights T*k contiguous elements. The running sum of each (t, c) lives in S0
 * across the column tiles; per row, the products go after kDotPrefix - 1 zeros and the running
 * sum, and ReduceSum adds them all in ascending order (assumption 18 of the emulator: the device's
 * order is not documented), so 0 + .. + 0 + sum + p0 + p1 + .. is the sequential sum (a sum from
 * +0.0 is never -0.0, so the leading zeros change nothing). */
template <typename A, typename B, typename D>
HPMOE_FN void RowDotTopk(Vec& vec, const View<A>& a, const View<B>& b, const View<D>& d_weights) {
    const uint32_t k = b.rows / a.rows;
    const TileGrid grid(a.rows, a.cols, kRowScalars / k, kHalfTile);
    const uint32_t col_tiles = grid.ColumnTiles();
    AscendC::LocalTensor<float> x = vec.W0();
    AscendC::LocalTensor<float> y = vec.W1();
    AscendC::LocalTensor<float> prod = vec.W2();
    AscendC::LocalTensor<float> work = vec.W2()[kDotWork];
    AscendC::LocalTensor<float> acc = vec.S0();
    AscendC::LocalTensor<float> red = vec.S1();
    for (uint32_t i = 0; i < grid.Count(); i += col_tiles) {
        const Tile first = grid.At(i);
        VBarrier(); /* acc and prod were read by earlier vector instructions */
        AscendC::Duplicate(acc, 0.0f, static_cast<int32_t>(kRowScalars));
        AscendC::Duplicate(prod, 0.0f, static_cast<int32_t>(kDotPrefix));
        vec.ScalarAfterVector(); /* the scalar unit reads acc and writes prod below */
        for (uint32_t cc = 0; cc < col_tiles; ++cc) {
            const Tile t = grid.At(i + cc);
            vec.Load(a, t, x);
            for (uint32_t c = 0; c < k; ++c) {
                Tile tc = t;
                tc.r0 = 0;
                vec.Load(b.RowStride(t.r0 * k + c, k, t.rows), tc, y);
                for (uint32_t r = 0; r < t.rows; ++r) {
                    prod.SetValue(kDotPrefix - 1, acc.GetValue(r * k + c));
                    vec.VectorAfterScalar(); /* the running sum, written above */
                    VBarrier();              /* prod was read by the previous ReduceSum */
                    AscendC::Mul(prod[kDotPrefix], x[r * t.pitch], y[r * t.pitch], static_cast<int32_t>(t.cols));
                    VBarrier();
                    AscendC::ReduceSum(red, prod, work, static_cast<int32_t>(kDotPrefix + t.cols));
                    vec.ScalarAfterVector(); /* the sum, read below; prod[kDotPrefix - 1] is written next */
                    acc.SetValue(r * k + c, red.GetValue(0));
                }
            }
        }
        vec.VectorAfterScalar(); /* the sums, stored next; red is overwritten by the next ReduceSum */
        Tile st;
        st.r0 = 0;
        st.c0 = first.r0 * k;
        st.rows = 1;
        st.cols = first.rows * k;
        st.pitch = AlignUp(st.cols, kRowAlign);
        vec.Store(d_weights.Flat(), st, acc);
    }
    OpDone();
}

/* dst[t, :] = sum over c = 0, 1, .. k-1 of src[t*k + c, :], in FP32 from +0.0 in that order, rounded
 * once: src T*k rows (k = src.rows / dst.rows), dst T rows, the same columns. */
template <typename S, typename D>
HPMOE_FN void SumTopk(Vec& vec, const View<S>& src, const View<D>& dst) {
    const uint32_t k = src.rows / dst.rows;
    const TileGrid grid(dst.rows, dst.cols, kMaxCopyRows);
    AscendC::LocalTensor<float> acc = vec.W0();
    AscendC::LocalTensor<float> x = vec.W1();
    for (uint32_t i = 0; i < grid.Count(); ++i) {
        const Tile t = grid.At(i);
        const int32_t n = static_cast<int32_t>(t.Elems());
        VBarrier(); /* acc was read by the previous Store */
        AscendC::Duplicate(acc, 0.0f, n);
        for (uint32_t c = 0; c < k; ++c) {
            Tile tc = t;
            tc.r0 = 0;
            vec.Load(src.RowStride(t.r0 * k + c, k, t.rows), tc, x);
            AscendC::Add(acc, acc, x, n);
        }
        vec.Store(dst, t, acc);
    }
    OpDone();
}

/* The gathering forms of ScaleRowsRepeat, RowDotTopk and SumTopk, for natural routing, where a
 * token's copies sit wherever the routing put them. Each works row by row: the row's index is a
 * scalar read fresh from global memory (it may have been written during the launch), the picked
 * row comes into UB with Vec::Load, column tile by column tile. An index past the table is treated
 * like a negative one (the host reference rejects it; the device cannot report it). */

/* dst[j, :] = weights[i] * table[i / k, :] for the choice i = index[j] (k = weights.cols, weights
 * read row-major as table.rows * k contiguous elements), a row of zeros where i < 0 (a padding row
 * of a send slot); one FP32 product per element, rounded once. */
template <typename S, typename W, typename D>
HPMOE_FN void GatherScaleRowsRepeat(Vec& vec, const View<S>& table, const View<int32_t>& index,
                                    const View<W>& weights, const View<D>& dst) {
    const uint32_t k = weights.cols;
    const View<int32_t> choices = index.Flat();
    const View<W> flat = weights.Flat();
    const TileGrid grid(dst.rows, dst.cols, 1);
    AscendC::LocalTensor<float> x = vec.W0();
    AscendC::LocalTensor<float> w = vec.S0();
    for (uint32_t i = 0; i < grid.Count(); ++i) {
        const Tile t = grid.At(i);
        const int32_t choice = LoadFresh(choices.At(0, t.r0));
        if (choice < 0 || static_cast<uint32_t>(choice) >= table.rows * k) {
            VBarrier(); /* x was read by the previous Store */
            AscendC::Duplicate(x, 0.0f, static_cast<int32_t>(t.Elems()));
        } else {
            Tile picked = t;
            picked.r0 = static_cast<uint32_t>(choice) / k;
            vec.Load(table, picked, x);
            vec.VectorAfterScalar(); /* the scalar unit read the previous weight in w */
            LoadScalars(vec, flat, static_cast<uint32_t>(choice), 1, w);
            vec.ScalarAfterVector(); /* the weight, read below */
            AscendC::Muls(x, x, w.GetValue(0), static_cast<int32_t>(t.cols));
        }
        vec.Store(dst, t, x);
    }
    OpDone();
}

/* d_weights[t, c] = sum over h = 0, 1, .. H-1 of a[t, h] * table[index[t, c], h], in FP32 from +0.0
 * in that order, rounded once; +0.0 where index[t, c] < 0 (a dropped choice): index T x k (k at most
 * kRowScalars), a T rows of table's columns, d_weights T*k contiguous elements. The running sum of
 * each choice lives in S0 across a's column tiles and is added first, as in RowDotTopk. */
template <typename T, typename A, typename D>
HPMOE_FN void GatherRowDotTopk(Vec& vec, const View<T>& table, const View<int32_t>& index, const View<A>& a,
                               const View<D>& d_weights) {
    const uint32_t k = index.cols;
    const TileGrid grid(a.rows, a.cols, 1, kHalfTile);
    const uint32_t col_tiles = grid.ColumnTiles();
    AscendC::LocalTensor<float> x = vec.W0();
    AscendC::LocalTensor<float> y = vec.W1();
    AscendC::LocalTensor<float> prod = vec.W2();
    AscendC::LocalTensor<float> work = vec.W2()[kDotWork];
    AscendC::LocalTensor<float> acc = vec.S0();
    AscendC::LocalTensor<float> red = vec.S1();
    for (uint32_t r = 0; r < a.rows; ++r) {
        VBarrier(); /* acc and prod were read by earlier vector instructions */
        AscendC::Duplicate(acc, 0.0f, static_cast<int32_t>(kRowScalars));
        AscendC::Duplicate(prod, 0.0f, static_cast<int32_t>(kDotPrefix));
        vec.ScalarAfterVector(); /* the scalar unit reads acc and writes prod below */
        for (uint32_t cc = 0; cc < col_tiles; ++cc) {
            const Tile t = grid.At(r * col_tiles + cc);
            vec.Load(a, t, x);
            for (uint32_t c = 0; c < k; ++c) {
                const int32_t row = LoadFresh(index.At(r, c));
                if (row < 0 || static_cast<uint32_t>(row) >= table.rows) {
                    continue;
                }
                Tile picked = t;
                picked.r0 = static_cast<uint32_t>(row);
                vec.Load(table, picked, y);
                prod.SetValue(kDotPrefix - 1, acc.GetValue(c));
                vec.VectorAfterScalar(); /* the running sum, written above */
                VBarrier();              /* prod was read by the previous ReduceSum */
                AscendC::Mul(prod[kDotPrefix], x, y, static_cast<int32_t>(t.cols));
                VBarrier();
                AscendC::ReduceSum(red, prod, work, static_cast<int32_t>(kDotPrefix + t.cols));
                vec.ScalarAfterVector(); /* the sum, read below; prod[kDotPrefix - 1] is written next */
                acc.SetValue(c, red.GetValue(0));
            }
        }
        vec.VectorAfterScalar(); /* the sums, stored next */
        Tile st;
        st.r0 = 0;
        st.c0 = r * k;
        st.rows = 1;
        st.cols = k;
        st.pitch = AlignUp(k, kRowAlign);
        vec.Store(d_weights.Flat(), st, acc);
    }
    OpDone();
}

/* dst[t, :] = sum over c = 0, 1, .. k-1 of table[index[t, c], :] for index[t, c] >= 0, in FP32 from
 * +0.0 in that order, rounded once: index T x k, dst T rows of table's columns. */
template <typename S, typename D>
HPMOE_FN void GatherSumTopk(Vec& vec, const View<S>& table, const View<int32_t>& index, const View<D>& dst) {
    const uint32_t k = index.cols;
    const TileGrid grid(dst.rows, dst.cols, 1);
    AscendC::LocalTensor<float> acc = vec.W0();
    AscendC::LocalTensor<float> x = vec.W1();
    for (uint32_t i = 0; i < grid.Count(); ++i) {
        const Tile t = grid.At(i);
        const int32_t n = static_cast<int32_t>(t.Elems());
        VBarrier(); /* acc was read by the previous Store */
        AscendC::Duplicate(acc, 0.0f, n);
        for (uint32_t c = 0; c < k; ++c) {
            const int32_t row = LoadFresh(index.At(t.r0, c));
            if (row < 0 || static_cast<uint32_t>(row) >= table.rows) {
                continue;
            }
            Tile picked = t;
            picked.r0 = static_cast<uint32_t>(row);
            vec.Load(table, picked, x);
            AscendC::Add(acc, acc, x, n);
        }
        vec.Store(dst, t, acc);
    }
    OpDone();
}

}  // namespace hpmoe

#endif /* HPMOE_VECTOR_BACKWARD_OPS_H */
