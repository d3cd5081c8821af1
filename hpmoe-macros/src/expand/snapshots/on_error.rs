const fn broken() -> ::hpmoe_core::dsl::Program {
    /// Number of ranks (`#[taskflow(ranks = 2)]`).
    #[allow(dead_code)]
    const RANKS: u64 = 2u64;
    #[allow(dead_code)]
    const X: Tensor<F32> = input([8]);
    #[allow(
        dead_code,
        unused_variables,
        clippy::modulo_one,
        clippy::identity_op,
        clippy::erasing_op
    )]
    fn t(i: Idx) {
        zero(X.at(i));
    }
    ::core::panic!("taskflow `broken` has errors")
}
::core::compile_error! {
    "`zero` runs on aiv cores, but tile `t` is an aic tile\n\nhelp: move the call into a `#[tile(aiv)]` function"
}
::core::compile_error! {
    "argument `dst` of `zero` in tile `t` writes into input tensor `X`\n\nhelp: inputs are read-only; write into an output or scratch tensor\nnote: `X` declared here (line 1)"
}
