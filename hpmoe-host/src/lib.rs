//! # hpmoe-host
//!
//! What runs on the host the schedules [`hpmoe_core`] compiles: the executor, the simulator,
//! the traces of simulated runs, the MoE layers, and the reference implementations a schedule is
//! checked against. The compiler crate (IR, DSL front-end, checks, expansion, scheduler, tables,
//! cost model, certificate) knows nothing of this crate, so the `#[taskflow]` proc-macro, which
//! depends on the compiler alone, never builds it; Cargo enforces that seam.
//!
//! - [`exec`]: the host executor — runs a schedule table on CPU threads with real data
//!   ([`exec::Executor`]), and the one-thread [`exec::SequentialRunner`] it must match bitwise.
//! - [`sim`]: discrete-event simulation of a schedule table, the kernel-by-kernel baseline of the
//!   same work and the lower bound both are measured against.
//! - [`trace`]: Chrome/Perfetto JSON and SVG timelines of simulated runs.
//! - [`moe`]: the DeepSeek-style MoE-FFN taskflow at any size, balanced or naturally routed.
//! - [`rng`]: the one deterministic generator every test and benchmark datum comes from.
//! - `testing` (feature `testing`): the data and op bodies that run hpmoe-core's random
//!   taskflows (`hpmoe_core::testing`).
//!
//! Data flows from hpmoe-core's [`hpmoe_core::Compiled`] (a table and its flag plan) into either
//! side: [`exec`] runs it on [`exec::Inputs`] and returns an [`exec::Snapshot`] of every tensor,
//! which the tests compare bitwise with [`exec::moe_reference`] (or a user's reference); [`sim`]
//! prices it with hpmoe-core's cost model into a [`sim::SimResult`], which [`trace`] draws.
//! [`moe`] only builds taskflows (and their routings); it runs nothing itself.
//!
//! ```
//! use hpmoe_core::cost::{CostProfile, TaskflowCost};
//! use hpmoe_host::exec::moe_reference::{moe_inputs, moe_reference};
//! use hpmoe_host::exec::{Executor, OpImpls, RunOptions};
//! use hpmoe_host::moe::MoeShape;
//!
//! let shape = MoeShape::tiny(2);
//! let tf = shape.taskflow().unwrap();
//! let cost = TaskflowCost::new(&tf, CostProfile::ascend_a3_die());
//! let compiled = hpmoe_core::compile(&tf, &cost).unwrap();
//! // Simulated against its lower bound ...
//! let cmp = hpmoe_host::sim::compare(&compiled, &tf.profile, &cost).unwrap();
//! assert!(cmp.bound.ns() <= cmp.taskflow.makespan_ns);
//! // ... and run on CPU threads with real data, bitwise equal to the loop-nest reference.
//! let inputs = moe_inputs(&shape, 7);
//! let exec = Executor::for_compiled(&tf, &compiled, &OpImpls::builtin()).unwrap();
//! let run = exec.run(&inputs, &RunOptions::default()).unwrap();
//! assert_eq!(run.snapshot.get(1, "out"), Some(&moe_reference(&shape, &inputs).unwrap()[1]));
//! ```

#![warn(missing_docs)]

pub mod exec;
pub mod moe;
pub mod rng;
pub mod sim;
#[cfg(feature = "testing")]
pub mod testing;
pub mod trace;
