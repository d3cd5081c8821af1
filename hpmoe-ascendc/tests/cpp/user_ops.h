// A user op's device function, as a user would write it against the hpmoe runtime: out += 2 * src,
// tile by tile through the unified buffer.
#ifndef USER_OPS_H
#define USER_OPS_H

namespace user_ops {

template <typename S, typename D>
__aicore__ inline void Twice(hpmoe::Vec& vec, const hpmoe::View<S>& src, const hpmoe::View<D>& out) {
    const hpmoe::TileGrid grid(out.rows, out.cols, hpmoe::kMaxCopyRows);
    AscendC::LocalTensor<float> acc = vec.W0();
    AscendC::LocalTensor<float> x = vec.W1();
    for (uint32_t i = 0; i < grid.Count(); ++i) {
        const hpmoe::Tile t = grid.At(i);
        vec.Load(out, t, acc);
        vec.Load(src, t, x);
        AscendC::Muls(x, x, 2.0f, static_cast<int32_t>(t.Elems()));
        hpmoe::VBarrier();  // the Add reads what the Muls wrote
        AscendC::Add(acc, acc, x, static_cast<int32_t>(t.Elems()));
        vec.Store(out, t, acc);
    }
    hpmoe::OpDone();
}

}  // namespace user_ops

#endif
