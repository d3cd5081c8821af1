//! Tests of the schedule table through its public API: building, the binary blob, JSON,
//! the C header (compiled and run with g++ when present) and the Rust const form.

mod binary;
mod build;
mod c_header;
mod fixture;
mod json;
mod properties;
mod rust_consts;
