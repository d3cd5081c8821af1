//! Properties over random small schedules: every form round-trips, output is deterministic,
//! and no tampered blob makes the decoder panic or accept a non-canonical blob.

use super::fixture::{Inputs, placement_of, reseal, sync_of};
use hpmoe_core::expand::{Expanded, InstanceSpace, Work};
use hpmoe_core::graph::Dag;
use hpmoe_core::ids::CounterId;
use hpmoe_core::model::{CoreKind, MachineProfile};
use hpmoe_core::schedule::{Signal, Wait};
use hpmoe_core::table::ScheduleTable;
use proptest::prelude::*;
use smallvec::SmallVec;

/// A small deterministic generator, so one proptest seed gives one whole schedule.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u32) -> u32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % u64::from(n.max(1))) as u32
    }
}

/// A random valid schedule: random families and grids, every instance of every rank on a
/// random core of its kind of its own rank in random order, random waits, and for every
/// wait as many signals from random nodes as its target.
fn random_inputs(ranks: u32, aic: u32, aiv_per_aic: u32, grids: &[(bool, Vec<u32>)], seed: u64) -> Inputs {
    let mut rng = Rng(seed | 1);
    let profile = MachineProfile { name: "random".into(), aic_per_rank: aic, aiv_per_aic, ranks };
    let extents = grids.iter().map(|(_, g)| g.iter().copied().collect::<SmallVec<[u32; 4]>>());
    let space = InstanceSpace::new(ranks, extents);
    let family_core: Vec<CoreKind> =
        grids.iter().map(|(aic, _)| if *aic { CoreKind::Aic } else { CoreKind::Aiv }).collect();
    let nodes = space.len();
    let cores_per_rank = profile.cores_per_rank();
    let mut queues = vec![Vec::new(); profile.total_cores() as usize];
    for node in space.node_ids() {
        let cores = profile.cores_of(family_core[space.family_of(node)]);
        let core = space.rank_of(node).raw() * cores_per_rank + cores.start + rng.below(cores.len() as u32);
        let row = &mut queues[core as usize];
        let at = rng.below(row.len() as u32 + 1) as usize;
        row.insert(at, node.raw());
    }
    let mut counters = vec![0u32; ranks as usize];
    let mut waits = vec![None; nodes];
    let mut signals = vec![Vec::new(); nodes];
    for node in space.node_ids() {
        if rng.below(2) == 0 {
            continue;
        }
        let rank = space.rank_of(node);
        let counter = counters[rank.index()];
        counters[rank.index()] += 1;
        let target = rng.below(4);
        let counter = CounterId::new(counter);
        waits[node.index()] = Some(Wait { counter, target });
        for _ in 0..target {
            signals[rng.below(nodes as u32) as usize].push(Signal { rank, counter });
        }
    }
    let exp = Expanded {
        space,
        dag: Dag::from_pairs(nodes, &[]),
        family_core,
        family_work: vec![Work::default(); grids.len()],
        rotation: vec![0; nodes].into(),
    };
    Inputs {
        profile,
        family_names: (0..grids.len()).map(|i| format!("family_{i}")).collect(),
        placement: placement_of(nodes, queues),
        sync: sync_of(waits, signals, counters),
        exp,
    }
}

fn grids() -> impl Strategy<Value = Vec<(bool, Vec<u32>)>> {
    prop::collection::vec((any::<bool>(), prop::collection::vec(1u32..4, 0..3)), 1..4)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn every_form_round_trips(ranks in 1u32..4, aic in 1u32..3, aiv in 1u32..3, grids in grids(), seed in any::<u64>()) {
        let inputs = random_inputs(ranks, aic, aiv, &grids, seed);
        let table = inputs.build("random");
        let bytes = table.to_bytes();
        prop_assert_eq!(bytes.len(), table.total_bytes());
        prop_assert_eq!(table.checksum(), u32::from_le_bytes(bytes[12..16].try_into().unwrap()));
        prop_assert_eq!(ScheduleTable::from_bytes(&bytes), Ok(table.clone()));
        prop_assert_eq!(ScheduleTable::from_json(&table.to_json()), Ok(table.clone()));
        prop_assert_eq!(&table.view().to_owned(), &table);
        let again = random_inputs(ranks, aic, aiv, &grids, seed).build("random");
        prop_assert_eq!(again.to_bytes(), bytes);
        prop_assert_eq!(again.to_json(), table.to_json());
        prop_assert_eq!(again.c_header("G"), table.c_header("G"));
        prop_assert_eq!(again.to_rust_source("T"), table.to_rust_source("T"));
    }

    #[test]
    fn tampered_blobs_never_panic_and_only_canonical_ones_decode(
        grids in grids(),
        seed in any::<u64>(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
    ) {
        let table = random_inputs(2, 1, 2, &grids, seed).build("random");
        let mut blob = table.to_bytes();
        for (at, value) in edits {
            let i = at.index(blob.len());
            blob[i] = value;
        }
        reseal(&mut blob);
        if let Ok(decoded) = ScheduleTable::from_bytes(&blob) {
            prop_assert_eq!(decoded.to_bytes(), blob);
        }
    }
}
