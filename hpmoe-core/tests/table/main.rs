//! Tests of the schedule table through its public API: building, the binary blob and JSON.

mod binary;
mod build;
mod fixture;
mod json;
