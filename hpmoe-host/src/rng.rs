//! The one random-number generator of hpmoe-host: the executor's random inputs, the MoE layers'
//! routings and data, the test support and the tests all draw from [`SplitMix`], so a seed means
//! the same data everywhere. It lives apart from [`crate::exec`] and [`crate::moe`] so that neither
//! imports the other for it.

/// SplitMix64: a tiny deterministic generator for test and benchmark data.
#[derive(Clone, Debug)]
pub struct SplitMix(u64);

impl SplitMix {
    /// A generator whose sequence is fixed by `seed`.
    pub fn new(seed: u64) -> Self {
        SplitMix(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[-1, 1)`, a multiple of 2⁻²³.
    pub fn uniform(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    }
}
