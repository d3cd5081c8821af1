//! The host crate's integration tests, one module per area (one test binary for the crate: linking
//! one binary instead of one per file is most of what it saves the test build): the executor
//! (`exec`), the MoE layers and their backward against references, the DSL taskflows run on the
//! executor, the corruption campaign, random taskflows end to end, the network model, receiver
//! pacing and the simulator's properties.

mod accumulation;
mod backward;
mod corruption;
mod dsl_backward;
mod dsl_exec;
mod dsl_int8_training;
mod dsl_natural_training;
mod dsl_training;
mod end_to_end;
mod exec;
mod moe_model;
mod network;
mod pacing;
mod sim;
