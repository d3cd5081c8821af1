//! The MoE-FFN layer of `hpmoe_host::moe` (dispatch → GMM1 → SwiGLU → GMM2 → combine →
//! weighted sum) at its tiny size, in the DSL: the layout of `examples/dsl/moe_ffn.rs`, which
//! the DeepSeek-V3 example includes too. The macro's IR must have the same structure as the
//! builder's, and the host form of every tile must call its ops on the regions the IR gives
//! for each instance on each rank.

use hpmoe_core::dsl::*;
use hpmoe_core::model::{Affine, RankSel, Taskflow};
use hpmoe_macros::taskflow;

#[taskflow(profile = small(2), ranks = 2)]
fn moe_ffn() {
    const T: u64 = 16;
    const HIDDEN: u64 = 32;
    const INTER: u64 = 16;
    const EXPERTS: u64 = 2 * RANKS;
    const TOP_K: u64 = 2;
    const B: u64 = 4;
    const N1: u64 = 16;
    const N2: u64 = 16;
    const SUM: u64 = 8;
    include!("../../../examples/dsl/moe_ffn.rs");
    include!("../../../examples/dsl/moe_ffn_tail.rs");
}

/// Records every op call of a tile.
struct Recorder {
    rank: u32,
    calls: Vec<(String, Vec<ConcreteRegion>)>,
}

impl TileContext for Recorder {
    fn rank(&self) -> u32 {
        self.rank
    }
    fn call(&mut self, op: &str, args: &[ConcreteRegion]) {
        self.calls.push((op.to_string(), args.to_vec()));
    }
    fn read_count(&mut self, _: &ConcreteRegion) -> i32 {
        panic!("the balanced layer has no `run_if_above` guards")
    }
}

/// The region the IR describes for one instance, evaluated from its affine expressions.
fn from_ir(tf: &Taskflow, r: &hpmoe_core::model::Region, coords: &[u64], rank: u32) -> (usize, u32, Vec<(u32, u32)>) {
    let eval = |e: &Affine| e.eval(coords, u64::from(rank)).unwrap() as u32;
    let tensor = tf.tensors.iter().position(|t| t.name == r.tensor).unwrap();
    let dest = match &r.rank {
        RankSel::Local => rank,
        RankSel::Remote(e) => eval(e),
    };
    let dims = tf.tensors[tensor]
        .shape
        .iter()
        .enumerate()
        .map(|(k, &extent)| r.dims.get(k).map_or((0, extent as u32), |d| (eval(&d.start), d.len as u32)))
        .collect();
    (tensor, dest, dims)
}

fn main() {
    let program = moe_ffn();
    let tf = program.taskflow().unwrap();
    let built = hpmoe_host::moe::MoeShape::tiny(2).taskflow().unwrap();
    assert!(tf.same_structure(&built), "the DSL layer differs from MoeShape::tiny(2)");

    let table = program.table().unwrap();
    let instances = hpmoe_host::moe::MoeShape::tiny(2).instances_per_rank() * 2;
    assert_eq!(table.entries().len() as u64, instances);
    // One plan per taskflow: the same schedule as planning the builder's taskflow (the schedule
    // ignores names), with the same flag plan.
    let again = hpmoe_core::plan(&built).unwrap();
    assert_eq!(table.entries(), again.table.entries());
    assert_eq!(program.flag_plan().unwrap().set_after, again.flags.set_after);

    let mut calls = 0;
    for rank in 0..2 {
        for (f, family) in tf.families.iter().enumerate() {
            let extents: Vec<u64> = family.grid.iter().map(|g| g.extent).collect();
            let count: u64 = extents.iter().product();
            for idx in 0..count {
                let mut coords = vec![0u64; extents.len()];
                let mut rest = idx;
                for (c, e) in coords.iter_mut().zip(&extents).rev() {
                    *c = rest % e;
                    rest /= e;
                }
                let mut rec = Recorder { rank, calls: Vec::new() };
                program.run_tile(&mut rec, f, &coords).unwrap();
                assert_eq!(rec.calls.len(), family.body.len());
                for ((op, regions), call) in rec.calls.iter().zip(&family.body) {
                    assert_eq!(op, &call.op);
                    for (got, want) in regions.iter().zip(&call.args) {
                        let (tensor, dest, dims) = from_ir(&tf, want, &coords, rank);
                        assert_eq!((got.tensor, got.rank), (tensor, dest));
                        let got_dims: Vec<(u32, u32)> =
                            (0..got.extent.dims as usize).map(|k| (got.extent.start[k], got.extent.len[k])).collect();
                        assert_eq!(got_dims, dims, "{} {coords:?} on rank {rank}", family.name);
                    }
                    calls += 1;
                }
            }
        }
    }
    assert!(calls > 0);
    // Coordinates outside the grid are refused, not evaluated.
    let mut rec = Recorder { rank: 0, calls: Vec::new() };
    assert!(program.run_tile(&mut rec, 5, &[2]).is_err());
    assert!(program.run_tile(&mut rec, 9, &[0]).is_err());
}
