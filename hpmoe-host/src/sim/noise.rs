//! Timing noise: how a simulated run moves when tiles do not take exactly their modelled time.
//!
//! The engine is deterministic, and a static table planned for exact times may depend on them:
//! ranks that send round by round keep each receiver to one sender only while every round
//! starts when planned. Real hardware varies from run to run (clocks, HBM and bus arbitration,
//! DMA queues), by an amount only hardware can tell. [`TimingNoise`] perturbs each tile's exec
//! part (for a put, its setup; the network phase and the signals are not perturbed) by a factor
//! drawn uniformly from `[1 − p, 1 + p]`, the same for a tile in every run of one seed, so a
//! noisy run is reproducible and its mean work is the noise-free run's.

/// A uniform perturbation of every tile's exec time, reproducible by its seed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TimingNoise {
    /// The largest deviation, in parts per thousand of a tile's exec time (10: ±1%).
    pub permille: u32,
    /// Which draw: the same seed perturbs every tile the same way.
    pub seed: u64,
}

impl TimingNoise {
    /// The exec time of the tile numbered `task` (its node id) whose modelled exec time is
    /// `exec_ns`: `exec_ns × f / 1000`, rounded down and saturating, for `f` drawn from
    /// `1000 − p ..= 1000 + p` by a hash of the seed and the tile (a deviation above 1000‰
    /// is taken as 1000‰).
    pub fn exec_ns(&self, task: u32, exec_ns: u64) -> u64 {
        let p = u64::from(self.permille.min(1000));
        let factor = 1000 - p + draw(self.seed, task) % (2 * p + 1);
        u64::try_from(u128::from(exec_ns) * u128::from(factor) / 1000).unwrap_or(u64::MAX)
    }
}

/// A well-mixed 64-bit value of `(seed, task)` (SplitMix64's finaliser over both).
fn draw(seed: u64, task: u32) -> u64 {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ u64::from(task);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn factors_stay_within_the_deviation_and_average_to_one() {
        let noise = TimingNoise { permille: 10, seed: 7 };
        let times: Vec<u64> = (0..100_000).map(|task| noise.exec_ns(task, 1_000_000)).collect();
        assert!(times.iter().all(|&t| (990_000..=1_010_000).contains(&t)));
        let mean = times.iter().sum::<u64>() as f64 / times.len() as f64;
        assert!((mean - 1_000_000.0).abs() < 100.0, "mean {mean}");
        // Both ends are drawn: the draw covers the whole range, not a part of it.
        assert!(times.contains(&990_000) && times.contains(&1_010_000));
    }

    #[test]
    fn a_seed_draws_the_same_factors_and_another_seed_others() {
        let (a, b) = (TimingNoise { permille: 100, seed: 1 }, TimingNoise { permille: 100, seed: 2 });
        let draws = |n: TimingNoise| (0..1000).map(|t| n.exec_ns(t, 10_000)).collect::<Vec<_>>();
        assert_eq!(draws(a), draws(a));
        let same = draws(a).iter().zip(draws(b)).filter(|(x, y)| **x == *y).count();
        assert!(same < 50, "{same} of 1000 tiles drew the same factor under two seeds");
    }

    #[test]
    fn no_deviation_is_no_noise_and_large_ones_are_capped() {
        let none = TimingNoise { permille: 0, seed: 3 };
        assert!((0..1000).all(|t| none.exec_ns(t, 12_345) == 12_345));
        let wild = TimingNoise { permille: 5000, seed: 3 };
        assert!((0..1000).all(|t| wild.exec_ns(t, 1000) <= 2000));
        // The longest exec times saturate instead of overflowing.
        assert!((0..1000).any(|t| wild.exec_ns(t, u64::MAX) == u64::MAX));
    }
}
