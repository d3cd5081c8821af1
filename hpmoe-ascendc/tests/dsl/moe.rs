// A taskflow file as a user's crate would hold it: read by the build-script API's front-end.

#[taskflow(profile = small(1), ranks = 2)]
fn mini_moe() {
    const T: u64 = 16;
    const H: u64 = 32;
    const I: u64 = 16;
    const X: Tensor<Bf16> = input([T, H]);
    const W13: Tensor<Bf16> = input([H, 2 * I]);
    const RECV: Tensor<Bf16> = symmetric([RANKS * T, H]);
    const HB: Tensor<Bf16> = scratch([RANKS * T, 2 * I]);
    const ACT: Tensor<F32> = output([RANKS * T, I]);

    /// out += 2 * src
    #[op(aiv, work = vector(2), emit = "user_ops::Twice(vec, {src}, {out})", read_write(out))]
    fn twice(src: &TileData, out: &mut TileData) {
        for (o, s) in out.values.iter_mut().zip(&src.values) {
            *o += 2.0 * s;
        }
    }

    #[tile(aiv, grid(d in 0..RANKS))]
    fn dispatch(d: Idx) {
        put(X, RECV.on(d).slice(RANK * T, T));
    }

    #[tile(aic, grid(m in 0..RANKS))]
    fn gmm(m: Idx) {
        matmul(RECV.slice(m * T, T), W13, HB.slice(m * T, T));
    }

    #[tile(aiv, grid(m in 0..RANKS))]
    fn act(m: Idx) {
        swiglu(HB.slice(m * T, T), ACT.slice(m * T, T));
        twice(RECV.slice(m * T, T).slice(0, I), ACT.slice(m * T, T));
    }
}
