//! The device runtime headers this crate ships (`include/hpmoe/*.h`), which every generated
//! kernel includes as `hpmoe/runtime.h`.
//!
//! They are embedded in the crate, so a build script writes them next to the kernels it
//! generates ([`write_runtime`]) and a kernel compiles with `-I <dir>/include`. Each header's
//! first comment says what it does; `runtime.h` lists them.

use crate::write::{WriteOutcome, write_if_changed};
use std::io;
use std::path::Path;

/// `(path under include/, contents)` of every shipped header, in a fixed order.
pub const RUNTIME_HEADERS: &[(&str, &str)] = &[
    ("hpmoe/abi.h", include_str!("../include/hpmoe/abi.h")),
    ("hpmoe/comm.h", include_str!("../include/hpmoe/comm.h")),
    ("hpmoe/config.h", include_str!("../include/hpmoe/config.h")),
    ("hpmoe/context.h", include_str!("../include/hpmoe/context.h")),
    ("hpmoe/counters.h", include_str!("../include/hpmoe/counters.h")),
    ("hpmoe/crc32.h", include_str!("../include/hpmoe/crc32.h")),
    ("hpmoe/cube_ops.h", include_str!("../include/hpmoe/cube_ops.h")),
    ("hpmoe/diag.h", include_str!("../include/hpmoe/diag.h")),
    ("hpmoe/flag_plan.h", include_str!("../include/hpmoe/flag_plan.h")),
    ("hpmoe/flags.h", include_str!("../include/hpmoe/flags.h")),
    ("hpmoe/runtime.h", include_str!("../include/hpmoe/runtime.h")),
    ("hpmoe/table.h", include_str!("../include/hpmoe/table.h")),
    ("hpmoe/vector_backward_ops.h", include_str!("../include/hpmoe/vector_backward_ops.h")),
    ("hpmoe/vector_ops.h", include_str!("../include/hpmoe/vector_ops.h")),
    ("hpmoe/view.h", include_str!("../include/hpmoe/view.h")),
    ("hpmoe/worker.h", include_str!("../include/hpmoe/worker.h")),
];

/// `(path under include/, contents)` of the host-side headers: what a kernel's generated launcher
/// (`NAME_launch.cpp`) includes, for the NPU and for the CPU emulator alike. Not device code.
pub const HOST_HEADERS: &[(&str, &str)] =
    &[("hpmoe/host/launcher.h", include_str!("../include/hpmoe/host/launcher.h"))];

/// Writes the runtime headers and the host headers under `include_dir` (as
/// `include_dir/hpmoe/*.h` and `include_dir/hpmoe/host/*.h`), touching only files whose content
/// differs. Returns what happened to each file, in [`RUNTIME_HEADERS`] then [`HOST_HEADERS`] order.
pub fn write_runtime(include_dir: &Path) -> io::Result<Vec<WriteOutcome>> {
    RUNTIME_HEADERS
        .iter()
        .chain(HOST_HEADERS)
        .map(|(name, text)| write_if_changed(&include_dir.join(name), text.as_bytes()))
        .collect()
}

/// The declaration-only AscendC + SHMEM headers (`devkit-decl/`) of this crate's sources, for
/// checking generated kernels with a host compiler where no CANN toolkit is installed (see
/// [`crate::check`]). Not for building kernels.
pub fn devkit_decl_dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/devkit-decl"))
}

/// The CPU emulator of the AscendC + SHMEM device API (`emulator/`): `include/` replaces the
/// toolkit's headers for a kernel compiled with a host C++ compiler, `src/*.cpp` is the machine
/// to link with it (see `emulator/README.md`). For running kernels on the CPU and checking them.
pub fn emulator_dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/emulator"))
}

/// The runtime headers of this crate's sources (`include/`), the same files as
/// [`RUNTIME_HEADERS`].
pub fn source_include_dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/include"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_header_is_listed_and_identical() {
        let listed_in = |dir: &str| {
            let mut names: Vec<String> = std::fs::read_dir(source_include_dir().join(dir))
                .unwrap()
                .map(|e| e.unwrap())
                .filter(|e| e.file_type().unwrap().is_file())
                .map(|e| format!("{dir}/{}", e.file_name().to_string_lossy()))
                .collect();
            names.sort();
            names
        };
        let host: Vec<&str> = HOST_HEADERS.iter().map(|h| h.0).collect();
        assert_eq!(listed_in("hpmoe/host"), host, "HOST_HEADERS must list include/hpmoe/host/*.h, sorted");
        let mut on_disk = listed_in("hpmoe");
        on_disk.sort();
        let listed: Vec<&str> = RUNTIME_HEADERS.iter().map(|h| h.0).collect();
        assert_eq!(on_disk, listed, "RUNTIME_HEADERS must list include/hpmoe/*.h, sorted");
        let runtime = RUNTIME_HEADERS.iter().find(|h| h.0 == "hpmoe/runtime.h").unwrap().1;
        for (name, _) in RUNTIME_HEADERS.iter().filter(|h| h.0 != "hpmoe/runtime.h") {
            let file = name.trim_start_matches("hpmoe/");
            assert!(runtime.contains(&format!("#include \"{file}\"")), "runtime.h includes {file}");
        }
    }
}
