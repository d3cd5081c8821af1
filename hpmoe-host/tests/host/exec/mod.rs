//! Tests of the host executor through its public API: reference ops, the MoE layer against
//! a naive loop-nest reference, random taskflows against the sequential runner, and fault
//! injection (dropped signals, panicking and hanging tiles), and the certificate check every
//! constructor runs first.

mod certificate;
mod chain;
mod faults;
mod flags;
mod guards;
mod moe;
mod ops;
mod ops_backward;
mod properties;
