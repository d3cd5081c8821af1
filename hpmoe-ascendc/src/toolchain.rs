//! The CANN toolkit: finding its compiler and the command that compiles a generated kernel for
//! Ascend 910B / A3 (`--npu-arch=dav-2201`).
//!
//! **Untested against a real toolkit**: no toolkit is available where this crate is developed.
//! The compiler's location and flags follow the toolkit's documentation (the `bisheng` compiler
//! under `$ASCEND_HOME_PATH/compiler/ccec_compiler/bin`, Ascend C sources compiled with
//! `-x asc --npu-arch=dav-2201`); the tests exercise the command line and the failure path with a
//! stand-in compiler only.

use crate::error::ToolkitError;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The NPU architecture of Ascend 910B and A3 (`dav-c220`, numbered 2201 by the compiler).
pub const NPU_ARCH: &str = "dav-2201";
// Defined beside the error whose message names it, so that `error` needs nothing of this module.
pub use crate::error::ASCEND_HOME_ENV;
/// Environment variable naming the CANN SHMEM library's root (its `include/` holds `shmem.h`).
pub const SHMEM_HOME_ENV: &str = "SHMEM_HOME_PATH";

/// Where the compiler sits under a toolkit root, in the order they are tried.
const COMPILER_CANDIDATES: [&str; 3] =
    ["compiler/ccec_compiler/bin/bisheng", "bin/bisheng", "tools/bisheng/bin/bisheng"];
/// AscendC include folders of older toolkit layouts, added when present (newer compilers find
/// them from `-x asc`).
const INCLUDE_CANDIDATES: [&str; 5] = [
    "include",
    "compiler/tikcpp",
    "compiler/tikcpp/tikcfw",
    "compiler/tikcpp/tikcfw/impl",
    "compiler/tikcpp/tikcfw/interface",
];

/// A CANN toolkit on this machine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Toolkit {
    /// The toolkit's root folder (`ASCEND_HOME_PATH`).
    pub root: PathBuf,
    /// The Ascend C compiler under it (the first of the known locations that exists).
    pub compiler: PathBuf,
    /// The SHMEM library's include folder, if known.
    pub shmem_include: Option<PathBuf>,
}

impl Toolkit {
    /// The toolkit `ASCEND_HOME_PATH` names: `None` when the variable is unset or empty, an
    /// error when it is set but holds no compiler.
    pub fn from_env() -> Option<Result<Toolkit, ToolkitError>> {
        let root = std::env::var_os(ASCEND_HOME_ENV).filter(|v| !v.is_empty())?;
        let shmem =
            std::env::var_os(SHMEM_HOME_ENV).filter(|v| !v.is_empty()).map(|p| PathBuf::from(p).join("include"));
        Some(Toolkit::at(Path::new(&root)).map(|t| Toolkit { shmem_include: shmem, ..t }))
    }

    /// The toolkit rooted at `root`.
    pub fn at(root: &Path) -> Result<Toolkit, ToolkitError> {
        COMPILER_CANDIDATES
            .iter()
            .map(|c| root.join(c))
            .find(|p| p.is_file())
            .map(|compiler| Toolkit { root: root.to_path_buf(), compiler, shmem_include: None })
            .ok_or_else(|| ToolkitError::NoCompiler {
                root: root.to_path_buf(),
                looked_for: COMPILER_CANDIDATES.iter().map(|c| c.to_string()).collect(),
            })
    }

    /// The command compiling `source` (a generated `NAME.cpp` in `kernel_dir`, with the runtime
    /// headers in `kernel_dir/include`) to the object `object`. `include_dirs` are added after
    /// the kernel's own (user op headers).
    pub fn compile_command(&self, source: &Path, object: &Path, include_dirs: &[PathBuf]) -> Command {
        let mut cmd = Command::new(&self.compiler);
        cmd.args(["-x", "asc", &format!("--npu-arch={NPU_ARCH}"), "-std=c++17", "-O2", "-c"]);
        cmd.arg(source).arg("-o").arg(object);
        let kernel_dir = source.parent().unwrap_or(Path::new("."));
        cmd.arg("-I").arg(kernel_dir);
        cmd.arg("-I").arg(kernel_dir.join("include"));
        for sub in INCLUDE_CANDIDATES {
            let dir = self.root.join(sub);
            if dir.is_dir() {
                cmd.arg("-I").arg(dir);
            }
        }
        if let Some(dir) = &self.shmem_include {
            cmd.arg("-I").arg(dir);
        }
        for dir in include_dirs {
            cmd.arg("-I").arg(dir);
        }
        cmd
    }

    /// Compiles `source` to `object`; a failure holds the compiler's output.
    pub fn compile(&self, source: &Path, object: &Path, include_dirs: &[PathBuf]) -> Result<(), ToolkitError> {
        let mut cmd = self.compile_command(source, object, include_dirs);
        let out = cmd
            .output()
            .map_err(|e| ToolkitError::CannotRun { compiler: self.compiler.clone(), reason: e.to_string() })?;
        if out.status.success() {
            Ok(())
        } else {
            Err(ToolkitError::CompileFailed {
                compiler: self.compiler.clone(),
                source: source.to_path_buf(),
                output: format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_compiler_and_builds_the_command() {
        let root = std::env::temp_dir().join(format!("hpmoe-toolkit-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let none = Toolkit::at(&root).unwrap_err();
        assert!(matches!(&none, ToolkitError::NoCompiler { root: r, .. } if *r == root), "{none}");
        assert!(none.to_string().contains("holds no Ascend C compiler"), "{none}");
        let bin = root.join("compiler/ccec_compiler/bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::create_dir_all(root.join("compiler/tikcpp/tikcfw")).unwrap();
        std::fs::write(bin.join("bisheng"), "").unwrap();
        let mut tk = Toolkit::at(&root).unwrap();
        assert_eq!(tk.compiler, bin.join("bisheng"));
        tk.shmem_include = Some(PathBuf::from("/opt/shmem/include"));
        let cmd = tk.compile_command(Path::new("/k/moe.cpp"), Path::new("/k/moe.o"), &[PathBuf::from("/u")]);
        let args: Vec<String> = cmd.get_args().map(|a| a.to_string_lossy().into_owned()).collect();
        // Both folders exist: tikcpp/tikcfw and its parent.
        let tikcpp = root.join("compiler/tikcpp").display().to_string();
        let tik = root.join("compiler/tikcpp/tikcfw").display().to_string();
        assert_eq!(
            args,
            [
                "-x",
                "asc",
                "--npu-arch=dav-2201",
                "-std=c++17",
                "-O2",
                "-c",
                "/k/moe.cpp",
                "-o",
                "/k/moe.o",
                "-I",
                "/k",
                "-I",
                "/k/include",
                "-I",
                &tikcpp,
                "-I",
                &tik,
                "-I",
                "/opt/shmem/include",
                "-I",
                "/u"
            ]
        );
        let _ = std::fs::remove_dir_all(&root);
    }
}
