//! Natural routing in miniature: guarded tiles (`run_if_above`) and a gather. The IR carries
//! the guards; the host form of a guarded tile reads its count through the context and calls
//! no op unless the count exceeds the bound; the gather is an ordinary op call; the kernel
//! reads each guard's count before the tile's body.

use hpmoe_core::dsl::*;
use hpmoe_core::model::Affine;
use hpmoe_macros::taskflow;

#[taskflow(profile = small(1), ranks = 2)]
fn natural() {
    const C: u64 = 8; // capacity: rows one rank may send another
    const B: u64 = 4; // row block
    const H: u64 = 16;
    const T: u64 = 8; // tokens per rank
    const K: u64 = 2; // choices per token
    const SUM: u64 = 4;

    const SEND_COUNTS: Tensor<I32> = input([RANKS]);
    const XS: Tensor<Bf16> = input([RANKS * C, H]);
    const SLOT_OF: Tensor<I32> = input([T, K]);
    const WEIGHTS: Tensor<F32> = input([T, K]);
    const RECV_COUNTS: Tensor<I32> = symmetric([RANKS]);
    const RECV: Tensor<Bf16> = symmetric([RANKS * C, H]);
    const BACK: Tensor<Bf16> = symmetric([RANKS * C, H]);
    const OUT: Tensor<F32> = output([T, H]);

    #[tile(aiv, grid(dst in 0..RANKS))]
    fn announce(dst: Idx) {
        put(SEND_COUNTS.at(dst), RECV_COUNTS.on(dst).at(RANK));
    }

    /// Sends only the blocks holding rows.
    #[tile(aiv, grid(dst in 0..RANKS, b in 0..C / B))]
    fn dispatch(dst: Idx, b: Idx) {
        run_if_above(SEND_COUNTS.at(dst), b * B);
        put(XS.slice(dst * C + b * B, B), RECV.on(dst).slice(RANK * C + b * B, B));
    }

    /// Sends the rows back; waits for the count `announce` put here.
    #[tile(aiv, grid(src in 0..RANKS, b in 0..C / B))]
    fn combine(src: Idx, b: Idx) {
        let first = b * B;
        run_if_above(RECV_COUNTS.at(src), first);
        put(RECV.slice(src * C + first, B), BACK.on(src).slice(RANK * C + first, B));
    }

    #[tile(aiv, grid(t in 0..T / SUM))]
    fn weighted_sum(t: Idx) {
        zero(OUT.slice(t * SUM, SUM));
        gather_weighted_accumulate(BACK, SLOT_OF.slice(t * SUM, SUM), WEIGHTS.slice(t * SUM, SUM), OUT.slice(t * SUM, SUM));
    }
}

/// Records op calls and count reads, answering every read with `count`.
struct Recorder {
    rank: u32,
    count: i32,
    reads: Vec<ConcreteRegion>,
    calls: Vec<String>,
}

impl TileContext for Recorder {
    fn rank(&self) -> u32 {
        self.rank
    }
    fn call(&mut self, op: &str, _: &[ConcreteRegion]) {
        self.calls.push(op.to_string());
    }
    fn read_count(&mut self, count: &ConcreteRegion) -> i32 {
        self.reads.push(*count);
        self.count
    }
}

fn run(family: usize, coords: &[u64], rank: u32, count: i32) -> Recorder {
    let mut rec = Recorder { rank, count, reads: Vec::new(), calls: Vec::new() };
    natural().run_tile(&mut rec, family, coords).unwrap();
    rec
}

fn main() {
    let program = natural();
    let tf = program.taskflow().unwrap();
    let guards: Vec<Option<(&str, Affine)>> =
        tf.families.iter().map(|f| f.guard.as_ref().map(|g| (g.count.tensor.as_str(), g.above.clone()))).collect();
    assert_eq!(
        guards,
        [None, Some(("SEND_COUNTS", Affine::index(1) * 4)), Some(("RECV_COUNTS", Affine::index(1) * 4)), None]
    );
    assert_eq!(tf.families[3].body[1].op, "gather_weighted_accumulate");
    assert_eq!(program.table().unwrap().entries().len(), (2 + 4 + 4 + 2) * 2);

    // dispatch(dst = 1, b = 1) on rank 0: rows 4.. of the block; SEND_COUNTS[1] must exceed 4.
    let skipped = run(1, &[1, 1], 0, 4);
    assert!(skipped.calls.is_empty());
    assert_eq!(skipped.reads.len(), 1);
    let read = skipped.reads[0];
    assert_eq!((read.tensor, read.rank, read.extent.dims), (0, 0, 1));
    assert_eq!((read.extent.start[0], read.extent.len[0]), (1, 1));
    assert_eq!(run(1, &[1, 1], 0, 5).calls, ["put"]);
    // combine(src = 1, b = 0) on rank 1 reads RECV_COUNTS[1] of its own rank.
    let combine = run(2, &[1, 0], 1, 1);
    assert_eq!(combine.calls, ["put"]);
    assert_eq!((combine.reads[0].tensor, combine.reads[0].rank, combine.reads[0].extent.start[0]), (4, 1, 1));
    // An unguarded tile reads no count.
    let sum = run(3, &[1], 0, 0);
    assert!(sum.reads.is_empty());
    assert_eq!(sum.calls, ["zero", "gather_weighted_accumulate"]);

    // The kernel reads the count before the body, and gathers on the device.
    let kernel = program.kernel_source.unwrap();
    assert!(kernel.contains("if (hpmoe::ReadCount(args.SEND_COUNTS, dst) > 4 * b) {"), "{kernel}");
    assert!(kernel.contains("hpmoe::GatherWeightedAccumulate(vec,"), "{kernel}");
}
