/* hpmoe device runtime: a tile's region of a tensor in global memory, as a strided matrix.
 *
 * The emitter turns every region argument of an op into a View: `rows` rows of `cols`
 * elements, consecutive rows `ld` elements apart, starting `offset` elements into the tensor.
 * Rows, cols and ld are compile-time constants of the tile family; only the offset depends on
 * the tile's grid coordinates and the rank. Generated code names every one of them:
 *
 *   hpmoe::View<bfloat16_t>(args.recv).From(256 * m).Rows(8).Cols(32).Stride(32)
 *
 * is rows 8 x 32 of `recv` starting at element 256 * m, 32 elements from row to row. */
#ifndef HPMOE_VIEW_H
#define HPMOE_VIEW_H

#include "config.h"

namespace hpmoe {

template <typename T, typename U>
struct IsSame {
    static constexpr bool value = false;
};
template <typename T>
struct IsSame<T, T> {
    static constexpr bool value = true;
};

/* x mod m in [0, m), for the `%` of a region expression (m > 0). */
HPMOE_FN int64_t Mod(int64_t x, int64_t m) {
    const int64_t r = x % m;
    return r < 0 ? r + m : r;
}

/* x / d rounded down (d > 0), for the `/` of a region expression: (x - Mod(x, d)) / d. */
HPMOE_FN int64_t Div(int64_t x, int64_t d) { return (x - Mod(x, d)) / d; }

HPMOE_FN uint32_t AlignUp(uint32_t x, uint32_t a) { return (x + a - 1) / a * a; }
HPMOE_FN uint32_t MinU32(uint32_t a, uint32_t b) { return a < b ? a : b; }

template <typename T>
struct View {
    __gm__ T* base;  /* the tensor's first element (on this rank; for a put's destination, the symmetric address) */
    int64_t offset;  /* elements from base to the region's first element */
    uint32_t rows;
    uint32_t cols;
    uint32_t ld;     /* elements between the starts of consecutive rows */

    /* The tensor at `tensor`, shaped by the setters below; from element 0 until From says otherwise. */
    HPMOE_FN explicit View(GM_ADDR tensor)
        : base(reinterpret_cast<__gm__ T*>(tensor)), offset(0), rows(0), cols(0), ld(0) {}
    HPMOE_FN View(GM_ADDR tensor, int64_t offset_, uint32_t rows_, uint32_t cols_, uint32_t ld_)
        : base(reinterpret_cast<__gm__ T*>(tensor)), offset(offset_), rows(rows_), cols(cols_), ld(ld_) {}
    HPMOE_FN View(__gm__ T* base_, int64_t offset_, uint32_t rows_, uint32_t cols_, uint32_t ld_)
        : base(base_), offset(offset_), rows(rows_), cols(cols_), ld(ld_) {}

    /* This view starting `first` elements into the tensor. */
    HPMOE_FN View From(int64_t first) const {
        View v = *this;
        v.offset = first;
        return v;
    }
    /* This view with `count` rows. */
    HPMOE_FN View Rows(uint32_t count) const {
        View v = *this;
        v.rows = count;
        return v;
    }
    /* This view with `count` elements per row. */
    HPMOE_FN View Cols(uint32_t count) const {
        View v = *this;
        v.cols = count;
        return v;
    }
    /* This view with its rows `elems` elements apart (start to start). */
    HPMOE_FN View Stride(uint32_t elems) const {
        View v = *this;
        v.ld = elems;
        return v;
    }

    /* Address of element (row, col) of the region. */
    HPMOE_FN __gm__ T* At(uint32_t row, uint32_t col) const {
        return base + offset + static_cast<int64_t>(row) * ld + col;
    }
    /* Whether the region is one contiguous run of rows * cols elements. */
    HPMOE_FN bool Contiguous() const { return cols == ld || rows <= 1; }
    /* A contiguous region seen as one row. */
    HPMOE_FN View Flat() const { return View(base, offset, 1, rows * cols, rows * cols); }
    /* Columns [first, first + count) of every row. */
    HPMOE_FN View Columns(uint32_t first, uint32_t count) const { return View(base, offset + first, rows, count, ld); }
    /* Every `step`-th row starting at row `first`, `count` rows. */
    HPMOE_FN View RowStride(uint32_t first, uint32_t step, uint32_t count) const {
        return View(base, offset + static_cast<int64_t>(first) * ld, count, cols, ld * step);
    }
};

}  // namespace hpmoe

#endif /* HPMOE_VIEW_H */
