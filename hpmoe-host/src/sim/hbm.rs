//! HBM contention: the cores of a die share its HBM bandwidth.
//!
//! Each die's HBM is a server that moves the HBM bytes of the tiles' exec phases
//! ([`hpmoe_core::cost::FamilyCost::hbm_bytes`]) first come, first served, at the die's bandwidth.
//! A tile starting its exec at `t` reserves the HBM from `max(t, when the HBM is next free)`
//! for its bytes' time, and its exec cannot end before that reservation does. While the
//! cores together ask less than the HBM delivers, the reservations end well inside the
//! tiles' own exec times and cost nothing; when they ask more, tiles stretch. The HBM never
//! moves more than its bandwidth, so a die's HBM bytes over its bandwidth is a lower bound on
//! any run ([`super::lower_bound`]).

use hpmoe_core::cost::ns_at_rate;

/// Every die's HBM. See the [module docs](self).
#[derive(Clone, Debug)]
pub(crate) struct Hbm {
    bytes_per_s: u64,
    /// Per rank: when its HBM is next free, ns.
    free: Vec<u64>,
}

impl Hbm {
    pub fn new(bytes_per_s: u64, ranks: u32) -> Self {
        Hbm { bytes_per_s: bytes_per_s.max(1), free: vec![0; ranks as usize] }
    }

    /// Reserves rank `rank`'s HBM for `bytes` from `now` on; returns when the bytes have
    /// moved (`now` if there are none).
    pub fn reserve(&mut self, rank: u32, now: u64, bytes: u64) -> u64 {
        if bytes == 0 {
            return now;
        }
        let free = &mut self.free[rank as usize];
        *free = (*free).max(now).saturating_add(ns_at_rate(bytes, self.bytes_per_s));
        *free
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reservations_queue_behind_each_other_and_leave_other_dies_alone() {
        let mut hbm = Hbm::new(1_000_000_000, 2); // 1 B/ns
        assert_eq!(hbm.reserve(0, 10, 100), 110);
        assert_eq!(hbm.reserve(0, 20, 100), 210);
        assert_eq!(hbm.reserve(1, 20, 100), 120);
        assert_eq!(hbm.reserve(0, 500, 0), 500);
        assert_eq!(hbm.reserve(0, 500, 1), 501);
    }
}
