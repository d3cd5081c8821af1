// Taskflows read by this crate's build script (build.rs), which turns each into an AscendC
// kernel under $OUT_DIR/hpmoe/examples/. The file is never compiled by rustc: the build script
// parses it with hpmoe's front-end (the same one the #[taskflow] macro will use).

/// Each rank sends its tokens to every rank, multiplies what it received by W13 and applies
/// SwiGLU: the first half of an MoE-FFN layer, small enough to read whole in the kernel.
#[taskflow(profile = small(2), ranks = 4)]
fn mini_moe() {
    const T: u64 = 16;
    const H: u64 = 64;
    const I: u64 = 32;
    const X: Tensor<Bf16> = input([T, H]);
    const W13: Tensor<Bf16> = input([H, 2 * I]);
    const RECV: Tensor<Bf16> = symmetric([RANKS * T, H]);
    const HB: Tensor<Bf16> = scratch([RANKS * T, 2 * I]);
    const ACT: Tensor<Bf16> = output([RANKS * T, I]);

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
    }
}
