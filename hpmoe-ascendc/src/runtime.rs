//! Paths of the header folders of this crate's sources.

use std::path::Path;

/// The declaration-only AscendC + SHMEM headers (`devkit-decl/`) of this crate's sources, for
/// checking generated kernels with a host compiler where no CANN toolkit is installed (see
/// [`crate::check`]). Not for building kernels.
pub fn devkit_decl_dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/devkit-decl"))
}

/// The runtime headers of this crate's sources (`include/`).
pub fn source_include_dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/include"))
}
