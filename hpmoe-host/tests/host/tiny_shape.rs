// The tiny MoE-FFN layer's sizes (`MoeShape::tiny`), shared by the DSL taskflows of this test
// crate: `include!("tiny_shape.rs");` inside a `#[taskflow]` body stands for these items. Each
// taskflow adds what it varies itself (the natural layer's `C`, the backward's `W`, `WB13`,
// `WB2`, `WG`), and each test pins its taskflow against the builder's, so a size here that
// drifted from `MoeShape::tiny` fails there.
const T: u64 = 16;
const HIDDEN: u64 = 32;
const INTER: u64 = 16;
const EXPERTS: u64 = 2 * RANKS;
const TOP_K: u64 = 2;
const B: u64 = 4;
const N1: u64 = 16;
const N2: u64 = 16;
const SUM: u64 = 8;
