//! Tests of the schedule table through its public API: building and the binary blob.

mod binary;
mod build;
mod fixture;
