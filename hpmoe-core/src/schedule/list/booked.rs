//! A resource per rank that serves what is booked on it first come, first served: the plan's
//! model of a rank's cross-server tier ([`super::net`]) and of its die's HBM ([`super::hbm`]).

use crate::ids::{IdVec, RankId};

/// Until when each rank's resource is booked, ns.
#[derive(Clone, Debug)]
pub(super) struct Booked {
    until: IdVec<RankId, u64>,
}

impl Booked {
    /// Nothing booked yet, for `ranks` ranks.
    pub(super) fn idle(ranks: u32) -> Self {
        Booked { until: IdVec::filled(ranks as usize, 0) }
    }

    /// Books `ns` of rank `rank`'s resource for work that may start at `now`: it gets it from
    /// `max(now, when it is next free)`. Returns when the booking ends.
    pub(super) fn book(&mut self, rank: RankId, now: u64, ns: u64) -> u64 {
        let until = &mut self.until[rank];
        *until = (*until).max(now).saturating_add(ns);
        *until
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bookings_queue_on_their_rank_and_start_no_sooner_than_asked() {
        let mut b = Booked::idle(2);
        let (r0, r1) = (RankId::new(0), RankId::new(1));
        assert_eq!(b.book(r0, 0, 100), 100);
        // Behind the first booking on rank 0, not at 10 + 100.
        assert_eq!(b.book(r0, 10, 100), 200);
        // Rank 1's resource is its own.
        assert_eq!(b.book(r1, 20, 100), 120);
        // Free again: from when it is asked.
        assert_eq!(b.book(r0, 500, 1), 501);
    }
}
