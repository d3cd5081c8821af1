//! Certifying what a user holds: a taskflow with its table and flag plan, as values or as the
//! blobs a device is given. Both expand the taskflow themselves, then [`verify`].

use super::{CertDetail, CertError, Certificate, FlagSync, verify};
use crate::Compiled;
use crate::model::Taskflow;
use crate::schedule::FlagPlan;
use crate::schedule::flags::decode_plan;
use crate::table::ScheduleTable;

/// Certifies `table` as a schedule of `tf`, run with the flag plan `flags` (`None`: no hardware
/// flag, every dependency on a counter): expands `tf`, then [`verify`]. Any table, however it
/// was made; a table and plan from hpmoe ([`crate::plan`]'s `table` and `flags`, or a
/// `#[taskflow]` program's `table()` and `flag_plan()`) pass.
///
/// ```
/// use hpmoe_core::certify::{CertFault, certify};
/// use hpmoe_host::moe::MoeShape;
///
/// let tf = MoeShape::tiny(2).taskflow().unwrap();
/// let compiled = hpmoe_core::plan(&tf).unwrap();
/// let cert = certify(&tf, &compiled.table, Some(&compiled.flags)).unwrap();
/// assert_eq!(cert.dependencies, compiled.expanded.dag.edges() as u64);
/// // Without its flag plan, the dependencies the flag carries are not enforced.
/// let err = certify(&tf, &compiled.table, None).unwrap_err();
/// assert_eq!(err.fault, CertFault::Unenforced);
/// ```
///
/// # Errors
/// [`CertFault::Taskflow`](super::CertFault::Taskflow) if `tf` fails its checks, else the first fault [`verify`] finds.
pub fn certify(tf: &Taskflow, table: &ScheduleTable, flags: Option<&FlagPlan>) -> Result<Certificate, CertError> {
    let exp = crate::analyse(tf).map_err(|diagnostics| {
        let (taskflow, sources) = (tf.name.clone(), tf.sources.clone());
        CertError::new(vec![], CertDetail::Taskflow { taskflow, diagnostics, sources })
    })?;
    verify(tf, &exp, table.view(), flags.map(FlagSync::from))
}

/// Certifies what [`crate::plan`] (or [`crate::compile_with`]) made: `compiled`'s table with its
/// flag plan, against its own expansion of `tf` (no second expansion), so `compiled` must come
/// from `tf`. Where hpmoe checks a plan it has just made — `hpmoe_ascendc::Build`, the
/// `#[taskflow]` macro — a failure here is a bug in hpmoe. A table from anywhere else goes
/// through [`certify`], which expands the taskflow it is given.
///
/// # Errors
/// The first fault [`verify`] finds.
pub fn certify_compiled(tf: &Taskflow, compiled: &Compiled) -> Result<Certificate, CertError> {
    verify(tf, &compiled.expanded, compiled.table.view(), Some(FlagSync::from(&compiled.flags)))
}

/// [`certify`] for the blobs a kernel is given: the table (`NAME_schedule.bin`,
/// [`ScheduleTable::to_bytes`]) and, if the kernel uses the hardware flag, its flag plan
/// (`NAME_flags.bin`, which must name the table's checksum), decoded as the host decodes them.
///
/// # Errors
/// [`CertFault::Decode`](super::CertFault::Decode) if a blob does not decode, else as [`certify`].
pub fn certify_blobs(tf: &Taskflow, table: &[u8], flags: Option<&[u8]>) -> Result<Certificate, CertError> {
    let table = ScheduleTable::from_bytes(table).map_err(|e| CertError::new(vec![], CertDetail::TableBlob(e)))?;
    let plan = flags
        .map(|bytes| decode_plan(bytes, &table))
        .transpose()
        .map_err(|e| CertError::new(vec![], CertDetail::FlagBlob(e)))?;
    certify(tf, &table, plan.as_ref())
}
