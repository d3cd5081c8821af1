//! AscendC backend of hpmoe.
//!
//! Will emit, per taskflow, one mixed AIC/AIV kernel (`NAME.cpp`), its schedule header and
//! table blob, and offer a `build.rs` API. Not written yet (see the AscendC backend issue);
//! the schedule table it will read is `hpmoe_core::table::ScheduleTable`, whose binary form
//! and C header already exist.
