#[taskflow(profile = small(1), ranks = 1)]
fn broken() {
    const X: Tensor<F32> = input([8, 4]);
    const Y: Tensor<F32> = output([8, 4]);
    #[tile(aic, grid(i in 0..8))]
    fn a(i: Idx) {
        copy(X.at(i), Y.at(i));
    }
}

#[taskflow(profile = small(1), ranks = 1)]
fn unstrided() {
    const X: Tensor<F32> = input([4, 8, 16]);
    const Y: Tensor<F32> = output([4, 8, 16]);
    #[tile(aiv, grid(b in 0..2))]
    fn c(b: Idx) {
        copy(X.slice(b * 2, 2).slice(0, 4), Y.slice(b * 2, 2).slice(0, 4));
    }
}
