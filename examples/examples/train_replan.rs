//! What a *static* schedule of the balanced DeepSeek-V3 backward or training step can reach
//! once the scheduler knows how long the simulated run's puts really take (issue 12 item 5).
//! An experiment with the simulator in the loop, not a path of the main job: the scheduler's
//! network model is first-come bookings on each rank's lanes and server tier, the simulator's
//! a max-min share of injection, ejection and the tier, so the plan is optimistic and the AICs
//! wait for rows the plan had landed. Here the layer is planned as the main job plans it, run,
//! and then planned again with every tile at the time it held its core in the last run (the
//! server tier dropped from the plan's model: the measured put times already hold it), run
//! again, and so on. Every schedule it tries is one a static table could hold (per-core
//! queues, proved deadlock-free, counters planned for them).
//!
//! ```sh
//! cargo run --release -p hpmoe-examples --example train_replan [-- --ep N] [--pass P]
//!                                                              [--replans N] [--tokens N] [--profile P]
//! ```
//!
//! It prints, per step, the run's makespan over the bound and the scheduler's plan of it.

use hpmoe_core::cost::TaskflowCost;
use hpmoe_core::expand::Work;
use hpmoe_core::ids::NodeId;
use hpmoe_core::model::CoreKind;
use hpmoe_core::schedule::{CostModel, NetworkLimits, PutShape};
use hpmoe_examples::ExampleError;
use hpmoe_examples::cli::Options;
use hpmoe_host::moe::{MoeShape, Pass};
use hpmoe_host::sim::{self, SimResult};

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), ExampleError> {
    let options = ["--ep", "--tokens", "--profile", "--pass", "--replans"];
    let opts = Options::from_env(&options, &options.join(", "))?;
    let ep = opts.number_u32("--ep", 8)?;
    let tokens = opts.number("--tokens", 4096)?;
    let profile = opts.profile()?;
    let pass = opts.pass()?;
    let shape = MoeShape::deepseek_v3(ep, tokens);
    let tf = if pass == Pass::Forward { shape.taskflow() } else { shape.with_whole_expert_wgrad().pass_taskflow(pass) }
        .map_err(ExampleError::Shape)?;
    let cost = TaskflowCost::new(&tf, profile);
    let simulate_error = |error| ExampleError::Simulate { taskflow: tf.name.clone(), error };
    let start = hpmoe_core::compile(&tf, &cost).map_err(|d| ExampleError::plan(&tf, d))?;
    let bound = sim::lower_bound(&start.expanded, &tf.profile, &cost).map_err(simulate_error)?.ns();
    let report = |what: &str, plan_ns: u64, run: &SimResult| {
        println!(
            "{what:<28} run {:>9.1} us {:.4}x bound | plan {:>9.1} us",
            run.makespan_ns as f64 / 1e3,
            run.makespan_ns as f64 / bound as f64,
            plan_ns as f64 / 1e3
        );
    };
    println!("EP {ep}, {}: bound {:.1} us", pass.name(), bound as f64 / 1e3);
    let mut measured = sim::simulate(&start, &cost).map_err(simulate_error)?;
    report("main job's schedule", start.placement.makespan_ns, &measured);
    let mut best = measured.makespan_ns;
    for k in 0..opts.number("--replans", 4)? {
        let model = Measured::of(&cost, &measured);
        let c = hpmoe_core::compile(&tf, &model).map_err(|d| ExampleError::plan(&tf, d))?;
        measured = sim::simulate(&c, &cost).map_err(simulate_error)?;
        report(&format!("re-planned on run times ({})", k + 1), c.placement.makespan_ns, &measured);
        best = best.min(measured.makespan_ns);
    }
    println!("best {:.1} us, {:.4}x bound", best as f64 / 1e3, best as f64 / bound as f64);
    Ok(())
}

/// The run's cost model, but every tile planned at the time it held its core in a simulated
/// run (exec, put and signals), and no server tier (the measured put times hold it).
struct Measured {
    run_cost: TaskflowCost,
    ns: Vec<u64>,
}

impl Measured {
    fn of(run_cost: &TaskflowCost, run: &SimResult) -> Self {
        Measured { run_cost: run_cost.clone(), ns: run.tiles.iter().map(|t| t.done_ns - t.start_ns).collect() }
    }
}

impl CostModel for Measured {
    fn tile_ns(&self, core: CoreKind, work: &Work) -> u64 {
        self.run_cost.tile_ns(core, work)
    }
    fn family_tile_ns(&self, family: usize, core: CoreKind, work: &Work) -> u64 {
        self.run_cost.family_tile_ns(family, core, work)
    }
    fn node_tile_ns(&self, node: NodeId, _family_ns: u64) -> u64 {
        self.ns[node.index()]
    }
    fn edge_ns(&self, cross_rank: bool) -> u64 {
        self.run_cost.edge_ns(cross_rank)
    }
    fn link_bytes_per_s(&self) -> Option<u64> {
        self.run_cost.link_bytes_per_s()
    }
    fn ranks_per_server(&self) -> Option<u32> {
        self.run_cost.ranks_per_server()
    }
    fn network_limits(&self) -> Option<NetworkLimits> {
        None
    }
    fn node_put_bytes(&self, node: NodeId, bytes: u64) -> u64 {
        self.run_cost.node_put_bytes(node, bytes)
    }
    fn family_put(&self, family: usize, core: CoreKind, work: &Work) -> PutShape {
        self.run_cost.family_put(family, core, work)
    }
}
