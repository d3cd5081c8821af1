use hpmoe_core::dsl::*;
use hpmoe_macros::taskflow;

// A weight gradient accumulated block by block in a chain, one op per block of gradient rows:
// the `for` is unrolled at compile time (4 ops per tile), its index a constant in each copy.
#[taskflow(profile = small(1), ranks = 2)]
fn wgrad() {
    const P: u64 = 8;
    const X: Tensor<Bf16> = input([4, 32, 32]);
    const G: Tensor<Bf16> = input([4, 32, 16]);
    const GRAD: Tensor<F32> = output([32, 16]);

    #[tile(aiv)]
    fn clear() {
        zero(GRAD);
    }

    #[tile(aic, grid(b in 0..4), after(acc(b - 1)))]
    fn acc(b: Idx) {
        for p in 0..32 / P {
            matmul_tn_accumulate(X.at(b).all().slice(p * P, P), G.at(b), GRAD.slice(p * P, P));
        }
    }
}

fn main() {
    let program = wgrad();
    let tf = program.taskflow().unwrap();
    assert_eq!(tf.families[1].body.len(), 4);
}
