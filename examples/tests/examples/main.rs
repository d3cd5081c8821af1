//! The examples crate's integration tests, one module per area (one test binary for the crate:
//! linking one binary instead of one per file is most of what it saves the test build): what the
//! build script wrote, the links between the Markdown documents, the DSL examples' tables and variants, the main job's host check and its
//! FAIL path, the shared-expert variant, and the kernels users take away run on the emulator.

mod build_script;
mod docs_links;
mod dsl_flagship_blobs;
mod dsl_training_tables;
mod dsl_variants;
mod emulator;
mod host_check;
mod host_check_fail;
mod shared_expert_host;
mod shared_expert_kernel;
mod shared_expert_overlap;
