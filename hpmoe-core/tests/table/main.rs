//! Tests of the schedule table through its public API: building, the binary blob, JSON and
//! the C header (compiled and run with g++ when present).

mod binary;
mod build;
mod c_header;
mod fixture;
mod json;
