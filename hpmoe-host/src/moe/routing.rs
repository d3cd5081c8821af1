//! Which expert each token's choices go to, and where the routing step puts them: the
//! run-time data of [`Routing::Natural`] (and the fixed layout of [`Routing::Balanced`]
//! described the same way), for host runs, the reference and the simulator.

use super::{MoeShape, Routing};
use crate::rng::SplitMix;
use hpmoe_core::cost::{Activity, ActivityError};
use hpmoe_core::expand::InstanceSpace;
use hpmoe_core::model::Taskflow;

/// Why [`RoutedTokens::place`] refused a routing (the first problem found).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RoutingError {
    /// The routing lists another number of ranks than the shape has.
    Ranks {
        /// Ranks in the routing.
        routing: usize,
        /// Ranks of the shape.
        shape: u32,
    },
    /// A rank routes another number of choices than `tokens_per_rank * top_k`.
    Choices {
        /// The rank.
        rank: usize,
        /// Choices it routes.
        routed: usize,
        /// Choices it should route.
        expected: u64,
    },
    /// A rank routes a choice to an expert the shape does not have.
    Expert {
        /// The rank.
        rank: usize,
        /// The expert named.
        expert: u32,
        /// Experts of the shape.
        experts: u64,
    },
}

impl std::fmt::Display for RoutingError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RoutingError::Ranks { routing, shape } => write!(f, "routing has {routing} ranks, the shape {shape}"),
            RoutingError::Choices { rank, routed, expected } => {
                write!(f, "rank {rank} routes {routed} choices, expected {expected}")
            }
            RoutingError::Expert { rank, expert, experts } => {
                write!(f, "rank {rank} routes to expert {expert} of {experts}")
            }
        }
    }
}

impl std::error::Error for RoutingError {}

/// One routing of every rank's tokens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RoutedTokens {
    /// Per rank, `tokens · top_k` global expert ids, token-major (choice `c` of token `t` at
    /// `t · top_k + c`).
    pub experts: Vec<Vec<u32>>,
    /// Per rank, per choice: the row of `xs` (and of `back`) it occupies, `-1` if dropped.
    pub slot_of: Vec<Vec<i32>>,
    /// Per rank, per global expert: rows used of its slot (`≤` the slot size).
    pub send_counts: Vec<Vec<i32>>,
}

impl RoutedTokens {
    /// Places the choices `experts` (per rank, token-major) as the routing step does:
    /// each choice takes the next free row of its expert's slot on the sending rank, in
    /// token order; a choice finding the slot full is dropped.
    ///
    /// # Errors
    /// If a rank's list has the wrong length or names an expert out of range.
    pub fn place(shape: &MoeShape, experts: Vec<Vec<u32>>) -> Result<RoutedTokens, RoutingError> {
        let choices = shape.tokens_per_rank.saturating_mul(shape.top_k);
        let slot = shape.slot_rows();
        if experts.len() != shape.ranks as usize {
            return Err(RoutingError::Ranks { routing: experts.len(), shape: shape.ranks });
        }
        let mut slot_of = Vec::with_capacity(experts.len());
        let mut send_counts = Vec::with_capacity(experts.len());
        for (rank, ids) in experts.iter().enumerate() {
            if ids.len() as u64 != choices {
                return Err(RoutingError::Choices { rank, routed: ids.len(), expected: choices });
            }
            let mut counts = vec![0i32; shape.experts as usize];
            let mut slots = Vec::with_capacity(ids.len());
            for &g in ids {
                let count = counts.get_mut(g as usize).ok_or(RoutingError::Expert {
                    rank,
                    expert: g,
                    experts: shape.experts,
                })?;
                if (*count as u64) < slot {
                    slots.push((u64::from(g) * slot + *count as u64) as i32);
                    *count += 1;
                } else {
                    slots.push(-1);
                }
            }
            slot_of.push(slots);
            send_counts.push(counts);
        }
        Ok(RoutedTokens { experts, slot_of, send_counts })
    }

    /// Which guarded instances of `shape`'s taskflow (`tf`, numbered as `space`) skip their
    /// body under this routing, for pricing the run ([`hpmoe_core::cost::TaskflowCost::with_activity`]).
    ///
    /// # Errors
    /// If `tf` guards on a count this routing does not describe.
    pub fn activity(&self, shape: &MoeShape, tf: &Taskflow, space: &InstanceSpace) -> Result<Activity, ActivityError> {
        Activity::evaluate(tf, space, |rank, tensor, index| self.count(shape, rank, tensor, index).map(i64::from))
    }

    /// Choices dropped for lack of capacity, all ranks.
    pub fn dropped(&self) -> usize {
        self.slot_of.iter().flatten().filter(|&&s| s < 0).count()
    }

    /// The run-time value of element `index` (flat, row-major) of count tensor `tensor` on
    /// `rank` once the layer's counts have been exchanged: `send_counts` (an input) or
    /// `recv_counts` (`[src, e]`: what rank `src` sends to local expert `e` of `rank`).
    /// `None` for any other tensor or an index out of range.
    pub fn count(&self, shape: &MoeShape, rank: u32, tensor: &str, index: u64) -> Option<i32> {
        let e = shape.local_experts();
        match tensor {
            "send_counts" => self.send_counts.get(rank as usize)?.get(usize::try_from(index).ok()?).copied(),
            "recv_counts" => {
                let (src, local) = (index / e.max(1), index % e.max(1));
                let expert = u64::from(rank) * e + local;
                self.send_counts.get(usize::try_from(src).ok()?)?.get(usize::try_from(expert).ok()?).copied()
            }
            _ => None,
        }
    }
}

/// Seeds of the routings [`MoeShape::expected_activity`] samples: far from small seeds, so
/// a run priced with `route(42)` is not among the routings its schedule was planned on.
const PLAN_SEEDS: u64 = 0x91A4_0000;

impl MoeShape {
    /// Per instance of `tf` (this shape's taskflow, numbered as `space`), the share of
    /// `samples` routings drawn from [`MoeShape::route`]'s distribution in which it runs its
    /// body: what the scheduler plans on (`TaskflowCost::with_expected_activity`) so that
    /// blocks likely to stay empty do not pile up on a few cores. All ones when balanced.
    ///
    /// # Errors
    /// If `tf` guards on a count the routings do not describe.
    pub fn expected_activity(
        &self,
        tf: &Taskflow,
        space: &InstanceSpace,
        samples: u64,
    ) -> Result<Vec<f32>, ActivityError> {
        let runs = (0..samples)
            .map(|s| self.route(PLAN_SEEDS + s).activity(self, tf, space))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Activity::run_probability(&runs, space.len()))
    }

    /// A routing of every rank's tokens, deterministic in `seed`.
    ///
    /// Balanced: the fixed layout of the module docs (the seed is unused). Natural: each
    /// token picks `top_k` distinct experts with probabilities skewed the way a trained
    /// router's are: expert popularity is log-normal (σ = 0.5, drawn once per seed), so some
    /// experts get well over their share of rows and a capacity below the peak drops choices.
    pub fn route(&self, seed: u64) -> RoutedTokens {
        let choices = self.tokens_per_rank.saturating_mul(self.top_k);
        let experts = match self.routing {
            Routing::Balanced => {
                let per_expert = self.rows_per_source().max(1);
                let ids: Vec<u32> = (0..choices).map(|j| (j / per_expert) as u32).collect();
                vec![ids; self.ranks as usize]
            }
            Routing::Natural { .. } => self.natural_choices(seed),
        };
        RoutedTokens::place(self, experts).expect("generated routings fit their shape")
    }

    fn natural_choices(&self, seed: u64) -> Vec<Vec<u32>> {
        let n = self.experts as usize;
        let k = (self.top_k as usize).min(n);
        let mut rng = SplitMix::new(seed ^ 0x5EED_0FE3_E7E7);
        // Log-normal popularity: exp(0.5 · z), z ≈ N(0, 1) as a sum of 12 uniforms.
        let popularity: Vec<f64> = (0..n)
            .map(|_| {
                let z: f64 = (0..12).map(|_| f64::from(rng.uniform()) * 0.5 + 0.5).sum::<f64>() - 6.0;
                (0.5 * z).exp()
            })
            .collect();
        let total: f64 = popularity.iter().sum();
        let mut cumulative = Vec::with_capacity(n);
        let mut acc = 0.0;
        for p in &popularity {
            acc += p / total;
            cumulative.push(acc);
        }
        (0..self.ranks)
            .map(|rank| {
                let mut rng = SplitMix::new(seed ^ u64::from(rank).wrapping_mul(0xD1B5_4A32_D192_ED03));
                let mut ids = Vec::with_capacity(self.tokens_per_rank as usize * k);
                for _ in 0..self.tokens_per_rank {
                    let first = ids.len();
                    while ids.len() - first < k {
                        let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
                        let g = cumulative.partition_point(|&c| c <= u).min(n - 1) as u32;
                        if !ids[first..].contains(&g) {
                            ids.push(g);
                        }
                    }
                }
                ids
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placing_fills_slots_in_token_order_and_drops_past_capacity() {
        let shape = MoeShape::tiny(2).with_natural_routing(4); // 4 experts, top-2, 16 tokens
        // Rank 0: every token picks experts 0 and 1 (16 each, 4 fit); rank 1: spread.
        let rank0: Vec<u32> = (0..16).flat_map(|_| [0, 1]).collect();
        let rank1: Vec<u32> = (0..16u32).flat_map(|t| [t % 4, (t + 1) % 4]).collect();
        let r = RoutedTokens::place(&shape, vec![rank0, rank1]).unwrap();
        assert_eq!(r.send_counts[0], vec![4, 4, 0, 0]);
        assert_eq!(&r.slot_of[0][..4], &[0, 4, 1, 5]);
        assert_eq!(r.slot_of[0][8], -1);
        assert_eq!(r.send_counts[1], vec![4, 4, 4, 4]);
        assert_eq!(r.dropped(), 24 + 16);
        // recv_counts[src = 1, e = 0] on rank 1 is what rank 1 sends to global expert 2.
        assert_eq!(r.count(&shape, 1, "recv_counts", 2), Some(4));
        assert_eq!(r.count(&shape, 0, "recv_counts", 1), Some(4));
        assert_eq!(r.count(&shape, 0, "send_counts", 2), Some(0));
        assert_eq!(r.count(&shape, 0, "xs", 0), None);
        assert!(RoutedTokens::place(&shape, vec![vec![9; 32], vec![0; 32]]).is_err());
    }

    #[test]
    fn natural_routings_are_deterministic_distinct_per_token_and_skewed() {
        let shape = MoeShape::deepseek_v3_natural(8, 4096);
        let a = shape.route(7);
        assert_eq!(a, shape.route(7));
        assert_ne!(a, shape.route(8));
        for ids in &a.experts {
            for token in ids.chunks(8) {
                let mut sorted = token.to_vec();
                sorted.sort_unstable();
                sorted.dedup();
                assert_eq!(sorted.len(), 8);
            }
        }
        let counts: Vec<i32> = a.send_counts.iter().flatten().copied().collect();
        let full = counts.iter().filter(|&&c| c as u64 == shape.slot_rows()).count();
        let light = counts.iter().filter(|&&c| c < 64).count();
        assert!(full > 0 && light > 0, "skew gives both full and light slots: {full} full, {light} light");
        assert!(a.dropped() > 0);
    }

    #[test]
    fn the_balanced_layout_fills_every_slot() {
        let shape = MoeShape::tiny(2);
        let r = shape.route(0);
        assert_eq!(r.dropped(), 0);
        assert!(r.send_counts.iter().flatten().all(|&c| c as u64 == shape.rows_per_source()));
        assert_eq!(r.slot_of[1], (0..32).collect::<Vec<i32>>());
    }
}
